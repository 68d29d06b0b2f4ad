/**
 * Flow control declared in the workflow (issue 32 item 2, docs/flow-control.md) through the real
 * interfaces: a concurrency key over the trigger's input with a limit per key. 50 async runs of one
 * key admitted at once from 8 database connections under a limit of 1 run one at a time, as their
 * recorded start and end times show, while a run of another key is not held back; a sync run over a
 * key's limit is answered 429 CONCURRENCY_KEY_LIMIT_EXCEEDED through HTTP; among a key's waiters the
 * higher priority starts first.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import type { FlowControl } from "../../supabase/functions/_shared/workflows/state/flow-control.ts";
import { env } from "../helpers/env.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { apiKey, call, deployedWorkflow, eventually, execute, expectDocumented, setPlan, sql } from "./execute-api.ts";

const EXECUTE = "/api/workflows/{workflowId}/execute";
/** Eight connections of their own, so the 50 admissions really race. */
const racers = postgres(env.dbUrl, { max: 8, onnotice: () => {} });

let workspace: TestWorkspace;
let key: string;

beforeAll(async () => {
  workspace = await createWorkspace("Flow control");
  // The account allows plenty at once: only the key holds runs back.
  await setPlan(workspace.id, "free", { sync_per_minute: 1000, async_per_minute: 1000, concurrent_runs: 100 });
  key = (await apiKey(workspace.members.editor)).key;
});

afterAll(async () => {
  await racers.end();
  await sql.end();
});

/** A deployed workflow `API → [Pause →] Done` with this flow control. */
function flowWorkflow(name: string, flowControl: FlowControl, pauseSeconds = 0): Promise<string> {
  const builder = new WorkflowBuilder().block("api", "api_trigger", {}, { name: "API" }).block("done", "response", { body: { ok: true } }, { name: "Done" });
  if (pauseSeconds > 0) builder.block("pause", "wait", { amount: pauseSeconds, unit: "seconds" }, { name: "Pause" }).chain("api", "pause", "done");
  else builder.chain("api", "done");
  return deployedWorkflow(workspace.members.editor, workspace.id, name, { ...builder.build(), settings: { flowControl } });
}

/** Slots of one key of a workflow in use, as its counter holds them. */
async function keyInUse(workflowId: string, runKey: string): Promise<number> {
  const [row] = await sql<{ in_use: number }[]>`select in_use from workflows_private.concurrency_slots where scope = ${`key:${workflowId}:${runKey}`}`;
  return row?.in_use ?? 0;
}

type RunTimes = { id: string; status: string; started_at: Date | null; ended_at: Date | null; concurrency_key: string | null; waited_ms: number };

/** The runs' times, once every one has completed. */
function completed(ids: string[], timeoutMs = 120_000): Promise<RunTimes[]> {
  return eventually(`${ids.length} runs to complete`, () => sql<RunTimes[]>`
    select id::text, status::text, started_at, ended_at, concurrency_key, waited_ms from public.workflow_executions where id = any(${ids}::uuid[]) order by started_at`,
  (rows) => rows.length === ids.length && rows.every((row) => row.status === "completed"), timeoutMs);
}

describe("flow control: a concurrency key", () => {
  it("runs 50 async runs of one key admitted at once from 8 connections one at a time, and does not hold another key back", async () => {
    const quick = await flowWorkflow("Per customer", { concurrency: { key: "<api.account>", limit: 1 } });
    const admit = (input: unknown) => racers<{ answer: { status: number; executionId: string; waiting: boolean } }[]>`
      select public.admit_workflow_run(p_workflow_id => ${quick}, p_trigger => 'api', p_mode => 'async', p_api_key => ${key},
        p_input => ${racers.json(input as never)}) as answer`.then(([row]) => row.answer);
    const answers = await Promise.all(Array.from({ length: 50 }, (_, n) => admit({ account: "a", n })));
    expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(202));
    // How many start without waiting depends on how fast the first ones finish (a run may end before
    // the last admissions arrive); what the limit guarantees is below: no two intervals overlap.
    expect(answers.some((answer) => answer.waiting)).toBe(true);
    // While key "a" has runs waiting, a run of key "b" starts at once.
    const other = await admit({ account: "b" });
    expect(other).toMatchObject({ status: 202, waiting: false });

    const runs = await completed(answers.map((answer) => answer.executionId));
    expect(runs.every((run) => run.concurrency_key === "a")).toBe(true);
    for (let i = 1; i < runs.length; i += 1) {
      expect(runs[i].started_at!.getTime()).toBeGreaterThanOrEqual(runs[i - 1].ended_at!.getTime());
    }
    expect(runs.filter((run) => run.waited_ms > 0).length).toBeGreaterThan(0);
    const [b] = await completed([other.executionId]);
    expect(b).toMatchObject({ concurrency_key: "b", waited_ms: 0 });
    expect([await keyInUse(quick, "a"), await keyInUse(quick, "b")]).toEqual([0, 0]);
  });

  it("answers a sync run over its key's limit 429 CONCURRENCY_KEY_LIMIT_EXCEEDED with Retry-After, while another key runs", async () => {
    const slow = await flowWorkflow("Slow per customer", { concurrency: { key: "<api.account>", limit: 1 } }, 2);
    const first = execute(slow, key, { account: "a" });
    await eventually("the first run to hold key a", () => keyInUse(slow, "a"), (count) => count === 1);
    const refused = await execute(slow, key, { account: "a" });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: "CONCURRENCY_KEY_LIMIT_EXCEEDED", retryAfter: 1, concurrency: { key: "a", limit: 1 }, error: expect.stringContaining('key "a"') });
    expect(refused.headers.get("retry-after")).toBe("1");
    expectDocumented("POST", EXECUTE, refused);
    expect((await execute(slow, key, { account: "b" })).status).toBe(200);
    expect((await first).status).toBe(200);
    expect(await keyInUse(slow, "a")).toBe(0);
  });

  it("starts a key's waiter with the higher priority first, and shows the key and priority in the runs API", async () => {
    const slow = await flowWorkflow("Prioritised", { concurrency: { key: "<api.account>", limit: 1 }, priority: "<api.priority>" }, 1);
    const holder = execute(slow, key, { account: "a" });
    await eventually("the holder to hold key a", () => keyInUse(slow, "a"), (count) => count === 1);
    const low = await execute(slow, key, { account: "a", priority: 1 }, { "X-Execution-Mode": "async" });
    const high = await execute(slow, key, { account: "a", priority: 9 }, { "X-Execution-Mode": "async" });
    expect([low.status, high.status]).toEqual([202, 202]);
    const lowId = (low.body as { executionId: string }).executionId;
    const highId = (high.body as { executionId: string }).executionId;
    expect((await holder).status).toBe(200);
    const runs = await completed([lowId, highId], 60_000);
    expect(runs.map((run) => run.id)).toEqual([highId, lowId]);
    const detail = await call("GET", `/api/v2/runs/${lowId}`, { headers: { "X-API-Key": key } });
    expect(detail.status).toBe(200);
    expect((detail.body as { data: { concurrency: unknown } }).data.concurrency).toMatchObject({ key: "a", keyLimit: 1, priority: 1, waited: true, waiting: false });
    expectDocumented("GET", "/api/v2/runs/{runId}", detail);
  });
});
