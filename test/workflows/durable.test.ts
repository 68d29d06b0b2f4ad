/**
 * Durable async runs through the real stack (docs/workflow-runs.md, "Durable async runs"): a Wait
 * past the park threshold (8 s in the test stack, test/fixtures/functions.env) parks an async run —
 * no lease, a delayed queue message, `running` with `parkedUntil` in the job API — and the run
 * resumes after the wait with the blocks before it not run again (their calls to a local counter
 * server are counted); a parked run is cancelled at once; synchronous runs keep the 5 minute limit
 * and async runs get 30 days. The worker killed mid-run is in test/workflows/async-worker-kill.test.ts
 * (on a supervised stack of its own).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { runState, startCounterServer, type CounterServer } from "./durable-helpers.ts";
import { apiKey, call, deployedWorkflow, eventually, execute, record, setPlan, sql } from "./execute-api.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";

let workspace: TestWorkspace;
let key: string;
let counter: CounterServer;

/** api → before (calls the counter) → pause (a Wait of `amount` `unit`) → after (calls the counter). */
function pausing(name: string, amount: number, unit: "seconds" | "minutes") {
  return new WorkflowBuilder()
    .block("api", "api_trigger", {}, { name: "API" })
    .block("before", "api", { url: `${counter.url}/hit/${name}-before` }, { name: "Before" })
    .block("pause", "wait", { amount, unit }, { name: "Pause" })
    .block("after", "api", { url: `${counter.url}/hit/${name}-after` }, { name: "After" })
    .chain("api", "before", "pause", "after").build();
}

async function runAsync(workflowId: string): Promise<string> {
  const answer = await execute(workflowId, key, {}, { "X-Execution-Mode": "async" });
  expect(answer.status).toBe(202);
  return answer.body.executionId as string;
}

beforeAll(async () => {
  counter = await startCounterServer();
  workspace = await createWorkspace("Durable runs");
  await setPlan(workspace.id, "enterprise", { sync_per_minute: 1000, async_per_minute: 1000 });
  key = (await apiKey(workspace.members.editor)).key;
});

afterAll(async () => {
  await counter.close();
});

describe("an async run at a long Wait", () => {
  it("parks without a worker, then resumes after the wait without running the blocks before it again", async () => {
    const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Parks", pausing("parks", 10, "seconds"));
    const admittedAt = Date.now();
    const executionId = await runAsync(workflowId);

    const parked = await eventually("the run to park", () => runState(sql, executionId), (state) => state.parkedUntil !== null);
    expect(parked).toMatchObject({ status: "running", attempt: 1, checkpoints: ["api", "before"] });
    // Its lease is its due time (no heartbeat moves it), and its queue message waits until then.
    expect(parked.leaseExpiresAt?.getTime()).toBe(parked.parkedUntil?.getTime());
    expect(parked.parkedUntil!.getTime() - admittedAt).toBeGreaterThanOrEqual(10_000);
    const [message] = await sql<{ vt: Date }[]>`select vt from pgmq.q_workflow_runs where message ->> 'executionId' = ${executionId}`;
    expect(Math.abs(message.vt.getTime() - parked.parkedUntil!.getTime())).toBeLessThan(1_500);
    const job = await call("GET", `/api/jobs/${executionId}`, { headers: { "X-API-Key": key } });
    expect(job.body).toMatchObject({ status: "running", metadata: { attempt: 1, parkedUntil: expect.any(String) } });
    expect(Date.parse((job.body.metadata as { parkedUntil: string }).parkedUntil)).toBe(parked.parkedUntil!.getTime());

    const ended = await eventually("the run to resume and finish", () => record(executionId), (run) => run.status !== "running", 40_000);
    expect(ended).toMatchObject({ status: "completed", attempt: 2, output: { data: { name: "parks-after", count: 1 }, status: 200 } });
    expect((ended.ended_at as Date).getTime()).toBeGreaterThanOrEqual(parked.parkedUntil!.getTime());
    expect([counter.hits.get("parks-before"), counter.hits.get("parks-after")]).toEqual([1, 1]);
    // The trace is the whole run's, the block before the wait included (replayed, not re-run).
    expect((ended.trace_spans as { name: string; status: string }[]).map((span) => `${span.name} ${span.status}`)).toEqual(["API success", "Before success", "Pause success", "After success"]);
    // Its history outlives it, for re-runs from a block (it goes when the run goes).
    expect((await runState(sql, executionId)).checkpoints).toEqual(["api", "before", "pause", "after"]);
    const [{ charges }] = await sql<{ charges: number }[]>`select count(*)::int as charges from public.usage_ledger where execution_id = ${executionId}`;
    expect(charges).toBe(1);
  }, 60_000);

  it("is cancelled at once while parked, and never resumes", async () => {
    const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Cancelled while parked", pausing("cancelled", 20, "minutes"));
    const executionId = await runAsync(workflowId);
    const parked = await eventually("the run to park", () => runState(sql, executionId), (state) => state.parkedUntil !== null);
    expect(parked.parkedUntil!.getTime() - Date.now()).toBeGreaterThan(19 * 60_000);

    const [{ answer }] = await sql<{ answer: { body: { status: string } } }[]>`select public.cancel_workflow_run(${executionId}) as answer`;
    expect(answer.body.status).toBe("cancelled");
    expect(await record(executionId)).toMatchObject({ status: "cancelled" });
    const [{ messages }] = await sql<{ messages: number }[]>`select count(*)::int as messages from pgmq.q_workflow_runs where message ->> 'executionId' = ${executionId}`;
    expect(messages).toBe(0);
    expect(counter.hits.get("cancelled-after")).toBeUndefined();
    // Swept a day later, it stays as it was.
    await sql`select workflows_private.sweep_workflow_runs(now() + interval '1 day')`;
    expect(await record(executionId)).toMatchObject({ status: "cancelled", error_code: null });
  }, 30_000);

  it("may wait 30 days, not more", async () => {
    const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Too long", pausing("too-long", 31 * 24 * 60, "minutes"));
    const executionId = await runAsync(workflowId);
    const ended = await eventually("the run to fail", () => record(executionId), (run) => run.status === "failed", 30_000);
    expect(ended).toMatchObject({ error_code: "LIMIT_EXCEEDED", error_message: expect.stringContaining("30 day limit of async runs") });
  }, 40_000);
});

describe("a synchronous run", () => {
  it("keeps the 5 minute limit for a Wait", async () => {
    const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Sync wait", pausing("sync", 10, "minutes"));
    const answer = await execute(workflowId, key, {});
    expect(answer.body).toMatchObject({ success: false, error: expect.stringContaining("5 minute limit of synchronous runs") });
    expect(counter.hits.get("sync-after")).toBeUndefined();
  });
});
