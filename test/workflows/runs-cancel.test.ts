/**
 * Cancelling runs through the runs API, over the gateway with real keys (docs/workflow-runs.md,
 * "Cancelling runs"): a sync, a streamed, a manual and an async run whose Function spins are
 * stopped at once (well before the test stack's 8 s sync time limit and the 10 s / 40 s heartbeats
 * that were the only way before); a queued run, one parked at a Wait and one paused at an approval
 * end in the call and free what they held; a second cancel answers the run's state; who and why
 * show on the run; another workspace's run is 404 and a viewer's key 403; the bulk cancel's filters
 * and cap; the completion webhook says `cancelled`; bad input is a 400; and the section's curl
 * examples run as written. Answers are checked against docs/openapi.yaml.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../platform/config/stack-config.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { createTestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { specViolations } from "../gamification/openapi.ts";
import { WebhookReceiver } from "../stand-ins/webhook-receiver.ts";
import { runState, startCounterServer, type CounterServer } from "./durable-helpers.ts";
import { type Answer, apiKey, call, deployedWorkflow, eventually, execute, expectDocumented, sql, sseFrames } from "./execute-api.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { liftLimits } from "./logs-helpers.ts";
import { subscribe } from "./webhooks-helpers.ts";

/** The operation of docs/openapi.yaml serving a cancel `path`. */
function operationOf(path: string): string {
  if (path === "/api/v2/runs/cancel") return path;
  return path.startsWith("/api/v2/workflows/") ? "/api/v2/workflows/{workflowId}/runs/{runId}/cancel" : "/api/v2/runs/{runId}/cancel";
}

/** POST a cancel `path` with `key`, the answer checked against docs/openapi.yaml. */
async function cancel(key: string | null, path: string, body?: unknown, raw?: { text: string; type: string }): Promise<Answer> {
  const headers: Record<string, string> = key === null ? {} : { "X-API-Key": key };
  if (raw) headers["content-type"] = raw.type;
  const answer = await call("POST", path, { headers, ...(body === undefined ? {} : { body }), ...(raw ? { raw: raw.text } : {}) });
  expectDocumented("POST", operationOf(path), answer);
  return answer;
}

/** GET one run, checked against docs/openapi.yaml. */
async function getRun(key: string, runId: string): Promise<Record<string, unknown>> {
  const answer = await call("GET", `/api/v2/runs/${runId}`, { headers: { "X-API-Key": key } });
  expectDocumented("GET", "/api/v2/runs/{runId}", answer);
  return answer.body.data as Record<string, unknown>;
}

let workspace: TestWorkspace;
let counter: CounterServer;
let receiver: WebhookReceiver;
let spinner: string;
let waiter: string;
const keys = { editor: "", viewer: "", workspace: "", otherWorkspace: "" };

/** Starts a run of the spinner and waits until its Mark block's call says the spinning Function comes next. */
async function spinning(start: () => Promise<unknown>): Promise<void> {
  const before = counter.hits.get("spins") ?? 0;
  void start();
  await eventually("the Function to start spinning", async () => counter.hits.get("spins") ?? 0, (hits) => hits > before);
}

/** The record's status once it has ended, and how long after `since` the test saw it end. */
async function ended(executionId: string, since: number): Promise<{ status: string; afterMs: number }> {
  const state = await eventually("the run to end", () => runState(sql, executionId), (run) => !["queued", "running"].includes(run.status), 15_000);
  return { status: state.status, afterMs: performance.now() - since };
}

beforeAll(async () => {
  counter = await startCounterServer();
  receiver = await WebhookReceiver.start();
  workspace = await createWorkspace("Cancelling runs");
  await liftLimits(workspace.id, { logsPerMinute: 100_000 });
  const spin = new WorkflowBuilder()
    .block("api", "api_trigger", {}, { name: "API" })
    .block("mark", "api", { url: `${counter.url}/hit/spins` }, { name: "Mark" })
    .block("spin", "function", { code: "while (true) {}", timeoutMs: 60_000 }, { name: "Spin" })
    .chain("api", "mark", "spin").build();
  spinner = await deployedWorkflow(workspace.members.editor, workspace.id, "Spins", spin);
  waiter = await deployedWorkflow(workspace.members.editor, workspace.id, "Waits an hour", new WorkflowBuilder()
    .block("api", "api_trigger", {}, { name: "API" })
    .block("pause", "wait", { amount: 60, unit: "minutes" }, { name: "Pause" })
    .chain("api", "pause").build());
  keys.editor = (await apiKey(workspace.members.editor)).key;
  keys.viewer = (await apiKey(workspace.members.viewer)).key;
  keys.workspace = (await apiKey(workspace.members.admin, workspace.id)).key;
  const other = await createWorkspace("Someone else's");
  keys.otherWorkspace = (await apiKey(other.owner, other.id)).key;
  await subscribe(workspace.members.editor, spinner, receiver.url("/cancelled"));
}, 60_000);

afterAll(async () => {
  await counter.close();
  await receiver.stop();
});

describe("cancelling a running run reaches its spinning Function at once", () => {
  it("a sync run: its request answers and the run is recorded cancelled within moments, not at a heartbeat", async () => {
    let answered: Answer | null = null;
    await spinning(async () => {
      answered = await execute(spinner, keys.editor, {});
    });
    const [{ id: runId }] = await sql<{ id: string }[]>`select id from public.workflow_executions where workflow_id = ${spinner} and status = 'running' and mode = 'sync'`;
    const sent = performance.now();
    const answer = await cancel(keys.editor, `/api/v2/runs/${runId}/cancel`, { reason: "Spinning" });
    expect(answer.status).toBe(200);
    expect(answer.body.data).toMatchObject({ success: true, runId, durablyRecorded: true, pausedCancelled: false, reason: "recorded" });
    const end = await ended(runId, sent);
    expect(end.status).toBe("cancelled");
    // The test stack's sync limit is 8 s and the sync heartbeat 10 s: either would take far longer.
    expect(end.afterMs).toBeLessThan(3_000);
    const request = await eventually("the request to be answered", async () => answered, (value) => value !== null, 5_000);
    expect([request?.status, request?.body]).toMatchObject([500, { success: false, executionId: runId, code: "EXECUTION_FAILED", errorCode: "CANCELLED" }]);
    expect((await getRun(keys.viewer, runId)).status).toBe("cancelled");
  });

  it("a streamed run: its stream ends and the run is recorded cancelled at once", async () => {
    let answered: Answer | null = null;
    await spinning(async () => {
      answered = await execute(spinner, keys.editor, { stream: true });
    });
    const [{ id: runId }] = await sql<{ id: string }[]>`select id from public.workflow_executions where workflow_id = ${spinner} and status = 'running' and mode = 'sync'`;
    const sent = performance.now();
    expect((await cancel(keys.workspace, `/api/v2/runs/${runId}/cancel`)).status).toBe(200);
    const end = await ended(runId, sent);
    expect([end.status, end.afterMs < 3_000]).toEqual(["cancelled", true]);
    const stream = await eventually("the stream to end", async () => answered, (value) => value !== null, 5_000);
    expect(stream?.status).toBe(200);
    // A cancelled stream ends without a `done` event.
    expect(sseFrames(stream?.text ?? "").at(-1)).toBe("[DONE]");
    expect(sseFrames(stream?.text ?? "").some((frame) => (frame as { event?: string }).event === "done")).toBe(false);
  });

  it("a manual run (the dashboard's, signed in): stopped at once too, though it holds no renewed lease", async () => {
    let answered: Answer | null = null;
    await spinning(async () => {
      answered = await call("POST", `/api/workflows/${spinner}/run`, { headers: { Authorization: `Bearer ${workspace.members.editor.accessToken}` }, body: {} });
    });
    const [{ id: runId }] = await sql<{ id: string }[]>`select id from public.workflow_executions where workflow_id = ${spinner} and status = 'running' and trigger = 'manual'`;
    const sent = performance.now();
    expect((await cancel(keys.editor, `/api/v2/runs/${runId}/cancel`)).status).toBe(200);
    const end = await ended(runId, sent);
    expect([end.status, end.afterMs < 3_000]).toEqual(["cancelled", true]);
    await eventually("the request to be answered", async () => answered, (value) => value !== null, 5_000);
  });

  it("an async run: its worker stops it at once, records who and why, and its completion webhook says cancelled", async () => {
    let runId = "";
    await spinning(async () => {
      runId = (await execute(spinner, keys.editor, {}, { "X-Execution-Mode": "async" })).body.executionId as string;
    });
    await eventually("the run's id", async () => runId, (id) => id !== "");
    const sent = performance.now();
    const answer = await cancel(keys.editor, `/api/v2/workflows/${spinner}/runs/${runId}/cancel`, { reason: "No longer needed" });
    expect(answer.body.data).toMatchObject({ runId, durablyRecorded: true, reason: "recorded" });
    const end = await ended(runId, sent);
    // The async heartbeat is every 40 s.
    expect([end.status, end.afterMs < 3_000]).toEqual(["cancelled", true]);
    const run = await getRun(keys.viewer, runId);
    const [key] = await sql<{ id: string; name: string }[]>`select k.id, k.name from public.api_keys k where k.user_id = ${workspace.members.editor.id} and k.workspace_id is null order by k.created_at desc limit 1`;
    expect(run).toMatchObject({ status: "cancelled", cancellation: { at: expect.any(String), reason: "No longer needed", by: { apiKeyId: key.id, apiKeyName: key.name, userId: workspace.members.editor.id } } });

    const ofRun = (arrival: { json: Record<string, unknown> | null }) => (arrival.json?.data as { executionId?: string } | undefined)?.executionId === runId;
    const arrivals = await receiver.waitFor("/cancelled", (all) => all.some(ofRun));
    expect(arrivals.find(ofRun)?.json?.data).toMatchObject({ executionId: runId, status: "cancelled", level: "info", error: null });
  });
});

describe("cancelling runs no worker holds", () => {
  it("a queued run ends in the call; a second cancel answers its state and keeps the first who and why", async () => {
    const [{ id: runId }] = await sql.begin(async (tx) => {
      await tx`select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true)`;
      const rows = await tx<{ id: string }[]>`select public.admit_workflow_run(${waiter}::uuid, 'webhook', 'async') ->> 'executionId' as id`;
      await tx`reset role`;
      // No worker may take it before the test cancels it.
      await tx`select pgmq.set_vt('workflow_runs', e.queue_message_id, 3600) from public.workflow_executions e where e.id = ${rows[0].id}`;
      return rows;
    });
    const first = await cancel(keys.editor, `/api/v2/runs/${runId}/cancel`, { reason: "Queued by mistake" });
    expect(first.body.data).toMatchObject({ status: "cancelled", durablyRecorded: true, reason: "recorded", cancellation: { reason: "Queued by mistake" } });
    const [{ messages }] = await sql<{ messages: number }[]>`select count(*)::int as messages from pgmq.q_workflow_runs where message ->> 'executionId' = ${runId}`;
    expect(messages).toBe(0);
    const again = await cancel(keys.workspace, `/api/v2/runs/${runId}/cancel`, { reason: "Twice" });
    expect([again.status, again.body.data]).toEqual([200, { ...(first.body.data as object), durablyRecorded: false, reason: "already_cancelled" }]);
  });

  it("a parked run ends in the call and holds no lease, no parking and no queue message", async () => {
    const runId = (await execute(waiter, keys.editor, {}, { "X-Execution-Mode": "async" })).body.executionId as string;
    await eventually("the run to park", () => getRun(keys.editor, runId), (run) => run.status === "paused", 30_000);
    const answer = await cancel(keys.editor, `/api/v2/runs/${runId}/cancel`);
    expect(answer.body.data).toMatchObject({ status: "cancelled", durablyRecorded: true, pausedCancelled: true, cancellation: { reason: null } });
    const state = await runState(sql, runId);
    expect([state.status, state.parkedUntil, state.leaseExpiresAt]).toEqual(["cancelled", null, null]);
    const [{ messages }] = await sql<{ messages: number }[]>`select count(*)::int as messages from pgmq.q_workflow_runs where message ->> 'executionId' = ${runId}`;
    expect(messages).toBe(0);
  });
});

describe("cancelling a run paused at an approval", () => {
  it("ends it in the call; the approval can no longer be answered", async () => {
    const approving = await deployedWorkflow(workspace.members.editor, workspace.id, "Waits for a person", new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("ok", "approval", { message: "Go?", approvers: ["approver@cancel.test"], timeoutMinutes: 60 }, { name: "Sign Off" })
      .chain("api", "ok").build());
    const runId = (await execute(approving, keys.editor, {}, { "X-Execution-Mode": "async" })).body.executionId as string;
    await eventually("the run to pause at the approval", () => getRun(keys.editor, runId), (run) => (run.paused as { pauseKind?: string } | null)?.pauseKind === "approval", 40_000);
    const answer = await cancel(keys.editor, `/api/v2/runs/${runId}/cancel`, { reason: "Nobody will answer" });
    expect(answer.body.data).toMatchObject({ status: "cancelled", durablyRecorded: true, pausedCancelled: true });
    const state = await runState(sql, runId);
    expect([state.status, state.parkedUntil, state.leaseExpiresAt]).toEqual(["cancelled", null, null]);
    const resumed = await call("POST", `/api/v2/runs/${runId}/resume`, { headers: { "X-API-Key": keys.editor }, body: { input: { decision: "approve" } } });
    expect([resumed.status, resumed.body.code]).toEqual([409, "NOT_PAUSED"]);
  }, 60_000);
});

describe("who may cancel, and bad input", () => {
  let ended: string;

  beforeAll(async () => {
    ended = (await sql<{ id: string }[]>`select id from public.workflow_executions where workflow_id = ${spinner} and status = 'cancelled' limit 1`)[0].id;
  });

  it("answers 404, never 403, for another workspace's run; 403 for a viewer's key; 401 without a key", async () => {
    const elsewhere = await cancel(keys.otherWorkspace, `/api/v2/runs/${ended}/cancel`);
    expect([elsewhere.status, elsewhere.body]).toEqual([404, { error: `Run ${ended} not found`, code: "NOT_FOUND" }]);
    const stranger = await cancel((await apiKey(await createTestUser())).key, `/api/v2/runs/${ended}/cancel`);
    expect(stranger.status).toBe(404);
    expect((await cancel(keys.editor, `/api/v2/workflows/${waiter}/runs/${ended}/cancel`)).status).toBe(404);
    const viewer = await cancel(keys.viewer, `/api/v2/runs/${ended}/cancel`);
    expect([viewer.status, viewer.body.code]).toEqual([403, "FORBIDDEN"]);
    expect((await cancel(null, `/api/v2/runs/${ended}/cancel`)).status).toBe(401);
  });

  it("refuses bad input with 400 (404 for an id that is not a UUID), never a 500", async () => {
    expect((await cancel(keys.editor, "/api/v2/runs/not-a-run/cancel")).status).toBe(404);
    const tooLong = await cancel(keys.editor, `/api/v2/runs/${ended}/cancel`, { reason: "x".repeat(501) });
    expect([tooLong.status, tooLong.body.code]).toEqual([400, "INVALID_BODY"]);
    for (const body of [{ reason: "" }, { reason: 7 }, { why: "typo" }]) {
      expect((await cancel(keys.editor, `/api/v2/runs/${ended}/cancel`, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await cancel(keys.editor, `/api/v2/runs/${ended}/cancel`, undefined, { text: "{not json", type: "application/json" })).body.code).toBe("INVALID_BODY");
    for (const body of [{}, { workspaceId: workspace.id, status: "completed" }, { workspaceId: workspace.id, limit: 1001 }, { workspaceId: workspace.id, limit: 0 },
      { workspaceId: workspace.id, startDate: "2026-11-23T10:00:00Z", endDate: "2026-11-23T09:00:00Z" }, { workspaceId: workspace.id, cursor: "x" }]) {
      const answer = await cancel(keys.editor, "/api/v2/runs/cancel", body);
      expect([answer.status, answer.body.code], JSON.stringify(body)).toEqual([400, "INVALID_BODY"]);
    }
  });
});

describe("bulk cancel", () => {
  it("cancels the oldest runs in flight that match, at most `limit` a call, and says when more remain", async () => {
    const runIds: string[] = [];
    for (let index = 0; index < 3; index++) {
      runIds.push((await execute(waiter, keys.editor, {}, { "X-Execution-Mode": "async" })).body.executionId as string);
    }
    // Oldest first: admission order.
    const ordered = (await sql<{ id: string }[]>`select id from public.workflow_executions where id = any(${runIds}::uuid[]) order by created_at, id`).map((row) => row.id);
    const viewer = await cancel(keys.viewer, "/api/v2/runs/cancel", { workflowId: waiter });
    expect(viewer.status).toBe(403);
    const elsewhere = await cancel(keys.otherWorkspace, "/api/v2/runs/cancel", { workspaceId: workspace.id });
    expect([elsewhere.status, elsewhere.body.code]).toEqual([404, "NOT_FOUND"]);
    const none = await cancel(keys.editor, "/api/v2/runs/cancel", { workspaceId: workspace.id, workflowId: waiter, trigger: "chat" });
    expect(none.body.data).toEqual({ cancelled: 0, runIds: [], hasMore: false });

    const first = await cancel(keys.editor, "/api/v2/runs/cancel", { workflowId: waiter, limit: 2, reason: "Clearing the backlog" });
    expect([first.status, first.body.data]).toEqual([200, { cancelled: 2, runIds: ordered.slice(0, 2), hasMore: true }]);
    const rest = await cancel(keys.workspace, "/api/v2/runs/cancel", { workspaceId: workspace.id, workflowId: waiter, trigger: "api" });
    expect(rest.body.data).toEqual({ cancelled: 1, runIds: ordered.slice(2), hasMore: false });
    // A run a worker had already taken (sleeping in its Wait until it parks) is signalled and stops moments later.
    for (const runId of ordered) await eventually("the run to be cancelled", () => getRun(keys.editor, runId), (run) => run.status === "cancelled", 5_000);
    expect((await getRun(keys.editor, ordered[0])).cancellation).toMatchObject({ reason: "Clearing the backlog" });
  });
});

describe("the curl examples of docs/workflow-runs.md, \"Cancelling runs\"", () => {
  it("run as written against the seeded demo workspace, each answered 200 as documented", async () => {
    const docs = readFileSync(join(PROJECT_ROOT, "docs", "workflow-runs.md"), "utf8");
    const blocks = [...docs.matchAll(/```sh\n([\s\S]*?)\n```/g)].map((match) => match[1]).filter((block) => block.includes("/cancel"));
    expect(blocks).toHaveLength(1);
    const lines = blocks[0].split("\n");
    const settings = lines.filter((line) => /^[A-Z]+=/.test(line)).join("\n");
    const commands = lines.filter((line) => line.startsWith("curl "));
    expect(commands).toHaveLength(3);
    // A queued run of the demo workflow Hello API for the examples to cancel; no worker takes it first.
    const runId = await sql.begin(async (tx) => {
      await tx`select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true)`;
      const [{ id }] = await tx<{ id: string }[]>`select public.admit_workflow_run('f5000000-0000-4000-8000-000000000003'::uuid, 'webhook', 'async') ->> 'executionId' as id`;
      await tx`reset role`;
      await tx`select pgmq.set_vt('workflow_runs', e.queue_message_id, 3600) from public.workflow_executions e where e.id = ${id}`;
      return id;
    });
    for (const command of commands) {
      const written = command.replaceAll("http://127.0.0.1:54321", env.url).replaceAll("<runId>", runId);
      const output = execFileSync("bash", ["-c", `${settings}\n${written.replace(/^curl /, "curl -s -w '\\n%{http_code}' ")}`], { encoding: "utf8" });
      const status = Number(output.slice(output.lastIndexOf("\n") + 1));
      const body = JSON.parse(output.slice(0, output.lastIndexOf("\n"))) as Record<string, unknown>;
      expect(status, `${command}: ${JSON.stringify(body)}`).toBe(200);
      const path = new URL(/"([^"]+)"/.exec(written)![1]).pathname;
      expect(specViolations("POST", operationOf(path), { status, body }), command).toEqual([]);
    }
    expect((await runState(sql, runId)).status).toBe("cancelled");
  });
});
