/**
 * Re-run bench (`npm run bench -- rerun`), through the gateway and the `api` function
 * (docs/workflow-runs.md, "Re-running runs"): a `fromBlock` re-run of the last block of a 40-block
 * chain should cost about one block, not forty. In the same run, sync, with the seeded demo key:
 *
 * - a full run of the chain (an API trigger and 39 Function blocks, each in the sandbox);
 * - `POST /api/v2/runs/{runId}/rerun {"fromBlock": "<last block>"}` of one such run: 39 blocks
 *   replayed from the original's recorded outcomes, the last one run again;
 * - a one-block run (an API trigger and one Function block).
 *
 * For each: the request's time seen by the client (p50 of RUNS) and the executor's duration as
 * recorded (p50). All three make the same two lifecycle calls (admit, finish: a re-run's outcomes,
 * replayed ones included, go with its finish in one batch), so what differs is the executor's work.
 * The account is Enterprise with a 10-million-a-minute override, so no bucket empties.
 */
import postgres from "postgres";
import { WorkflowBuilder } from "../supabase/functions/_shared/workflows/state/state-builder.ts";
import type { WorkflowState } from "../supabase/functions/_shared/workflows/state/state-schema.ts";
import { ascending, percentile, report, requiredEnv, verdict } from "./bench-support.ts";
import { unlimitedDemoWorkspace } from "./demo-workspace.ts";

const DEMO_KEY = "orb_local_only_demo_key_000000000000000000000000";
const CHAIN_BLOCKS = 40;
/** Measured requests of each kind, after WARMUP unmeasured ones. */
const RUNS = 30;
const WARMUP = 5;
/** The re-run should cost at most this many one-block runs. */
const GOAL_RATIO = 2;

/** One request's client-side time and the executor's duration of the run it made. */
interface Sample {
  wallMs: number;
  executorMs: number;
}

/** Runs the re-run bench and prints its figures. */
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
    const chainBuilder = new WorkflowBuilder().block("api", "api_trigger", {}, { name: "API" });
    const ids = ["api"];
    for (let index = 1; index < CHAIN_BLOCKS; index++) {
      chainBuilder.block(`b${index}`, "function", { code: `return ${index};` }, { name: `B${index}` });
      ids.push(`b${index}`);
    }
    const last = ids[ids.length - 1];
    const chain = await deploy(`Bench re-run: ${CHAIN_BLOCKS} blocks`, chainBuilder.chain(...ids).build());
    const single = await deploy("Bench re-run: one block", new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("b1", "function", { code: "return 1;" }, { name: "B1" })
      .chain("api", "b1").build());

    /** POSTs `path` with `body`, and reads back the executor's duration of the run it made. */
    const timed = async (path: string, body: unknown): Promise<Sample & { executionId: string }> => {
      const started = performance.now();
      const response = await fetch(`${url}${path}`, { method: "POST", headers: { "X-API-Key": DEMO_KEY, "Content-Type": "application/json" }, body: JSON.stringify(body) });
      const answer = (await response.json()) as { executionId?: string };
      const wallMs = performance.now() - started;
      if (response.status !== 200 || !answer.executionId) throw new Error(`${path} answered ${response.status}: ${JSON.stringify(answer)}`);
      const [{ duration }] = await sql<{ duration: number }[]>`select duration_ms as duration from public.workflow_executions where id = ${answer.executionId}`;
      return { wallMs, executorMs: duration, executionId: answer.executionId };
    };
    const original = (await timed(`/api/workflows/${chain}/execute`, {})).executionId;
    const kinds = {
      full: () => timed(`/api/workflows/${chain}/execute`, {}),
      rerun: () => timed(`/api/v2/runs/${original}/rerun`, { fromBlock: last }),
      single: () => timed(`/api/workflows/${single}/execute`, {}),
    };
    const samples: Record<keyof typeof kinds, Sample[]> = { full: [], rerun: [], single: [] };
    for (let round = 0; round < WARMUP + RUNS; round++) {
      // Interleaved, so the machine's load (shared, 2 cores) weighs on each kind alike.
      for (const kind of Object.keys(kinds) as (keyof typeof kinds)[]) {
        const sample = await kinds[kind]();
        if (round >= WARMUP) samples[kind].push(sample);
      }
    }
    const p50 = (kind: keyof typeof kinds, field: keyof Sample) => percentile(ascending(samples[kind].map((sample) => sample[field])), 0.5);
    const [rerunWall, fullWall, singleWall] = [p50("rerun", "wallMs"), p50("full", "wallMs"), p50("single", "wallMs")];
    const [rerunExec, fullExec, singleExec] = [p50("rerun", "executorMs"), p50("full", "executorMs"), p50("single", "executorMs")];

    console.log(`Re-running the last block of a ${CHAIN_BLOCKS}-block chain (sync, through the gateway; p50 of ${RUNS} each, interleaved):`);
    console.log(`  · request time: full run ${fullWall.toFixed(1)} ms, fromBlock re-run ${rerunWall.toFixed(1)} ms, one-block run ${singleWall.toFixed(1)} ms`);
    console.log(`  · executor's duration: full run ${fullExec} ms, fromBlock re-run ${rerunExec} ms, one-block run ${singleExec} ms`);
    const met = rerunWall <= GOAL_RATIO * singleWall;
    console.log(`  ${verdict(met)} the re-run costs ${(rerunWall / singleWall).toFixed(2)}× a one-block run and ${(rerunWall / fullWall).toFixed(2)}× the full ${CHAIN_BLOCKS}-block run (goal ≤ ${GOAL_RATIO}× a one-block run)`);
    report({
      bench: "rerun", metric: `fromBlock re-run of the last of ${CHAIN_BLOCKS} blocks, request p50`, scale: `${CHAIN_BLOCKS} blocks`, value: rerunWall, unit: "ms", higherIsBetter: false,
      baseline: { name: "one-block run", value: singleWall }, goal: { text: `≤ ${GOAL_RATIO}× a one-block run`, met },
    });
    report({
      bench: "rerun", metric: `fromBlock re-run of the last of ${CHAIN_BLOCKS} blocks, request p50`, scale: `${CHAIN_BLOCKS} blocks`, value: rerunWall, unit: "ms", higherIsBetter: false,
      baseline: { name: `full run of the ${CHAIN_BLOCKS}-block chain`, value: fullWall },
    });
  } finally {
    await sql.end();
  }
}
