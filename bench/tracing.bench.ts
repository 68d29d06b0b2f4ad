/**
 * Tracing bench (`npm run bench -- tracing`, docs/tracing.md): execute throughput with trace export
 * on and the collector down must stay ≥ 0.9× the same runs with tracing off, because a run only
 * queues a message when it ends and the export worker (retrying a dead collector) is off its path.
 *
 * In the same run, through the gateway with the seeded demo key: a one-block sync workflow
 * (API trigger and a Function block), CONCURRENCY clients sending REQUESTS requests per phase;
 * phases alternate tracing off (no exporter) and on (an exporter whose endpoint is a closed
 * loopback port, so every export fails and is retried), PHASES of each, and each mode's
 * throughput is its requests over its phases' total time.
 */
import { createServer } from "node:net";
import postgres from "postgres";
import { WorkflowBuilder } from "../supabase/functions/_shared/workflows/state/state-builder.ts";
import { fetchFrom, simulatedClientAddress } from "../test/helpers/clients.ts";
import { report, requiredEnv, verdict } from "./bench-support.ts";
import { unlimitedDemoWorkspace } from "./demo-workspace.ts";

const DEMO_KEY = "orb_local_only_demo_key_000000000000000000000000";
const CONCURRENCY = 4;
const REQUESTS = 120;
const PHASES = 3;
const WARMUP = 20;
const GOAL_RATIO = 0.9;

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** Runs the tracing bench and prints its figures. */
export async function run(): Promise<void> {
  const url = requiredEnv("SUPABASE_URL");
  const sql = postgres(requiredEnv("SUPABASE_DB_URL"), { max: 2, onnotice: () => {} });
  try {
    const { workspace, builder } = await unlimitedDemoWorkspace(sql);
    const state = new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("b1", "function", { code: "return 1;" }, { name: "B1" })
      .chain("api", "b1").build();
    const [{ id: workflowId }] = await sql<{ id: string }[]>`insert into public.workflows (workspace_id, name, state, created_by)
      values (${workspace}, 'Bench tracing: one block', ${sql.json(state as never)}, ${builder}) returning id`;
    await sql.begin(async (tx) => {
      await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: builder, role: "authenticated" })}, true), set_config('role', 'authenticated', true)`;
      await tx`select public.deploy_workflow(${workflowId})`;
    });
    const endpoint = `http://127.0.0.1:${await closedPort()}/v1/traces`;
    const setTracing = (on: boolean) => sql.begin(async (tx) => {
      await tx`select set_config('request.jwt.claims', '{"role": "service_role"}', true), set_config('role', 'service_role', true)`;
      if (on) await tx`insert into public.workflow_trace_exporters (workspace_id, endpoint) values (${workspace}, ${endpoint}) on conflict (workspace_id) do nothing`;
      else await tx`delete from public.workflow_trace_exporters where workspace_id = ${workspace}`;
    });

    const execute = async (send: typeof fetch) => {
      const response = await send(`${url}/api/workflows/${workflowId}/execute`, { method: "POST", headers: { "X-API-Key": DEMO_KEY, "Content-Type": "application/json" }, body: "{}" });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`execute answered ${response.status}`);
    };
    /**
     * Seconds to send `count` requests from CONCURRENCY clients, each phase from a loopback address
     * of its own so the gateway's per-address limit (500 a minute) never answers 429.
     */
    const phase = async (count: number): Promise<number> => {
      let left = count;
      const send = fetchFrom(simulatedClientAddress());
      const started = performance.now();
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (left-- > 0) await execute(send);
      }));
      return (performance.now() - started) / 1000;
    };

    await setTracing(false);
    await phase(WARMUP);
    const seconds = { off: 0, on: 0 };
    for (let round = 0; round < PHASES; round++) {
      // Alternated, so the shared machine's load weighs on both modes alike.
      for (const mode of ["off", "on"] as const) {
        await setTracing(mode === "on");
        seconds[mode] += await phase(REQUESTS);
      }
    }
    await setTracing(false);
    const [{ queued }] = await sql<{ queued: number }[]>`select count(*)::int as queued from pgmq.q_workflow_trace_exports`;
    const off = (REQUESTS * PHASES) / seconds.off;
    const on = (REQUESTS * PHASES) / seconds.on;
    const met = on >= GOAL_RATIO * off;
    console.log(`Execute throughput, one-block sync runs, ${CONCURRENCY} clients, ${PHASES}×${REQUESTS} requests per mode, alternated:`);
    console.log(`  · tracing off: ${off.toFixed(1)} runs/s`);
    console.log(`  · tracing on, collector down (${endpoint}): ${on.toFixed(1)} runs/s (runs left queued for export at the end: ${queued})`);
    console.log(`  ${verdict(met)} on/off = ${(on / off).toFixed(2)} (goal ≥ ${GOAL_RATIO})`);
    report({
      bench: "tracing", metric: "execute throughput, tracing on, collector down", scale: `${CONCURRENCY} clients`, value: on, unit: "runs/s", higherIsBetter: true,
      baseline: { name: "tracing off", value: off }, goal: { text: `≥ ${GOAL_RATIO}× tracing off`, met },
    });
  } finally {
    await sql.end();
  }
}
