/**
 * Durable runs bench (`npm run bench -- durable`), through the gateway, the queue and the
 * `workflow-worker` function (docs/workflow-runs.md, "Durable async runs"):
 *
 * - "a parked Wait costs no worker": N async runs park at a Wait past the park threshold (30 s by
 *   default); while they are parked, how many hold a lease, how many queue messages are visible
 *   (what makes the poller invoke a worker) and how many edge-function database sessions are busy —
 *   the goal is 0 of each — then each run's resume latency: its end after its due time;
 * - what checkpointing costs: the executor's duration of a 40-Function chain run async (a checkpoint
 *   per block, one round trip each) against the same chain run sync (outcomes collected in memory,
 *   stored with the finish in one batch), per block.
 *
 * The runs are the seeded builder's, on an Enterprise account with a 10-million-a-minute override.
 */
import postgres from "postgres";
import { WorkflowBuilder } from "../supabase/functions/_shared/workflows/state/state-builder.ts";
import type { WorkflowState } from "../supabase/functions/_shared/workflows/state/state-schema.ts";
import { ascending, percentile, report, requiredEnv, verdict } from "./bench-support.ts";
import { until } from "../test/helpers/until.ts";
import { unlimitedDemoWorkspace } from "./demo-workspace.ts";

const DEMO_KEY = "orb_local_only_demo_key_000000000000000000000000";
/** Parked runs at once. */
const PARKED_RUNS = 20;
/** Past the default park threshold (30 s), so each run parks. */
const WAIT_SECONDS = 40;
/** Runs of each mode for the checkpoint cost. */
const CHAIN_RUNS = 5;
const CHAIN_BLOCKS = 40;
/** How often the waits look again. */
const POLL_MS = 200;

/** Runs the durable-runs bench and prints its figures. */
export async function run(): Promise<void> {
  const url = requiredEnv("SUPABASE_URL");
  const sql = postgres(requiredEnv("SUPABASE_DB_URL"), { max: 2, onnotice: () => {} });
  try {
    const { workspace, builder } = await unlimitedDemoWorkspace(sql);
    const deploy = async (name: string, state: WorkflowState): Promise<string> => {
      const [{ id }] = await sql<{ id: string }[]>`insert into public.workflows (workspace_id, name, state, created_by) values (${workspace}, ${name}, ${sql.json(state as never)}, ${builder}) returning id`;
      await sql.begin(async (tx) => {
        await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: builder, role: "authenticated" })}, true), set_config('role', 'authenticated', true)`;
        await tx`select public.deploy_workflow(${id})`;
      });
      return id;
    };
    const execute = async (id: string, mode: "sync" | "async"): Promise<string> => {
      const response = await fetch(`${url}/api/workflows/${id}/execute`, {
        method: "POST", headers: { "X-API-Key": DEMO_KEY, "X-Execution-Mode": mode, "Content-Type": "application/json" }, body: "{}",
      });
      const body = (await response.json()) as { executionId?: string };
      if (!body.executionId) throw new Error(`execute answered ${response.status}: ${JSON.stringify(body)}`);
      return body.executionId;
    };

    const pausing = await deploy("Bench parked wait", new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("pause", "wait", { amount: WAIT_SECONDS, unit: "seconds" }, { name: "Pause" })
      .block("done", "function", { code: "return 'resumed';" }, { name: "Done" })
      .chain("api", "pause", "done").build());
    const chainBuilder = new WorkflowBuilder().block("api", "api_trigger", {}, { name: "API" });
    const ids = ["api"];
    for (let index = 1; index < CHAIN_BLOCKS; index++) {
      chainBuilder.block(`b${index}`, "function", { code: `return ${index};` }, { name: `B${index}` });
      ids.push(`b${index}`);
    }
    const chain = await deploy(`Bench ${CHAIN_BLOCKS} Function blocks`, chainBuilder.chain(...ids).build());

    console.log(`Durable runs, through the gateway, the queue and the worker (${PARKED_RUNS} runs at a ${WAIT_SECONDS} s Wait; park threshold 30 s):`);
    const runs = await Promise.all(Array.from({ length: PARKED_RUNS }, () => execute(pausing, "async")));
    await until("every run to park", async () => {
      const [{ parked }] = await sql<{ parked: number }[]>`select count(*)::int as parked from public.workflow_executions where id = any(${runs}) and parked_until is not null`;
      return parked === PARKED_RUNS;
    }, 60_000, POLL_MS);
    const dueTimes = new Map((await sql<{ id: string; due: Date }[]>`select id, parked_until as due from public.workflow_executions where id = any(${runs})`).map((row) => [row.id, row.due.getTime()]));
    // A moment for workers that parked their runs to return.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const [held] = await sql<{ leased: number; visible: number; busy: number }[]>`
      select (select count(*)::int from public.workflow_executions where id = any(${runs}) and parked_until is null and lease_expires_at > now()) as leased,
             (select count(*)::int from pgmq.q_workflow_runs where vt <= now() and message ->> 'executionId' = any(${runs}::text[])) as visible,
             (select count(*)::int from pg_stat_activity where application_name = 'orbita-edge-function' and state <> 'idle') as busy`;
    console.log(`  ${verdict(held.leased === 0 && held.visible === 0 && held.busy === 0)} while ${PARKED_RUNS} runs are parked: runs holding a lease ${held.leased}, ` +
      `queue messages visible to a worker ${held.visible}, busy edge-function database sessions ${held.busy} (goal 0 each)`);

    await until("every run to resume and finish", async () => {
      const [{ open }] = await sql<{ open: number }[]>`select count(*)::int as open from public.workflow_executions where id = any(${runs}) and status in ('queued', 'running')`;
      return open === 0;
    }, (WAIT_SECONDS + 120) * 1000, POLL_MS);
    const ended = await sql<{ id: string; status: string; ended: Date }[]>`select id, status::text, ended_at as ended from public.workflow_executions where id = any(${runs})`;
    const latencies = ended.map((row) => row.ended.getTime() - (dueTimes.get(row.id) as number));
    const completed = ended.filter((row) => row.status === "completed").length;
    console.log(`  ${verdict(completed === PARKED_RUNS)} resumed and completed: ${completed}/${PARKED_RUNS}; end after the Wait's due time: ` +
      `p50 ${percentile(ascending(latencies), 0.5).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms (the local poller looks once a second when idle; hosted pg_cron once a minute)`);

    const durations = async (mode: "sync" | "async"): Promise<number[]> => {
      const samples: number[] = [];
      for (let index = 0; index < CHAIN_RUNS; index++) {
        const id = await execute(chain, mode);
        await until("the chain run to end", async () => {
          const [{ status }] = await sql<{ status: string }[]>`select status::text from public.workflow_executions where id = ${id}`;
          return status === "completed" || status === "failed";
        }, 60_000, POLL_MS);
        const [{ duration }] = await sql<{ duration: number }[]>`select duration_ms as duration from public.workflow_executions where id = ${id}`;
        samples.push(duration);
      }
      return samples;
    };
    await durations("sync");
    const sync = percentile(ascending(await durations("sync")), 0.5);
    const durable = percentile(ascending(await durations("async")), 0.5);
    report({
      bench: "durable", metric: `${CHAIN_BLOCKS}-Function chain, async with a checkpoint per block, p50`, scale: `${CHAIN_BLOCKS} blocks`, value: durable, unit: "ms", higherIsBetter: false,
      baseline: { name: "same chain, sync, outcomes collected in memory", value: sync },
    });
    report({
      bench: "durable", metric: `parked runs (${PARKED_RUNS}) holding a lease, a visible message or a busy session`, scale: `${PARKED_RUNS} runs`, value: held.leased + held.visible + held.busy, unit: "",
      higherIsBetter: false, goal: { text: "0", met: held.leased + held.visible + held.busy === 0 },
    });
    console.log(`  · a ${CHAIN_BLOCKS}-Function chain, the executor's duration (median of ${CHAIN_RUNS}): sync, outcomes collected in memory ${sync} ms; ` +
      `async, a checkpoint per block ${durable} ms: ${((durable - sync) / CHAIN_BLOCKS).toFixed(2)} ms per block`);
  } finally {
    await sql.end();
  }
}
