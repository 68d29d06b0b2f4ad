/**
 * Concurrent runs per billing account (issue 32 item 1, docs/flow-control.md) through the real
 * interfaces: a sync run over the account's limit is answered 429 CONCURRENCY_LIMIT_EXCEEDED with
 * Retry-After through HTTP; 50 async runs admitted at once from 8 database connections under a limit
 * of 1 all run, one at a time, as their recorded start and end times show; sync and async
 * admissions of one account racing from 8 connections never deadlock.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { env } from "../helpers/env.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { apiKey, deployedWorkflow, eventually, execute, expectDocumented, setPlan, sql } from "./execute-api.ts";

const EXECUTE = "/api/workflows/{workflowId}/execute";
/** Eight connections of their own, so the 50 admissions really race. */
const racers = postgres(env.dbUrl, { max: 8, onnotice: () => {} });

let workspace: TestWorkspace;
let key: string;

beforeAll(async () => {
  workspace = await createWorkspace("Concurrency");
  await setPlan(workspace.id, "free", { sync_per_minute: 1000, async_per_minute: 1000, concurrent_runs: 1 });
  key = (await apiKey(workspace.members.editor)).key;
});

afterAll(async () => {
  await racers.end();
  await sql.end();
});

/** The account's slots in use, as its counter holds them. */
async function inUse(): Promise<number> {
  const [row] = await sql<{ in_use: number }[]>`select c.in_use from workflows_private.concurrency_slots c
    join public.workspaces w on c.scope = 'account:' || w.billing_account_id where w.id = ${workspace.id}`;
  return row?.in_use ?? 0;
}

describe("concurrent runs per account", () => {
  it("answers a sync run over the limit 429 CONCURRENCY_LIMIT_EXCEEDED with Retry-After, and runs it once a slot is free", async () => {
    const slow = await deployedWorkflow(workspace.members.editor, workspace.id, "Slow", new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("pause", "wait", { amount: 2, unit: "seconds" }, { name: "Pause" })
      .block("done", "response", { body: { ok: true } }, { name: "Done" })
      .chain("api", "pause", "done").build());
    const first = execute(slow, key, {});
    await eventually("the first run to hold the slot", inUse, (count) => count === 1);
    const refused = await execute(slow, key, {});
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: "CONCURRENCY_LIMIT_EXCEEDED", error: expect.stringContaining("at most 1 runs at once") });
    expect(refused.headers.get("retry-after")).toBe("1");
    expectDocumented("POST", EXECUTE, refused);
    expect((await first).status).toBe(200);
    expect(await inUse()).toBe(0);
    expect((await execute(slow, key, {})).status).toBe(200);
  });

  it("runs 50 async runs admitted at once from 8 connections one at a time under a limit of 1", async () => {
    const quick = await deployedWorkflow(workspace.members.editor, workspace.id, "Quick", new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("done", "response", { body: { ok: true } }, { name: "Done" })
      .chain("api", "done").build());
    const answers = await Promise.all(Array.from({ length: 50 }, (_, n) => racers<{ answer: { status: number; executionId: string; waiting: boolean } }[]>`
      select public.admit_workflow_run(p_workflow_id => ${quick}, p_trigger => 'api', p_mode => 'async', p_api_key => ${key},
        p_input => ${racers.json({ n })}) as answer`.then(([row]) => row.answer)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(202));
    // How many start without waiting depends on how fast the first runs finish while the rest are
    // still being admitted; that some wait is what shows the limit at work, and the intervals below
    // are the guarantee.
    expect(answers.some((answer) => answer.waiting)).toBe(true);
    const ids = answers.map((answer) => answer.executionId);
    const runs = await eventually("all 50 runs to complete", () => sql<{ status: string; started_at: Date; ended_at: Date; waited_ms: number }[]>`
      select status::text, started_at, ended_at, waited_ms from public.workflow_executions where id = any(${ids}::uuid[]) order by started_at`,
    (rows) => rows.every((row) => row.status === "completed"), 120_000);
    for (let i = 1; i < runs.length; i += 1) {
      expect(runs[i].started_at.getTime()).toBeGreaterThanOrEqual(runs[i - 1].ended_at.getTime());
    }
    expect(await inUse()).toBe(0);
  });

  it("admits sync and async runs of one account at once from 8 connections without a deadlock", async () => {
    // Both modes take the account's slot before its meter; when async spent first, the two orders deadlocked.
    await setPlan(workspace.id, "free", { sync_per_minute: 1000, async_per_minute: 1000, concurrent_runs: 1000 });
    const quick = await deployedWorkflow(workspace.members.editor, workspace.id, "Quick both", new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("done", "response", { body: { ok: true } }, { name: "Done" })
      .chain("api", "done").build());
    const answers = await Promise.all(Array.from({ length: 60 }, (_, n) => racers<{ answer: { status: number; executionId: string } }[]>`
      select public.admit_workflow_run(p_workflow_id => ${quick}, p_trigger => 'api', p_mode => ${n % 2 === 0 ? "sync" : "async"}, p_api_key => ${key},
        p_input => ${racers.json({ n })}) as answer`.then(([row]) => row.answer)));
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 60 }, (_, n) => (n % 2 === 0 ? 200 : 202)));
    for (const [n, answer] of answers.entries()) {
      if (n % 2 === 0) await sql`select public.finish_workflow_run(${answer.executionId}::uuid, 'completed', ${sql.json({ ok: true })}, null, ${sql.json([])})`;
    }
    await eventually("every slot to come back", inUse, (count) => count === 0, 120_000);
  });
});
