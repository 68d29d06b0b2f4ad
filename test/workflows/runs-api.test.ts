/**
 * The runs API through the gateway (GET /api/v2/runs, /runs/{runId}, and Sim's
 * /api/v2/workflows/{workflowId}/runs[/{runId}]) with real API keys, on runs recorded by the
 * lifecycle functions and one parked by the real worker: Sim's statuses, every filter, the keyset
 * across ties in either order, one run in full, who may read what (another workspace's run is 404,
 * never 403), bad input (400, never a 500), the logs bucket it spends, and the curl examples of
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
import { createTestUser } from "../helpers/clients.ts";
import { specViolations } from "../gamification/openapi.ts";
import { type Answer, apiKey, call, deployedWorkflow as deployState, eventually, execute, expectDocumented } from "./execute-api.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { deployedWorkflow, liftLimits, openDatabase, recordRuns } from "./logs-helpers.ts";

/** The operation of docs/openapi.yaml serving `path`. */
function operationOf(path: string): string {
  const workflow = path.startsWith("/api/v2/workflows/") ? "/api/v2/workflows/{workflowId}" : "/api/v2";
  return /\/runs\/[^/]+$/.test(path) ? `${workflow}/runs/{runId}` : `${workflow}/runs`;
}

/** GET `path` with `key` (none when null), the answer checked against docs/openapi.yaml. */
async function get(key: string | null, path: string, query: Record<string, string> = {}): Promise<Answer> {
  const search = new URLSearchParams(query).toString();
  const answer = await call("GET", search === "" ? path : `${path}?${search}`, { headers: key === null ? {} : { "X-API-Key": key } });
  expectDocumented("GET", operationOf(path), answer);
  return answer;
}

const ids = (answer: Answer) => (answer.body.data as { runId: string }[]).map((run) => run.runId);

describe("the runs API", () => {
  let sql: Sql;
  let workspace: TestWorkspace;
  let alpha: string;
  let beta: string;
  let paging: string;
  let waiting: string;
  const keys = { editor: "", viewer: "", workspace: "", stranger: "", otherWorkspace: "", revoked: "" };
  const runs: Record<string, string> = {};

  /** Admits a run without finishing it: a sync one stays running, an async one queued (its queue message is dropped in the same transaction, so no worker takes it). */
  async function unfinished(workflowId: string, mode: "sync" | "async"): Promise<string> {
    return await sql.begin(async (tx) => {
      await tx`select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true)`;
      const [{ id }] = await tx<{ id: string }[]>`select public.admit_workflow_run(${workflowId}::uuid, 'webhook', ${mode}, p_input => ${tx.json({ order: 7 })}, p_lease_seconds => 3600) ->> 'executionId' as id`;
      await tx`reset role`;
      await tx`select pgmq.delete('workflow_runs', e.queue_message_id) from public.workflow_executions e where e.id = ${id} and e.queue_message_id is not null`;
      return id;
    });
  }

  /** The workspace's run ids as the database orders them for the keyset, newest first. */
  async function keysetOrder(filter: { workflowId?: string } = {}): Promise<string[]> {
    const rows = await sql<{ id: string }[]>`select id from public.workflow_executions
      where workspace_id = ${workspace.id} and (${filter.workflowId ?? null}::uuid is null or workflow_id = ${filter.workflowId ?? null}::uuid) order by created_at desc, id desc`;
    return rows.map((row) => row.id);
  }

  beforeAll(async () => {
    sql = openDatabase();
    workspace = await createWorkspace("Runs API");
    await liftLimits(workspace.id, { logsPerMinute: 100_000 });
    [alpha, beta, paging] = await Promise.all([deployedWorkflow(workspace, "Alpha"), deployedWorkflow(workspace, "Beta"), deployedWorkflow(workspace, "Paging")]);
    waiting = await deployState(workspace.members.editor, workspace.id, "Waits an hour", new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("pause", "wait", { amount: 60, unit: "minutes" }, { name: "Pause" })
      .chain("api", "pause").build());

    keys.editor = (await apiKey(workspace.members.editor)).key;
    keys.viewer = (await apiKey(workspace.members.viewer)).key;
    keys.workspace = (await apiKey(workspace.members.admin, workspace.id)).key;
    const revoked = await apiKey(workspace.members.editor);
    keys.revoked = revoked.key;
    await workspace.members.editor.client.rpc("revoke_api_key", { p_id: revoked.id });
    keys.stranger = (await apiKey(await createTestUser())).key;
    const other = await createWorkspace("Someone else's");
    keys.otherWorkspace = (await apiKey(other.owner, other.id)).key;

    [runs.webhook, runs.failed, runs.schedule, runs.chat] = await recordRuns(sql, [
      { workflowId: alpha, trigger: "webhook" },
      { workflowId: alpha, trigger: "api", apiKey: keys.editor, status: "failed" },
      { workflowId: beta, trigger: "schedule", output: { answer: 42 }, traceSpans: [{ blockId: "done", name: "Done", status: "success" }] },
      { workflowId: beta, trigger: "chat", status: "cancelled" },
    ]);
    runs.running = await unfinished(beta, "sync");
    runs.queued = await unfinished(alpha, "async");
    const admitted = await execute(waiting, keys.editor, { order: 8 }, { "X-Execution-Mode": "async" });
    expect(admitted.status).toBe(202);
    runs.paused = admitted.body.executionId as string;
    await eventually("the run to park", () => get(keys.editor, `/api/v2/runs/${runs.paused}`), (answer) => (answer.body.data as { status: string }).status === "paused", 30_000);
    // Five runs admitted in one transaction share one instant: the keyset must order them by id.
    await recordRuns(sql, Array.from({ length: 5 }, () => ({ workflowId: paging })), { sameStart: true });
  }, 60_000);

  afterAll(async () => {
    await sql.end();
  });

  it("lists every run of the workspace, queued and parked ones included, newest first, in Sim's words", async () => {
    const answer = await get(keys.editor, "/api/v2/runs", { workspaceId: workspace.id, limit: "100" });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("x-ratelimit-limit")).toBe("100000");
    expect(ids(answer)).toEqual(await keysetOrder());
    const statuses = Object.fromEntries((answer.body.data as { runId: string; status: string }[]).map((run) => [run.runId, run.status]));
    expect([runs.webhook, runs.failed, runs.schedule, runs.chat, runs.running, runs.queued, runs.paused].map((id) => statuses[id]))
      .toEqual(["completed", "failed", "completed", "cancelled", "running", "queued", "paused"]);
    const queued = (answer.body.data as Record<string, unknown>[]).find((run) => run.runId === runs.queued);
    expect(queued).toMatchObject({ workflowId: alpha, trigger: "webhook", startedAt: null, endedAt: null, durationMs: null, cost: { total: 0.001 } });
    expect(answer.body.nextCursor).toBeNull();
  });

  it("filters by workflow, status, trigger and admission time, all combined", async () => {
    const list = async (query: Record<string, string>) => ids(await get(keys.editor, "/api/v2/runs", { workspaceId: workspace.id, ...query }));
    const all = await keysetOrder();
    expect(await list({ workflowId: beta })).toEqual(await keysetOrder({ workflowId: beta }));
    for (const status of ["failed", "cancelled", "running", "queued", "paused"] as const) {
      expect(await list({ status }), status).toEqual([runs[status === "cancelled" ? "chat" : status]]);
    }
    expect(await list({ trigger: "schedule" })).toEqual([runs.schedule]);
    expect(await list({ workflowId: alpha, status: "completed", trigger: "webhook" })).toEqual([runs.webhook]);
    expect(await list({ workflowId: alpha, trigger: "chat" })).toEqual([]);

    const [{ created }] = await sql<{ created: string }[]>`select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created from public.workflow_executions where id = ${runs.schedule}`;
    const since = await list({ startDate: created, limit: "100" });
    expect(since).toEqual(all.slice(0, all.indexOf(runs.schedule) + 1));
    expect(await list({ endDate: created, limit: "100" })).toEqual(all.slice(all.indexOf(runs.schedule)));
    expect(await list({ startDate: created, endDate: created })).toEqual([runs.schedule]);
    // Without a workspace, the workflow names it.
    expect(ids(await get(keys.editor, "/api/v2/runs", { workflowId: beta }))).toEqual(await keysetOrder({ workflowId: beta }));
  });

  it("pages with an opaque cursor that never skips or repeats a run, however many share an instant, in either order", async () => {
    const expected = await keysetOrder({ workflowId: paging });
    for (const order of ["desc", "asc"] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const answer: Answer = await get(keys.editor, "/api/v2/runs", { workflowId: paging, limit: "2", order, ...(cursor ? { cursor } : {}) });
        expect(answer.status).toBe(200);
        seen.push(...ids(answer));
        cursor = answer.body.nextCursor as string | null;
        pages += 1;
      } while (cursor !== null);
      expect(seen, order).toEqual(order === "desc" ? expected : [...expected].reverse());
      expect(pages).toBe(3);
    }
  });

  it("gives one run in full: status, trigger, deployment version, input, timings, cost, error, output, pause and the blocks that ran", async () => {
    const failed = await get(keys.editor, `/api/v2/runs/${runs.failed}`);
    expect(failed.status).toBe(200);
    expect(failed.body.data).toMatchObject({
      runId: runs.failed, workflowId: alpha, status: "failed", trigger: "api", mode: "sync", deploymentVersion: 1, input: null, output: null, paused: null,
      error: { code: "BLOCK_FAILED", message: "It broke", blockId: "done", blockName: "Done" }, cost: { total: 0.001, base: 0.001 },
      startedAt: expect.any(String), endedAt: expect.any(String), durationMs: 10,
    });
    const completed = await get(keys.viewer, `/api/v2/runs/${runs.schedule}`);
    expect(completed.body.data).toMatchObject({ status: "completed", output: { answer: 42 }, error: null, blocks: [{ blockId: "done", name: "Done", status: "success" }] });

    const paused = (await get(keys.workspace, `/api/v2/runs/${runs.paused}`)).body.data as Record<string, unknown> & { paused: { resumeAt: string; pausedAt: string } };
    expect(paused).toMatchObject({ status: "paused", mode: "async", input: { order: 8 }, attempt: 1, endedAt: null, paused: { pauseKind: "time" } });
    expect(Date.parse(paused.paused.resumeAt) - Date.parse(paused.paused.pausedAt)).toBeGreaterThan(59 * 60_000);
    expect((paused.blocks as { name: string }[]).map((span) => span.name)).toEqual(["API"]);
    expect((await get(keys.editor, `/api/v2/runs/${runs.queued}`)).body.data).toMatchObject({ status: "queued", input: { order: 7 }, startedAt: null, attempt: 0, blocks: [] });
  });

  it("serves Sim's paths, where a run asked for under another workflow is not found", async () => {
    expect(ids(await get(keys.editor, `/api/v2/workflows/${beta}/runs`, { status: "completed" }))).toEqual([runs.schedule]);
    expect((await get(keys.editor, `/api/v2/workflows/${beta}/runs/${runs.schedule}`)).body.data).toMatchObject({ runId: runs.schedule, workflowId: beta });
    const elsewhere = await get(keys.editor, `/api/v2/workflows/${alpha}/runs/${runs.schedule}`);
    expect([elsewhere.status, elsewhere.body.code]).toEqual([404, "NOT_FOUND"]);
    expect((await get(keys.editor, "/api/v2/workflows/not-a-workflow/runs")).status).toBe(404);
  });

  it("answers 404, never 403, for another workspace's runs, and 401 without a valid key", async () => {
    for (const key of [keys.stranger, keys.otherWorkspace]) {
      const run = await get(key, `/api/v2/runs/${runs.webhook}`);
      expect(run.body).toEqual({ error: `Run ${runs.webhook} not found`, code: "NOT_FOUND" });
      expect(run.status).toBe(404);
      const list = await get(key, "/api/v2/runs", { workspaceId: workspace.id });
      expect([list.status, list.body]).toEqual([404, { error: `Workspace ${workspace.id} not found`, code: "NOT_FOUND" }]);
      expect((await get(key, "/api/v2/runs", { workflowId: alpha })).status).toBe(404);
    }
    expect((await get(keys.editor, "/api/v2/runs/00000000-0000-4000-8000-000000000000")).status).toBe(404);
    expect((await get(keys.editor, "/api/v2/runs/not-a-run")).status).toBe(404);
    expect((await get(keys.workspace, "/api/v2/runs", { workspaceId: workspace.id })).status).toBe(200);
    for (const key of [null, keys.revoked, "orb_0000"]) {
      const refused = await get(key, "/api/v2/runs", { workspaceId: workspace.id });
      expect([refused.status, refused.body.code]).toEqual([401, "UNAUTHORIZED"]);
    }
  });

  it("refuses bad input with 400 in the workflow service's envelope, never a 500", async () => {
    const descending = (await get(keys.editor, "/api/v2/runs", { workflowId: paging, limit: "2" })).body.nextCursor as string;
    const refusals: Record<string, string>[] = [
      {}, { cursor: "not-a-cursor" }, { cursor: descending, order: "asc" }, { status: "pending" }, { status: "completed,failed" },
      { trigger: "email" }, { startDate: "yesterday" }, { startDate: "2026-02-30T00:00:00Z" }, { startDate: "2026-11-23T10:00:00Z", endDate: "2026-11-23T09:59:59Z" },
      { limit: "101" }, { limit: "0" }, { limit: "ten" }, { workflowIds: alpha }, { workspaceId: "nope" },
    ];
    for (const query of refusals) {
      const answer = await get(keys.editor, "/api/v2/runs", { ...(query.workspaceId || Object.keys(query).length === 0 ? {} : { workspaceId: workspace.id }), ...query });
      expect([answer.status, answer.body.code], JSON.stringify(query)).toEqual([400, "INVALID_QUERY"]);
      expect(answer.body.issues, JSON.stringify(query)).toEqual(expect.arrayContaining([expect.objectContaining({ message: expect.any(String) })]));
    }
    const overCap = await get(keys.editor, "/api/v2/runs", { workspaceId: workspace.id, limit: "101" });
    expect(overCap.body.error).toBe("The request query is not valid: limit must be a whole number from 1 to 100");
  });

  it("spends the logs API's bucket: its state in the headers, 429 with Retry-After once it is empty", async () => {
    const thrifty = await createWorkspace("Runs API, two a minute");
    await liftLimits(thrifty.id, { logsPerMinute: 2 });
    const key = (await apiKey(thrifty.members.viewer)).key;
    const first = await get(key, "/api/v2/runs", { workspaceId: thrifty.id });
    expect([first.status, first.body, first.headers.get("x-ratelimit-limit"), first.headers.get("x-ratelimit-remaining")]).toEqual([200, { data: [], nextCursor: null }, "2", "1"]);
    await get(key, "/api/v2/runs/00000000-0000-4000-8000-000000000000");
    const limited = await get(key, "/api/v2/runs", { workspaceId: thrifty.id });
    expect([limited.status, limited.body.code, limited.headers.get("x-ratelimit-remaining")]).toEqual([429, "RATE_LIMIT_EXCEEDED", "0"]);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });
});

describe("the runs API's curl examples in docs/workflow-runs.md", () => {
  let sql: Sql;

  beforeAll(() => {
    sql = openDatabase();
  });

  afterAll(async () => {
    await sql.end();
  });

  // Each command is a bash and a curl process: seconds apiece on a loaded 2-core machine.
  it("run as written against the seeded demo workspace, each answered 200 as documented", async () => {
    const docs = readFileSync(join(PROJECT_ROOT, "docs", "workflow-runs.md"), "utf8");
    const blocks = [...docs.matchAll(/```sh\n([\s\S]*?)\n```/g)].map((match) => match[1])
      .filter((block) => block.includes("/api/v2/runs") && !block.includes("/cancel") && !block.includes("/rerun"));
    expect(blocks).toHaveLength(1);
    const lines = blocks[0].split("\n");
    const settings = lines.filter((line) => /^[A-Z]+=/.test(line)).join("\n");
    const commands = lines.filter((line) => line.startsWith("curl "));
    expect(commands.length).toBeGreaterThanOrEqual(4);
    // Runs of the demo workflow for the examples to find, more than a page of two (schedule runs:
    // no rate limit of the demo account is spent).
    const [hello] = await recordRuns(sql, Array.from({ length: 3 }, () => ({ workflowId: "f5000000-0000-4000-8000-000000000003", trigger: "schedule" as const })));
    let nextCursor = "";
    for (const command of commands) {
      const written = command.replaceAll("http://127.0.0.1:54321", env.url).replaceAll("<runId>", hello).replaceAll("<nextCursor>", nextCursor);
      const output = execFileSync("bash", ["-c", `${settings}\n${written.replace(/^curl /, "curl -s -w '\\n%{http_code}' ")}`], { encoding: "utf8" });
      const status = Number(output.slice(output.lastIndexOf("\n") + 1));
      const body = JSON.parse(output.slice(0, output.lastIndexOf("\n"))) as Record<string, unknown>;
      expect(status, `${command}: ${JSON.stringify(body)}`).toBe(200);
      const path = new URL(/"([^"]+)"/.exec(written)![1].replaceAll("$WS", "x")).pathname;
      expect(specViolations("GET", operationOf(path), { status, body }), command).toEqual([]);
      if (typeof body.nextCursor === "string") nextCursor = body.nextCursor;
    }
  }, 120_000);
});
