/**
 * A sync or streamed execute that reaches an approval block (docs/workflow-runs.md "Approvals"),
 * through the real stack: the request answers 200 `status: "paused"` with the pause and the links,
 * and the run is handed to the async path (async, parked, its outcomes stored). Deciding it through
 * the resume API finishes it asynchronously: a Condition branches on the decision, the upstream API
 * block ran exactly once (a local counter server sees one call), the run detail shows it completed,
 * its completion webhook fired once, and its Idempotency-Key retry answers paused, then its ending.
 * A streamed run ends with the paused event; a timeout's default outcome finishes a paused run too.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { startMisbehavingServer, type MisbehavingServer } from "../stand-ins/misbehaving-http.ts";
import { runState } from "./durable-helpers.ts";
import { apiKey, call, deployedWorkflow, eventually, execute, expectDocumented, record, setPlan, sql, sseFrames } from "./execute-api.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { subscribe } from "./webhooks-helpers.ts";

let workspace: TestWorkspace;
let key: string;
let counter: MisbehavingServer;

/** api (topic) → Up (an API block the counter counts) → approval → Condition on the decision → Shipped | Held. */
function approving(upKey: string, config: Record<string, unknown>) {
  return new WorkflowBuilder()
    .block("api", "api_trigger", { inputFormat: [{ name: "topic", type: "string" }] }, { name: "API" })
    .block("up", "api", { url: `${counter.url}/flaky/${upKey}` }, { name: "Up" })
    .block("ok", "approval", { message: "Ship <api.topic>?", approvers: [`sync-${crypto.randomUUID().slice(0, 8)}@approvals.test`], timeoutMinutes: 30, ...config }, { name: "Sign Off" })
    .block("check", "condition", { conditions: [{ id: "yes", kind: "if", expression: "<signoff.decision> === \"approved\"" }, { id: "no", kind: "else" }] }, { name: "Check" })
    .block("shipped", "response", { body: { branch: "shipped", up: "<up.data.attempts>", decidedBy: "<signoff.decidedBy>" } }, { name: "Shipped" })
    .block("held", "response", { body: { branch: "held", up: "<up.data.attempts>", decidedBy: "<signoff.decidedBy>" } }, { name: "Held" })
    .chain("api", "up", "ok", "check")
    .edge("check", "shipped", "condition-yes")
    .edge("check", "held", "condition-no")
    .build();
}

async function ended(executionId: string) {
  return await eventually("the run to end", () => record(executionId), (run) => run.status !== "running", 40_000);
}

beforeAll(async () => {
  counter = await startMisbehavingServer();
  workspace = await createWorkspace("Sync approvals");
  await setPlan(workspace.id, "enterprise", { sync_per_minute: 1000, async_per_minute: 1000 });
  key = (await apiKey(workspace.members.editor)).key;
});

afterAll(async () => {
  await counter.close();
  await sql.end();
});

describe("a sync run that reaches an approval", () => {
  const upKey = `up-${crypto.randomUUID()}`;
  const hookKey = `hook-${crypto.randomUUID()}`;
  const idempotencyKey = crypto.randomUUID();
  let workflowId: string;
  let executionId: string;

  it("answers paused with the pause and the links, and hands the run to the async path", async () => {
    workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Sync sign-off", approving(upKey, {}));
    await subscribe(workspace.members.editor, workflowId, `${counter.url}/flaky/${hookKey}`);
    const answer = await execute(workflowId, key, { topic: "v3" }, { "Idempotency-Key": idempotencyKey });
    expectDocumented("POST", "/api/workflows/{workflowId}/execute", answer);
    executionId = answer.body.executionId as string;
    expect(answer.status).toBe(200);
    expect(answer.headers.get("x-execution-id")).toBe(executionId);
    expect(answer.body).toMatchObject({
      success: true, workflowId, status: "paused", output: null,
      paused: { pauseKind: "approval", contextId: "ok", blockedOnBlockId: "ok", approvers: 1, quorum: 1, approvals: 0 },
      links: { status: `/api/v2/runs/${executionId}`, resume: `/api/v2/runs/${executionId}/resume` },
    });
    const paused = answer.body.paused as Record<string, string>;
    expect(Date.parse(paused.expiresAt)).toBeGreaterThan(Date.now() + 29 * 60_000);

    const state = await runState(sql, executionId);
    expect(state).toMatchObject({ status: "running", checkpoints: ["api", "up"] });
    expect(state.parkedUntil).not.toBeNull();
    expect(await record(executionId)).toMatchObject({ mode: "async", attempt: 1 });
    const detail = await call("GET", `/api/v2/runs/${executionId}`, { headers: { "X-API-Key": key } });
    expect(detail.body.data).toMatchObject({ status: "paused", paused: { pauseKind: "approval", contextId: "ok" } });

    const retry = await execute(workflowId, key, { topic: "v3" }, { "Idempotency-Key": idempotencyKey });
    expect([retry.status, retry.headers.get("idempotent-replayed"), retry.body]).toEqual([200, "true", answer.body]);
    expect(counter.attempts(upKey)).toBe(1);
  }, 60_000);

  it("finishes asynchronously once approved: the upstream block ran once, the webhook fired once, the retry answers the ending", async () => {
    const resumed = await call("POST", `/api/v2/runs/${executionId}/resume`, { headers: { "X-API-Key": key }, body: { input: { decision: "approve" } } });
    expect(resumed.status).toBe(202);
    const run = await ended(executionId);
    expect(run).toMatchObject({ status: "completed", output: { data: { branch: "shipped", up: 1, decidedBy: "api" } } });
    expect(counter.attempts(upKey)).toBe(1);
    const detail = await call("GET", `/api/v2/runs/${executionId}`, { headers: { "X-API-Key": key } });
    expect(detail.body.data).toMatchObject({ status: "completed", paused: null, attempt: 2 });
    await eventually("the completion webhook", async () => counter.attempts(hookKey), (calls) => calls > 0);

    const retry = await execute(workflowId, key, { topic: "v3" }, { "Idempotency-Key": idempotencyKey });
    expect([retry.status, retry.body]).toEqual([200, { success: true, executionId, output: run.output }]);
    const [{ charges }] = await sql<{ charges: number }[]>`select count(*)::int as charges from public.usage_ledger where execution_id = ${executionId} and kind <> 'models'`;
    expect(charges).toBe(1);
    expect(counter.attempts(hookKey)).toBe(1);
  }, 60_000);
});

describe("a streamed run that reaches an approval", () => {
  it("ends its stream with the paused event, and a timeout's default outcome finishes the run", async () => {
    const upKey = `up-${crypto.randomUUID()}`;
    const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Streamed sign-off", approving(upKey, { defaultOutcome: "reject" }));
    const answer = await execute(workflowId, key, { topic: "v4", stream: true });
    expect(answer.status).toBe(200);
    const frames = sseFrames(answer.text);
    expect(frames.at(-1)).toBe("[DONE]");
    const pausedEvent = frames.at(-2) as Record<string, unknown>;
    expect(pausedEvent).toMatchObject({ event: "paused", status: "paused", paused: { pauseKind: "approval", contextId: "ok" } });
    const executionId = pausedEvent.executionId as string;

    const [{ decided }] = await sql<{ decided: number }[]>`select public.expire_workflow_approvals(now() + interval '31 minutes') as decided`;
    expect(decided).toBeGreaterThanOrEqual(1);
    expect(await ended(executionId)).toMatchObject({ status: "completed", output: { data: { branch: "held", up: 1, decidedBy: "timeout" } } });
    expect(counter.attempts(upKey)).toBe(1);
  }, 60_000);
});
