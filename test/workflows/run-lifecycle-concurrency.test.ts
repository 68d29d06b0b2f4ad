/**
 * The run lifecycle under concurrency, straight against Postgres as the edge functions will call it
 * (the service role, one connection per simulated function instance): a rate-limit bucket of
 * capacity C admits exactly C of many simultaneous requests, one Idempotency-Key runs once, a run
 * finished by several workers at once is charged once, and workers claiming together never share a
 * run nor lose one.
 */
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { env } from "../helpers/env.ts";
import { until } from "../helpers/until.ts";

const SESSIONS = 16;

/** An admit or finish answer, as far as these tests read it. */
interface Answer {
  status?: number;
  outcome: string;
  code?: string;
  executionId?: string;
  runStatus?: string;
}

function connection(): postgres.Sql {
  return postgres(env.dbUrl, { max: 1, onnotice: () => {} });
}

/** Runs `work` in a transaction as the service role, as the direct RPC path does. */
async function asService<T>(sql: postgres.Sql, work: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  return (await sql.begin(async (tx) => {
    await tx`select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true)`;
    return await work(tx);
  })) as T;
}

async function admit(sql: postgres.Sql, args: { workflowId: string; key: string | null; mode?: "sync" | "async"; trigger?: string; idempotencyKey?: string; hash?: string }): Promise<Answer> {
  return await asService(sql, async (tx) => {
    const [{ answer }] = await tx<{ answer: Answer }[]>`
      select public.admit_workflow_run(${args.workflowId}::uuid, ${args.trigger ?? "api"}, ${args.mode ?? "sync"}, ${args.key},
        p_idempotency_key => ${args.idempotencyKey ?? null}, p_request_hash => ${args.hash ?? null}) as answer`;
    return answer;
  });
}

/** A workspace on a Free account with one deployed API workflow and a workspace key. */
async function deployedWorkflow(sql: postgres.Sql, name: string): Promise<{ workflowId: string; key: string; accountId: string }> {
  const userId = randomUUID();
  const workflowId = randomUUID();
  await sql`insert into auth.users (id, email, aud, role) values (${userId}, ${`${userId}@runs-concurrency.test`}, 'authenticated', 'authenticated')`;
  return (await sql.begin(async (tx) => {
    await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${JSON.stringify({ sub: userId, role: "authenticated" })}, true)`;
    const [workspace] = await tx<{ id: string; billing_account_id: string }[]>`select id, billing_account_id from public.create_workspace(${name})`;
    const state = {
      blocks: { api: { id: "api", type: "api_trigger", name: "API", config: {} }, done: { id: "done", type: "response", name: "Done", config: { body: "ok" } } },
      edges: [{ id: "e1", source: "api", target: "done" }],
    };
    await tx`insert into public.workflows (id, workspace_id, name, state) values (${workflowId}, ${workspace.id}, ${name}, ${tx.json(state)})`;
    await tx`select public.deploy_workflow(${workflowId})`;
    const [{ key }] = await tx<{ key: string }[]>`select key from public.create_api_key('Concurrency', ${workspace.id})`;
    return { workflowId, key, accountId: workspace.billing_account_id };
  })) as { workflowId: string; key: string; accountId: string };
}

describe("the run lifecycle under concurrency", () => {
  const admin = connection();
  const sessions = Array.from({ length: SESSIONS }, connection);

  beforeAll(async () => {
    // Opening every connection first, so the races below are between queries, not connection set-ups.
    await Promise.all(sessions.map((sql) => sql`select 1`));
  });

  afterAll(async () => {
    await Promise.all([admin, ...sessions].map((sql) => sql.end()));
  });

  it("admits exactly as many simultaneous runs as the bucket holds", async () => {
    const { workflowId, key, accountId } = await deployedWorkflow(admin, "Bucket");
    const started = Date.now();
    const answers = await Promise.all(sessions.map((sql) => admit(sql, { workflowId, key })));
    const elapsedSeconds = (Date.now() - started) / 1000;
    const admitted = answers.filter((answer) => answer.outcome === "admitted").length;
    // Free holds 5 sync runs and refills one every 12 s; on a slow machine a refill may land mid-race.
    expect(admitted).toBeGreaterThanOrEqual(5);
    expect(admitted).toBeLessThanOrEqual(5 + Math.floor(elapsedSeconds / 12));
    expect(answers.filter((answer) => answer.outcome === "refused").every((answer) => answer.status === 429 && answer.code === "RATE_LIMIT_EXCEEDED")).toBe(true);

    const [state] = await admin<{ runs: number; charges: number; cost: string }[]>`
      select (select count(*)::int from public.workflow_executions where workflow_id = ${workflowId}) as runs,
        (select count(*)::int from public.usage_ledger where workflow_id = ${workflowId}) as charges,
        (select period_cost::text from workflows_private.account_meters where billing_account_id = ${accountId}) as cost`;
    expect(state).toEqual({ runs: admitted, charges: admitted, cost: (admitted * 0.001).toFixed(10) });
  });

  it("runs one request however many arrive at once with the same Idempotency-Key", async () => {
    const { workflowId, key } = await deployedWorkflow(admin, "Idempotent");
    const answers = await Promise.all(sessions.map((sql) => admit(sql, { workflowId, key, mode: "async", idempotencyKey: "order-1", hash: "body-1" })));
    const admitted = answers.filter((answer) => answer.outcome === "admitted");
    expect(admitted).toHaveLength(1);
    const replays = answers.filter((answer) => answer.outcome === "replay");
    expect(replays).toHaveLength(SESSIONS - 1);
    expect(new Set(replays.map((answer) => answer.executionId))).toEqual(new Set([admitted[0].executionId]));
    const [{ runs }] = await admin<{ runs: number }[]>`select count(*)::int as runs from public.workflow_executions where workflow_id = ${workflowId}`;
    expect(runs).toBe(1);
  });

  it("charges a run once when several workers finish it at the same moment", async () => {
    const { workflowId, key, accountId } = await deployedWorkflow(admin, "Finished once");
    const { executionId } = await admit(admin, { workflowId, key });
    const usage = [{ model: "gpt-4o", promptTokens: 1000, completionTokens: 500 }];
    const answers = await Promise.all(sessions.map((sql) =>
      asService(sql, async (tx) => {
        const [{ answer }] = await tx<{ answer: Answer }[]>`
          select public.finish_workflow_run(${executionId!}::uuid, 'completed', p_model_usage => ${tx.json(usage)}) as answer`;
        return answer;
      })));
    expect(answers.filter((answer) => answer.outcome === "finished")).toHaveLength(1);
    expect(answers.filter((answer) => answer.outcome === "already_finished")).toHaveLength(SESSIONS - 1);
    const [state] = await admin<{ charges: string[]; cost: string }[]>`
      select (select array_agg(format('%s %s', kind, amount) order by kind) from public.usage_ledger where execution_id = ${executionId!}) as charges,
        (select period_cost::text from workflows_private.account_meters where billing_account_id = ${accountId}) as cost`;
    expect(state).toEqual({ charges: ["execution 0.0010000000", "models 0.0187500000"], cost: "0.0197500000" });
  });

  it("hands each queued run to one worker, and loses none", async () => {
    const { workflowId, key } = await deployedWorkflow(admin, "Queued");
    await admin`insert into public.billing_account_overrides (billing_account_id, async_per_minute)
      select billing_account_id, 1000 from public.workspaces w join public.workflows f on f.workspace_id = w.id where f.id = ${workflowId}`;
    const queued = new Set<string>();
    for (let index = 0; index < 12; index++) queued.add((await admit(admin, { workflowId, key, mode: "async" })).executionId!);

    const claimedBy = new Map<string, number>();
    let round = 0;
    // Workers claim three at a time, all at once, until the queue has nothing visible left.
    while (round++ < 20) {
      const batches = await Promise.all(sessions.slice(0, 6).map((sql) =>
        asService(sql, async (tx) => {
          const [{ claimed }] = await tx<{ claimed: { runs: { executionId: string; attempt: number }[] } }[]>`select public.claim_workflow_runs(3, 60) as claimed`;
          return claimed.runs;
        })));
      const runs = batches.flat();
      if (runs.length === 0) break;
      for (const run of runs) claimedBy.set(run.executionId, (claimedBy.get(run.executionId) ?? 0) + 1);
    }
    // The workflow-worker function drains the same queue meanwhile: a run it took is one these
    // sessions never saw. Either way each run was taken exactly once: attempt 1, no longer queued.
    for (const executionId of queued) expect(claimedBy.get(executionId) ?? 0, executionId).toBeLessThanOrEqual(1);
    // A message the worker has read but not yet recorded its claim of is invisible to the sessions
    // and still attempt 0: wait for the worker to record what it holds before reading the runs.
    await until("the workflow worker to record the claims of the runs it took", async () =>
      (await admin<{ waiting: number }[]>`select count(*)::int as waiting from public.workflow_executions where workflow_id = ${workflowId} and attempt = 0`)[0].waiting === 0);
    const runs = await admin<{ id: string; attempt: number; status: string }[]>`
      select id, attempt, status::text from public.workflow_executions where workflow_id = ${workflowId}`;
    expect(runs).toHaveLength(12);
    for (const run of runs) {
      expect(run.attempt, run.id).toBe(1);
      expect(["running", "completed"], run.id).toContain(run.status);
      if (!claimedBy.has(run.id)) expect(run.status, run.id).not.toBe("queued");
    }
  });
});
