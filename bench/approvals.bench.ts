/**
 * Approvals bench (`npm run bench -- approvals`), through the gateway, the queue and the
 * `workflow-worker` function (docs/workflow-runs.md, "Approvals"):
 *
 * - "parked approvals cost nothing": APPROVAL_RUNS async runs park at an approval block; while they
 *   wait, how many hold a lease, how many queue messages are visible to a worker and how many
 *   edge-function database sessions are busy (goal 0 each), beside WAIT_RUNS runs parked at a long
 *   Wait measured the same way (the baseline);
 * - "a decision resumes its run at once": DECIDED approvals are decided one after another through
 *   the resume API, and each run's end is timed from its decision (goal p95 ≤ 1 s), beside the Wait
 *   runs' end after their due time (the same parking, woken by the clock).
 *
 * The runs are the seeded builder's, on an Enterprise account with a 10-million-a-minute override.
 */
import postgres from "postgres";
import { WorkflowBuilder } from "../supabase/functions/_shared/workflows/state/state-builder.ts";
import type { WorkflowState } from "../supabase/functions/_shared/workflows/state/state-schema.ts";
import { ascending, percentile, report, requiredEnv, signedInToken, verdict } from "./bench-support.ts";
import { until } from "../test/helpers/until.ts";

const DEMO_KEY = "orb_local_only_demo_key_000000000000000000000000";
const HELLO_API = "f5000000-0000-4000-8000-000000000003";
/** Runs parked at an approval at once. */
const APPROVAL_RUNS = 1_000;
/** Runs parked at a long Wait, the baseline. */
const WAIT_RUNS = 100;
/** Past the default park threshold (30 s), so each run parks. */
const WAIT_SECONDS = 40;
/** Approvals decided through the resume API, one after another, for the resume latency. */
const DECIDED = 100;
/** Admissions in flight at once. */
const ADMIT_CONCURRENCY = 20;
const POLL_MS = 200;

/** The held resources of `runs`: leases, visible queue messages, busy edge-function sessions. */
async function held(sql: postgres.Sql, runs: string[]): Promise<{ leased: number; visible: number; busy: number }> {
  const [row] = await sql<{ leased: number; visible: number; busy: number }[]>`
    select (select count(*)::int from public.workflow_executions where id = any(${runs}) and parked_until is null and lease_expires_at > now()) as leased,
           (select count(*)::int from pgmq.q_workflow_runs where vt <= now() and message ->> 'executionId' = any(${runs}::text[])) as visible,
           (select count(*)::int from pg_stat_activity where application_name = 'orbita-edge-function' and state <> 'idle') as busy`;
  return row;
}

/** Runs the approvals bench and prints its figures. */
export async function run(): Promise<void> {
  const url = requiredEnv("SUPABASE_URL");
  const sql = postgres(requiredEnv("SUPABASE_DB_URL"), { max: 2, onnotice: () => {} });
  try {
    const [{ workspace, account, builder }] = await sql<{ workspace: string; account: string; builder: string }[]>`
      select w.workspace_id as workspace, ws.billing_account_id as account, w.created_by as builder
      from public.workflows w join public.workspaces ws on ws.id = w.workspace_id where w.id = ${HELLO_API}`;
    await sql`update public.billing_accounts set plan = 'enterprise' where id = ${account}`;
    await sql`insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute, usage_limit, logs_per_minute)
      values (${account}, 10000000, 10000000, 1000000000, 10000000) on conflict (billing_account_id) do update
      set sync_per_minute = excluded.sync_per_minute, async_per_minute = excluded.async_per_minute, usage_limit = excluded.usage_limit, logs_per_minute = excluded.logs_per_minute`;
    const deploy = async (name: string, state: WorkflowState): Promise<string> => {
      const [{ id }] = await sql<{ id: string }[]>`insert into public.workflows (workspace_id, name, state, created_by) values (${workspace}, ${name}, ${sql.json(state as never)}, ${builder}) returning id`;
      await sql.begin(async (tx) => {
        await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: builder, role: "authenticated" })}, true), set_config('role', 'authenticated', true)`;
        await tx`select public.deploy_workflow(${id})`;
      });
      return id;
    };
    // The gateway limits functions to 500 requests a minute per caller (JWT sub, else address): the
    // requests take turns carrying one of 20 tokens of their own, which the endpoints ignore.
    const tokens = await Promise.all(Array.from({ length: 20 }, (_, index) => signedInToken(requiredEnv("SUPABASE_JWT_SECRET"), `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`)));
    let turn = 0;
    const caller = () => ({ Authorization: `Bearer ${tokens[turn++ % tokens.length]}` });
    const execute = async (id: string): Promise<string> => {
      const response = await fetch(`${url}/api/workflows/${id}/execute`, {
        method: "POST", headers: { ...caller(), "X-API-Key": DEMO_KEY, "X-Execution-Mode": "async", "Content-Type": "application/json" }, body: "{}",
      });
      const body = (await response.json()) as { executionId?: string };
      if (!body.executionId) throw new Error(`execute answered ${response.status}: ${JSON.stringify(body)}`);
      return body.executionId;
    };
    const admit = async (id: string, count: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let start = 0; start < count; start += ADMIT_CONCURRENCY) {
        ids.push(...await Promise.all(Array.from({ length: Math.min(ADMIT_CONCURRENCY, count - start) }, () => execute(id))));
      }
      return ids;
    };
    const parked = (runs: string[]) => until(`${runs.length} runs to park`, async () => {
      const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from public.workflow_executions where id = any(${runs}) and parked_until is not null`;
      return count === runs.length;
    }, 600_000, POLL_MS);

    const approving = await deploy("Bench approval", new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("gate", "approval", { approvers: ["bench-approver@approvals.test"], message: "Go on?", timeoutMinutes: 120 }, { name: "Gate" })
      .block("done", "function", { code: "return 'resumed';" }, { name: "Done" })
      .chain("api", "gate", "done").build());
    const pausing = await deploy("Bench long wait", new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("pause", "wait", { amount: WAIT_SECONDS, unit: "seconds" }, { name: "Pause" })
      .block("done", "function", { code: "return 'resumed';" }, { name: "Done" })
      .chain("api", "pause", "done").build());

    console.log(`Approvals, through the gateway, the queue and the worker (${APPROVAL_RUNS} runs at an approval; baseline ${WAIT_RUNS} runs at a ${WAIT_SECONDS} s Wait):`);
    const parkStarted = Date.now();
    const approvals = await admit(approving, APPROVAL_RUNS);
    await parked(approvals);
    const parkSeconds = (Date.now() - parkStarted) / 1000;
    const waits = await admit(pausing, WAIT_RUNS);
    await parked(waits);
    const waitDue = await Promise.all(waits.map(async (id) => {
      const [{ due }] = await sql<{ due: number }[]>`select extract(epoch from parked_until)::float8 * 1000 as due from public.workflow_executions where id = ${id}`;
      return due;
    }));
    // The approvers' e-mails are sent (work that opening an approval queues, not held by the run),
    // then a moment for workers that parked their runs to return.
    await until("every approval e-mail to be sent", async () => {
      const [{ left }] = await sql<{ left: number }[]>`select count(*)::int as left from pgmq.q_workflow_approval_mail`;
      return left === 0;
    }, 600_000, POLL_MS);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const [approvalsHeld, waitsHeld] = [await held(sql, approvals), await held(sql, waits)];
    const approvalsTotal = approvalsHeld.leased + approvalsHeld.visible + approvalsHeld.busy;
    console.log(`  ${verdict(approvalsTotal === 0)} ${APPROVAL_RUNS} runs parked at an approval (admitted and parked in ${parkSeconds.toFixed(0)} s): runs holding a lease ${approvalsHeld.leased}, ` +
      `queue messages visible ${approvalsHeld.visible}, busy edge-function sessions ${approvalsHeld.busy} (goal 0 each); ${WAIT_RUNS} at a Wait: ${waitsHeld.leased}, ${waitsHeld.visible}, ${waitsHeld.busy}`);

    const decidedRuns = approvals.slice(0, DECIDED);
    const latencies: number[] = [];
    for (const runId of decidedRuns) {
      const response = await fetch(`${url}/api/v2/runs/${runId}/resume`, {
        method: "POST", headers: { ...caller(), "X-API-Key": DEMO_KEY, "Content-Type": "application/json" }, body: JSON.stringify({ input: { decision: "approve" } }),
      });
      if (response.status !== 202) throw new Error(`resume answered ${response.status}: ${await response.text()}`);
      await until("the decided run to end", async () => {
        const [{ status }] = await sql<{ status: string }[]>`select status::text from public.workflow_executions where id = ${runId}`;
        return status !== "running";
      }, 60_000, 20);
      const [{ latency }] = await sql<{ latency: number }[]>`
        select extract(epoch from e.ended_at - a.decided_at)::float8 * 1000 as latency
        from public.workflow_executions e join workflows_private.run_approvals a on a.execution_id = e.id where e.id = ${runId}`;
      latencies.push(latency);
    }
    const [{ completed }] = await sql<{ completed: number }[]>`select count(*)::int as completed from public.workflow_executions where id = any(${decidedRuns}) and status = 'completed'`;

    await until("every Wait run to resume and finish", async () => {
      const [{ open }] = await sql<{ open: number }[]>`select count(*)::int as open from public.workflow_executions where id = any(${waits}) and status in ('queued', 'running')`;
      return open === 0;
    }, (WAIT_SECONDS + 300) * 1000, POLL_MS);
    const waitLatencies = (await sql<{ latency: number }[]>`
      select extract(epoch from e.ended_at)::float8 * 1000 - due as latency from public.workflow_executions e
      join unnest(${waits}::uuid[], ${waitDue}::float8[]) as d(id, due) on d.id = e.id`).map((row) => row.latency);
    const p95 = percentile(ascending(latencies), 0.95);
    const waitP95 = percentile(ascending(waitLatencies), 0.95);
    console.log(`  ${verdict(completed === DECIDED && p95 <= 1_000)} ${DECIDED} approvals decided through the resume API, one after another: completed ${completed}/${DECIDED}; ` +
      `run's end after the decision p50 ${percentile(ascending(latencies), 0.5).toFixed(0)} ms, p95 ${p95.toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms (goal p95 ≤ 1000 ms); ` +
      `baseline, a Wait's run's end after its due time: p50 ${percentile(ascending(waitLatencies), 0.5).toFixed(0)} ms, p95 ${waitP95.toFixed(0)} ms`);

    report({
      bench: "approvals", metric: `parked approvals (${APPROVAL_RUNS}) holding a lease, a visible message or a busy session`, scale: `${APPROVAL_RUNS} runs`, value: approvalsTotal, unit: "",
      higherIsBetter: false, goal: { text: "0", met: approvalsTotal === 0 },
      baseline: { name: `${WAIT_RUNS} runs parked at a Wait`, value: waitsHeld.leased + waitsHeld.visible + waitsHeld.busy },
    });
    report({
      bench: "approvals", metric: "a run's end after its approval's decision, p95", scale: `${DECIDED} decisions`, value: p95, unit: "ms", higherIsBetter: false,
      goal: { text: "≤ 1000 ms", met: p95 <= 1_000 },
      baseline: { name: "a parked Wait's run's end after its due time, p95", value: waitP95 },
    });
  } finally {
    await sql.end();
  }
}
