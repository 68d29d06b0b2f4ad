/**
 * POST /api/v2/runs/{runId}/rerun through the gateway, with real API keys and real runs: a re-run
 * with the original input (of a sync and of an async original), with an edited input, and from a
 * block — where a local counter server proves the upstream API block ran once across the original
 * and the re-run while the downstream one ran again, on the version the original ran although a
 * newer one is active. Then the link (`rerunOf`) in the run's detail and list entry, who may re-run
 * what (another workspace's run is 404), the refusals (a run in flight, a manual run, its input,
 * block outcomes or version gone), bad bodies (400, never a 500), and the curl examples of
 * docs/workflow-runs.md run as written. Every answer is checked against docs/openapi.yaml.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../platform/config/stack-config.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { env } from "../helpers/env.ts";
import { startMisbehavingServer, type MisbehavingServer } from "../stand-ins/misbehaving-http.ts";
import { specViolations } from "../gamification/openapi.ts";
import { type Answer, apiKey, call, deployedWorkflow, eventually, execute, expectDocumented } from "./execute-api.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { liftLimits, openDatabase, recordRuns } from "./logs-helpers.ts";

/** POST /api/v2/runs/{runId}/rerun with `key`, the answer checked against docs/openapi.yaml. */
async function rerun(key: string | null, runId: string, body?: unknown, raw?: string): Promise<Answer> {
  const headers: Record<string, string> = key === null ? {} : { "X-API-Key": key };
  if (raw !== undefined) headers["content-type"] = "application/json";
  const answer = await call("POST", `/api/v2/runs/${runId}/rerun`, { headers, body, raw });
  expectDocumented("POST", "/api/v2/runs/{runId}/rerun", answer);
  return answer;
}

/** GET /api/v2/runs/{runId}'s data. */
async function detail(key: string, runId: string): Promise<Record<string, unknown>> {
  const answer = await call("GET", `/api/v2/runs/${runId}`, { headers: { "X-API-Key": key } });
  expectDocumented("GET", "/api/v2/runs/{runId}", answer);
  expect(answer.status).toBe(200);
  return answer.body.data as Record<string, unknown>;
}

describe("re-running runs", () => {
  let sql: Sql;
  let counter: MisbehavingServer;
  let workspace: TestWorkspace;
  let greeter: string;
  let chain: string;
  const keys = { editor: "", viewer: "", otherWorkspace: "" };
  const upKey = `up-${crypto.randomUUID()}`;
  const downKey = `down-${crypto.randomUUID()}`;

  /** The state of the counted chain: Start → Up (API) → Down (API) → Reply; `version` shows in Reply's body. */
  function chainState(version: number) {
    return new WorkflowBuilder()
      .block("start", "api_trigger", {}, { name: "Start" })
      .block("up", "api", { url: `${counter.url}/flaky/${upKey}` }, { name: "Up" })
      .block("down", "api", { url: `${counter.url}/flaky/${downKey}` }, { name: "Down" })
      .block("reply", "response", { body: { up: "<up.data.attempts>", down: "<down.data.attempts>", who: "<start.input.who>", version } }, { name: "Reply" })
      .chain("start", "up", "down", "reply")
      .build();
  }

  beforeAll(async () => {
    sql = openDatabase();
    counter = await startMisbehavingServer();
    workspace = await createWorkspace("Re-runs");
    await liftLimits(workspace.id, { logsPerMinute: 100_000 });
    greeter = await deployedWorkflow(workspace.members.editor, workspace.id, "Greeter", new WorkflowBuilder()
      .block("api", "api_trigger", { inputFormat: [{ name: "name", type: "string" }, { name: "times", type: "number" }] }, { name: "API" })
      .block("greet", "function", { code: "return `Hello, ${<api.name>} x${<api.times>}`;" }, { name: "Greet" })
      .chain("api", "greet").build());
    chain = await deployedWorkflow(workspace.members.editor, workspace.id, "Counted chain", chainState(1));
    keys.editor = (await apiKey(workspace.members.editor)).key;
    keys.viewer = (await apiKey(workspace.members.viewer)).key;
    const other = await createWorkspace("Someone else's");
    keys.otherWorkspace = (await apiKey(other.owner, other.id)).key;
  }, 60_000);

  afterAll(async () => {
    await counter.close();
    await sql.end();
  });

  it("re-runs a sync run with its original input, as a new run linked to it", async () => {
    const original = await execute(greeter, keys.editor, { name: "Ana", times: 2 });
    expect(original.status).toBe(200);
    const originalId = original.body.executionId as string;
    expect(await detail(keys.editor, originalId)).toMatchObject({ input: { name: "Ana", times: 2 }, rerunOf: null, rerunFromBlock: null });

    const again = await rerun(keys.editor, originalId);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ success: true, output: { result: "Hello, Ana x2", stdout: "" } });
    const newId = again.body.executionId as string;
    expect(newId).not.toBe(originalId);
    expect([again.headers.get("x-execution-id"), again.headers.get("x-rerun-of")]).toEqual([newId, originalId]);
    expect(again.headers.get("x-ratelimit-limit")).toBe("100000");

    expect(await detail(keys.editor, newId)).toMatchObject({
      runId: newId, workflowId: greeter, status: "completed", trigger: "api", mode: "sync", deploymentVersion: 1,
      input: { name: "Ana", times: 2 }, rerunOf: originalId, rerunFromBlock: null, cost: { total: 0.001 },
    });
    const list = await call("GET", `/api/v2/runs?workflowId=${greeter}&limit=100`, { headers: { "X-API-Key": keys.editor } });
    const entries = Object.fromEntries((list.body.data as { runId: string; rerunOf: string | null }[]).map((entry) => [entry.runId, entry.rerunOf]));
    expect([entries[newId], entries[originalId]]).toEqual([originalId, null]);
  });

  it("re-runs an async run with the input it kept", async () => {
    const queued = await execute(greeter, keys.editor, { name: "Caio", times: 3 }, { "X-Execution-Mode": "async" });
    expect(queued.status).toBe(202);
    const originalId = queued.body.executionId as string;
    await eventually("the async run to complete", () => detail(keys.editor, originalId), (run) => run.status === "completed", 30_000);
    const again = await rerun(keys.editor, originalId, {});
    expect([again.status, again.body.output]).toEqual([200, { result: "Hello, Caio x3", stdout: "" }]);
    expect(await detail(keys.editor, again.body.executionId as string)).toMatchObject({ rerunOf: originalId, input: { name: "Caio", times: 3 }, mode: "sync" });
  });

  it("re-runs with an edited input, checked as execute checks one", async () => {
    const original = await execute(greeter, keys.editor, { name: "Ana", times: 1 });
    const originalId = original.body.executionId as string;
    const edited = await rerun(keys.editor, originalId, { input: { name: "Bea", times: "4" } });
    expect([edited.status, edited.body.output]).toEqual([200, { result: "Hello, Bea x4", stdout: "" }]);
    expect(await detail(keys.editor, edited.body.executionId as string)).toMatchObject({ rerunOf: originalId, input: { name: "Bea", times: "4" } });

    const refused = await rerun(keys.editor, originalId, { input: { name: "Bea", times: "many" } });
    expect([refused.status, refused.body.code]).toEqual([400, "INVALID_INPUT"]);
    // Refused once admitted, as execute refuses such input: recorded failed, linked, nothing ran.
    expect(await detail(keys.editor, refused.body.executionId as string)).toMatchObject({ status: "failed", rerunOf: originalId, error: { code: "INVALID_INPUT" } });
  });

  it("re-runs from a block: upstream outcomes are replayed, the block and what follows run again, on the original's version", async () => {
    const original = await execute(chain, keys.editor, { who: "Ana" });
    expect([original.status, original.body]).toEqual([200, { up: 1, down: 1, who: "Ana", version: 1 }]);
    const originalId = original.headers.get("x-execution-id") as string;

    // A newer version is active now; the re-run still runs version 1.
    const editor = workspace.members.editor.client;
    expect((await editor.from("workflows").update({ state: chainState(2) }).eq("id", chain)).error).toBeNull();
    expect((await editor.rpc("deploy_workflow", { p_workflow_id: chain })).error).toBeNull();

    const fromDown = await rerun(keys.editor, originalId, { fromBlock: "down" });
    expect([fromDown.status, fromDown.body]).toEqual([200, { up: 1, down: 2, who: "Ana", version: 1 }]);
    expect([counter.attempts(upKey), counter.attempts(downKey)]).toEqual([1, 2]);
    const rerunId = fromDown.headers.get("x-execution-id") as string;
    const rerunDetail = await detail(keys.editor, rerunId);
    expect(rerunDetail).toMatchObject({ status: "completed", deploymentVersion: 1, rerunOf: originalId, rerunFromBlock: "down", input: { who: "Ana" } });
    expect((rerunDetail.blocks as { blockId: string }[]).map((span) => span.blockId)).toEqual(["start", "up", "down", "reply"]);

    // A re-run's outcomes are kept too (replayed ones included): re-running it from its last block
    // replays Down's second answer.
    const fromReply = await rerun(keys.editor, rerunId, { fromBlock: "reply" });
    expect([fromReply.status, fromReply.body]).toEqual([200, { up: 1, down: 2, who: "Ana", version: 1 }]);
    expect([counter.attempts(upKey), counter.attempts(downKey)]).toEqual([1, 2]);

    // An async run keeps its outcomes once it has ended, and is re-run from a block the same way.
    const queued = await execute(chain, keys.editor, { who: "Caio" }, { "X-Execution-Mode": "async" });
    const asyncId = queued.body.executionId as string;
    await eventually("the async run to complete", () => detail(keys.editor, asyncId), (run) => run.status === "completed", 30_000);
    expect([counter.attempts(upKey), counter.attempts(downKey)]).toEqual([2, 3]);
    const fromAsync = await rerun(keys.editor, asyncId, { fromBlock: "down" });
    expect([fromAsync.status, fromAsync.body]).toEqual([200, { up: 2, down: 4, who: "Caio", version: 2 }]);
    expect([counter.attempts(upKey), counter.attempts(downKey)]).toEqual([2, 4]);

    const unknown = await rerun(keys.editor, originalId, { fromBlock: "nowhere" });
    expect([unknown.status, unknown.body.code]).toEqual([400, "UNKNOWN_BLOCK"]);
    expect(counter.attempts(upKey)).toBe(2);
  });

  it("keeps what a run leaves for re-runs masked, sync or async, and replays it masked", async () => {
    expect((await workspace.owner.client.rpc("set_environment_variable", { p_workspace_id: workspace.id, p_name: "TOKEN", p_value: "tok-3f9a1c77" })).error).toBeNull();
    const leaky = await deployedWorkflow(workspace.members.editor, workspace.id, "Leaky", new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("leak", "function", { code: "return 'token ' + {{TOKEN}};" }, { name: "Leak" })
      .block("echo", "function", { code: "return <leak.result>;" }, { name: "Echo" })
      .chain("api", "leak", "echo").build());
    const sync = await execute(leaky, keys.editor, {});
    expect(sync.body.output).toEqual({ result: "token ***", stdout: "" });
    const queued = await execute(leaky, keys.editor, {}, { "X-Execution-Mode": "async" });
    const asyncId = queued.body.executionId as string;
    await eventually("the async run to complete", () => detail(keys.editor, asyncId), (run) => run.status === "completed", 30_000);
    const kept = await sql<{ id: string; rows: number; leaks: number }[]>`select execution_id as id, count(*)::int as rows,
      count(*) filter (where checkpoint::text like '%tok-3f9a1c77%')::int as leaks
      from workflows_private.run_checkpoints where execution_id in (${sync.body.executionId as string}, ${asyncId}) group by execution_id order by 1`;
    expect(kept.map((row) => [row.rows, row.leaks])).toEqual([[3, 0], [3, 0]]);
    const fromEcho = await rerun(keys.editor, asyncId, { fromBlock: "echo" });
    expect(fromEcho.body.output).toEqual({ result: "token ***", stdout: "" });
  });

  it("answers another workspace's run 404, never 403, and a viewer 403", async () => {
    const original = await execute(greeter, keys.editor, { name: "Ana", times: 1 });
    const originalId = original.body.executionId as string;
    const elsewhere = await rerun(keys.otherWorkspace, originalId);
    expect([elsewhere.status, elsewhere.body]).toEqual([404, { error: `Run ${originalId} not found`, code: "NOT_FOUND" }]);
    const missing = await rerun(keys.editor, "00000000-0000-4000-8000-000000000000");
    expect([missing.status, missing.body.code]).toEqual([404, "NOT_FOUND"]);
    expect((await rerun(keys.editor, "not-a-uuid")).status).toBe(404);
    const viewer = await rerun(keys.viewer, originalId);
    expect([viewer.status, viewer.body.code]).toEqual([403, "FORBIDDEN"]);
    const anonymous = await rerun(null, originalId);
    expect([anonymous.status, anonymous.body.code]).toEqual([401, "UNAUTHORIZED"]);
  });

  it("refuses what cannot be re-run, with a code for each reason", async () => {
    const [manual] = await recordRuns(sql, [{ workflowId: greeter, trigger: "manual", userId: workspace.members.editor.id }]);
    const refusedManual = await rerun(keys.editor, manual);
    expect([refusedManual.status, refusedManual.body.code]).toEqual([409, "RERUN_NOT_SUPPORTED"]);

    const inFlight = await sql.begin(async (tx) => {
      await tx`select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true)`;
      const [{ id }] = await tx<{ id: string }[]>`select public.admit_workflow_run(${greeter}::uuid, 'api', 'sync', ${keys.editor}, p_input => ${tx.json({ name: "Ana" })}, p_lease_seconds => 3600) ->> 'executionId' as id`;
      return id;
    });
    const refusedInFlight = await rerun(keys.editor, inFlight);
    expect([refusedInFlight.status, refusedInFlight.body.code]).toEqual([409, "RUN_IN_PROGRESS"]);

    const original = await execute(chain, keys.editor, { who: "Dora" });
    const originalId = original.headers.get("x-execution-id") as string;
    // What a run keeps goes when it goes; here it is taken away directly, as if it had expired.
    await sql`delete from workflows_private.run_checkpoints where execution_id = ${originalId}`;
    const noOutcomes = await rerun(keys.editor, originalId, { fromBlock: "down" });
    expect([noOutcomes.status, noOutcomes.body.code]).toEqual([410, "RUN_DATA_EXPIRED"]);
    await sql`update public.workflow_executions set input = null where id = ${originalId}`;
    const noInput = await rerun(keys.editor, originalId);
    expect([noInput.status, noInput.body.code]).toEqual([410, "RUN_DATA_EXPIRED"]);
    const withInput = await rerun(keys.editor, originalId, { input: { who: "Eva" } });
    expect([withInput.status, (withInput.body as { who?: string }).who]).toEqual([200, "Eva"]);

    // A sync input sent in a body over 1 MiB is run but not kept; a re-run's body is at most 1 MiB.
    const large = await execute(greeter, keys.editor, { name: "x".repeat(1024 * 1024), times: 1 });
    expect(large.status).toBe(200);
    expect((await detail(keys.editor, large.body.executionId as string)).input).toBeNull();
    const notKept = await rerun(keys.editor, large.body.executionId as string);
    expect([notKept.status, notKept.body.code]).toEqual([410, "RUN_DATA_EXPIRED"]);
    const tooLarge = await rerun(keys.editor, large.body.executionId as string, { input: { name: "x".repeat(1024 * 1024), times: 1 } });
    expect([tooLarge.status, tooLarge.body.code]).toEqual([413, "BODY_TOO_LARGE"]);

    const [{ deployment }] = await sql<{ deployment: string }[]>`select deployment_id as deployment from public.workflow_executions where id = ${originalId}`;
    await sql`delete from public.workflow_deployments where id = ${deployment}`;
    const versionGone = await rerun(keys.editor, originalId, { input: { who: "Eva" } });
    expect([versionGone.status, versionGone.body.code]).toEqual([410, "DEPLOYMENT_GONE"]);
  });

  it("answers bad bodies 400 INVALID_BODY, never a 500, and admits nothing for them", async () => {
    const original = await execute(greeter, keys.editor, { name: "Ana", times: 1 });
    const originalId = original.body.executionId as string;
    const [{ before }] = await sql<{ before: number }[]>`select count(*)::int as before from public.workflow_executions where rerun_of = ${originalId}`;
    for (const body of [{ fromBlock: "" }, { input: null }, { input: {}, fromBlock: "greet" }, { fromblock: "greet" }, { fromBlock: 7 }, [1]]) {
      const answer = await rerun(keys.editor, originalId, body);
      expect([answer.status, answer.body.code], JSON.stringify(body)).toEqual([400, "INVALID_BODY"]);
    }
    const malformed = await rerun(keys.editor, originalId, undefined, "{not json");
    expect([malformed.status, malformed.body.code]).toEqual([400, "INVALID_BODY"]);
    const [{ after }] = await sql<{ after: number }[]>`select count(*)::int as after from public.workflow_executions where rerun_of = ${originalId}`;
    expect(after).toBe(before);
  });
});

describe("the re-run curl examples in docs/workflow-runs.md", () => {
  // Each command is a bash and a curl process: seconds apiece on a loaded 2-core machine.
  it("run as written against the seeded demo workflow", async () => {
    // The run they re-run: Hello API, run once with the demo key (its Reply answers {message}).
    const original = await execute("f5000000-0000-4000-8000-000000000003", "orb_local_only_demo_key_000000000000000000000000", { name: "Ana", excited: false });
    expect([original.status, original.body]).toEqual([200, { message: "Hello, Ana." }]);
    const runId = original.headers.get("x-execution-id") as string;
    const docs = readFileSync(join(PROJECT_ROOT, "docs", "workflow-runs.md"), "utf8");
    const blocks = [...docs.matchAll(/```sh\n([\s\S]*?)\n```/g)].map((match) => match[1]).filter((block) => block.includes("/rerun"));
    expect(blocks).toHaveLength(1);
    const lines = blocks[0].split("\n");
    const settings = lines.filter((line) => /^[A-Z]+=/.test(line)).join("\n");
    const commands = lines.filter((line) => line.startsWith("curl "));
    expect(commands.length).toBeGreaterThanOrEqual(4);
    const answers: Record<string, unknown>[] = [];
    for (const command of commands) {
      const written = command.replaceAll("http://127.0.0.1:54321", env.url).replaceAll("<runId>", runId);
      const output = execFileSync("bash", ["-c", `${settings}\n${written.replace(/^curl /, "curl -s -w '\\n%{http_code}' ")}`], { encoding: "utf8" });
      const status = Number(output.slice(output.lastIndexOf("\n") + 1));
      const body = JSON.parse(output.slice(0, output.lastIndexOf("\n"))) as Record<string, unknown>;
      expect(status, `${command}: ${JSON.stringify(body)}`).toBe(200);
      const path = new URL(/"(http[^"]+)"/.exec(written)![1]).pathname;
      const operation = path.endsWith("/rerun") ? ["POST", "/api/v2/runs/{runId}/rerun"] : ["GET", "/api/v2/workflows/{workflowId}/runs"];
      expect(specViolations(operation[0], operation[1], { status, body }), command).toEqual([]);
      answers.push(body);
    }
    expect(answers.slice(0, 3)).toEqual([{ message: "Hello, Ana." }, { message: "Hello, Bea!" }, { message: "Hello, Ana." }]);
    // The newest run of the workflow is the last re-run, from the Greet block, linked to the original.
    expect((answers[3].data as { rerunOf: string }[])[0].rerunOf).toBe(runId);
  }, 120_000);
});
