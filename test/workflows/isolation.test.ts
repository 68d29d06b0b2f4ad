/**
 * User code runs off the request thread, through the real functions host: a spinning Function
 * stalls neither the gamification API served by the same `api` function nor another run; the
 * Function branches of a parallel run at the same time; a cancelled run frees its sandbox threads
 * at once; a run past the synchronous budget answers 408, never the host's 546. The test stack
 * sets WORKFLOW_SYNC_TIMEOUT_MS=8000 and WORKFLOW_SANDBOX_WORKERS=4 (test/fixtures/functions.env).
 * Bounds are generous: the machine is shared, so they separate "ran beside" from "waited for".
 */
import { beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import type { WorkflowStateInput } from "../../supabase/functions/_shared/workflows/state/state-schema.ts";
import { callApi } from "../gamification/api.ts";
import { fetchFrom, simulatedClientAddress } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { accountShare } from "../../supabase/functions/_shared/workflows/sandbox/fair-queue.ts";
import { createWorkflow, createWorkspace, type TestWorkspace } from "./factories.ts";
import { liftLimits } from "./logs-helpers.ts";

/** The test stack's synchronous budget and pool size (test/fixtures/functions.env). */
const SYNC_BUDGET_MS = 8_000;
const POOL_SIZE = 4;
/** The threads one billing account may hold at once (fair-queue.ts). */
const ACCOUNT_SHARE = accountShare(POOL_SIZE);

/** A manual trigger followed by one block. */
function single(type: "function" | "wait", config: Record<string, unknown>): WorkflowStateInput {
  return new WorkflowBuilder().block("start", "manual_trigger", {}, { name: "Start" }).block("work", type, config, { name: "Work" }).chain("start", "work").build();
}

/** A manual trigger and a parallel of `branches` branches, each one Function running `code`. */
function fanOut(branches: number, code: string): WorkflowStateInput {
  return new WorkflowBuilder()
    .block("start", "manual_trigger", {}, { name: "Start" })
    .parallel("fan", { nodes: ["work"], parallelType: "count", count: branches }, { name: "Fan" })
    .block("work", "function", { code, timeoutMs: 60_000 }, { name: "Work" })
    .edge("start", "fan")
    .edge("fan", "work", "parallel-start")
    .build();
}

/** Code that keeps its thread busy for `ms` of wall-clock time, then returns how long it ran. */
const busyFor = (ms: number) => `const started = Date.now(); while (Date.now() - started < ${ms}) {} return Date.now() - started;`;

describe("user code off the request thread", () => {
  let workspace: TestWorkspace;
  const send = fetchFrom(simulatedClientAddress());

  /** Starts a manual run of `workflowId` through the `api` function; resolves with status, body and seconds taken. */
  async function runWorkflow(workflowId: string, signal?: AbortSignal, as: TestWorkspace = workspace): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
    const started = performance.now();
    const response = await send(`${env.url}/api/workflows/${workflowId}/run`, {
      method: "POST",
      headers: { Authorization: `Bearer ${as.members.editor.accessToken}`, "content-type": "application/json" },
      body: "{}",
      signal,
    });
    const body = (await response.json()) as Record<string, unknown>;
    return { status: response.status, body, ms: performance.now() - started };
  }

  beforeAll(async () => {
    workspace = await createWorkspace("Isolation");
    // Manual runs spend the plan's synchronous rate limit (5 a minute on Free); this suite runs more.
    await liftLimits(workspace.id);
    // Warm the pool's threads and the function, so the figures below are not boot times.
    const warm = await createWorkflow(workspace.members.editor, workspace.id, "Warm", fanOut(POOL_SIZE, "return 1;"));
    expect((await runWorkflow(warm)).status).toBe(200);
  });

  it("keeps answering gamification requests while a Function spins until its timeout", async () => {
    const spinner = await createWorkflow(workspace.members.editor, workspace.id, "Spinner", single("function", { code: "while (true) {}", timeoutMs: 4_000 }));
    const idle: number[] = [];
    for (let index = 0; index < 5; index++) {
      const started = performance.now();
      await callApi("GET", "/rankings/nacional", { token: workspace.members.editor.accessToken, query: { periodo: "mensal" } });
      idle.push(performance.now() - started);
    }
    const spinning = runWorkflow(spinner);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const busy: number[] = [];
    const statuses = new Set<number>();
    const until = performance.now() + 3_000;
    while (performance.now() < until) {
      const started = performance.now();
      statuses.add((await callApi("GET", "/rankings/nacional", { token: workspace.members.editor.accessToken, query: { periodo: "mensal" } })).status);
      busy.push(performance.now() - started);
      // Paced: an unpaced loop on a fast machine passes the gateway's per-caller rate and gets 429s.
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const run = await spinning;
    expect(run.status).toBe(500);
    expect(run.body).toMatchObject({ errorCode: "SANDBOX_TIMEOUT", failedBlock: { id: "work" } });
    // Served all along: several answers in the 3 s (a stalled function gives one, after the spin),
    // none of them waiting for the spinning code. The count stays low: the machine may be busy.
    expect(busy.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...busy)).toBeLessThan(Math.max(1_500, 10 * Math.max(...idle)));
    expect([...statuses]).toEqual([200]);
  });

  it("keeps another run's one-block Function fast while a Function spins", async () => {
    const spinner = await createWorkflow(workspace.members.editor, workspace.id, "Spinner 2", single("function", { code: "while (true) {}", timeoutMs: 4_000 }));
    const quick = await createWorkflow(workspace.members.editor, workspace.id, "Quick", single("function", { code: "return 6 * 7;" }));
    const spinning = runWorkflow(spinner);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const answer = await runWorkflow(quick);
    expect(answer.status).toBe(200);
    expect(answer.body.output).toEqual({ result: 42, stdout: "" });
    // Had it waited for the spinner's thread it would have taken at least the spinner's 4 s, less
    // the 300 ms head start; a busy machine can take a few seconds either way.
    expect(answer.ms).toBeLessThan(3_200);
    expect((await spinning).body).toMatchObject({ errorCode: "SANDBOX_TIMEOUT" });
  });

  it("runs the independent Function branches of a parallel at the same time, up to its account's share of the threads", async () => {
    const id = await createWorkflow(workspace.members.editor, workspace.id, "Busy branches", fanOut(ACCOUNT_SHARE, busyFor(1_500)));
    const { status, body } = await runWorkflow(id);
    expect(status).toBe(200);
    const results = (body.output as { results: { result: number }[] }).results;
    expect(results).toHaveLength(ACCOUNT_SHARE);
    for (const branch of results) expect(branch.result).toBeGreaterThanOrEqual(1_500);
    // One after another they would take 3 s; side by side about 1.5 s.
    expect((body.metadata as { duration: number }).duration).toBeLessThan(2_700);
  });

  it("keeps another tenant's Function fast while one tenant's parallel spins on every thread it may hold", async () => {
    const other = await createWorkspace("Isolation, another tenant");
    const greedy = await createWorkflow(workspace.members.editor, workspace.id, "Eight spinners", fanOut(2 * POOL_SIZE, "while (true) {}"));
    const quick = await createWorkflow(other.members.editor, other.id, "Other tenant's quick run", single("function", { code: "return 'served';", timeoutMs: 1_000 }));
    const controller = new AbortController();
    const spinning = runWorkflow(greedy, controller.signal).catch((error: unknown) => error);
    try {
      // The spinners take the threads their account may hold; the rest of their calls wait.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      // Had they taken every thread, this run would wait until their run's 8 s budget ran out.
      const answer = await runWorkflow(quick, undefined, other);
      expect(answer.status).toBe(200);
      expect(answer.body.output).toEqual({ result: "served", stdout: "" });
      expect(answer.ms).toBeLessThan(SYNC_BUDGET_MS - 3_000);
    } finally {
      controller.abort();
      await spinning;
    }
  });

  it("stops the spinning Functions of a run its caller abandons, freeing their threads at once", async () => {
    const spinners = await createWorkflow(workspace.members.editor, workspace.id, "Abandoned spinners", fanOut(POOL_SIZE, "while (true) {}"));
    const quick = await createWorkflow(workspace.members.editor, workspace.id, "Quick 2", single("function", { code: "return 'free';" }));
    const controller = new AbortController();
    const abandoned = runWorkflow(spinners, controller.signal).catch((error: unknown) => error);
    // Every thread its account may hold is now spinning for this run (until the 8 s budget, were it not cancelled).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const cancelledAt = performance.now();
    controller.abort();
    await abandoned;
    const answer = await runWorkflow(quick);
    expect(answer.status).toBe(200);
    expect(answer.body.output).toEqual({ result: "free", stdout: "" });
    // Had the cancellation not reached the spinning code, this run would wait for a thread until
    // the abandoned run's budget ran out, 7 s from now.
    expect(performance.now() - cancelledAt).toBeLessThan(SYNC_BUDGET_MS - 3_000);
  });

  it("answers a run past the synchronous budget with 408, not the host's 546", async () => {
    const id = await createWorkflow(workspace.members.editor, workspace.id, "Long wait", single("wait", { amount: 20, unit: "seconds" }));
    const { status, body, ms } = await runWorkflow(id);
    expect(status).toBe(408);
    expect(body).toMatchObject({ success: false, code: "EXECUTION_TIMEOUT", errorCode: "RUN_TIMEOUT" });
    expect(ms).toBeGreaterThanOrEqual(SYNC_BUDGET_MS - 500);
    expect(ms).toBeLessThan(SYNC_BUDGET_MS + 5_000);
  }, 30_000);

  it("refuses a timeoutMs above the synchronous budget", async () => {
    const id = await createWorkflow(workspace.members.editor, workspace.id, "Too long", single("function", { code: "return 1;" }));
    const response = await send(`${env.url}/api/workflows/${id}/run`, {
      method: "POST",
      headers: { Authorization: `Bearer ${workspace.members.editor.accessToken}`, "content-type": "application/json" },
      body: JSON.stringify({ timeoutMs: SYNC_BUDGET_MS + 1 }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "INVALID_BODY" });
  });
});
