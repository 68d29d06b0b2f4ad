/**
 * Functions bench (`npm run bench -- functions`): the same edge-function request three ways, in
 * alternating rounds at 1, 8 and 32 in flight so machine noise falls on every side:
 *
 * - bare Deno (the floor): the `api` function imported unchanged into a bare `Deno.serve`;
 * - the functions host straight: host (JWT check, worker pool, wall clock, failure handling) and
 *   the function's worker;
 * - through the gateway, as clients call it: gateway, host and worker.
 *
 * The request is one the function answers without the database (an execute whose workflow id is
 * no UUID: 404 before any SQL), so the figures are the path's own cost. Goal (the proof issue):
 * through the gateway within 1.5× of bare Deno. CPU per request comes from /proc for each process.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { loadConfig, PROJECT_ROOT, type StackConfig } from "../platform/config/stack-config.ts";
import { denoBinary, denoRunArguments, functionEnvironment } from "../platform/functions-host/launch.ts";
import { waitForPort } from "../platform/process/ports.ts";
import { describeLoad, medianRun, runLoad, type LoadResult, type PreparedRequest } from "./gamification/load.ts";
import { measureCpu, servicePids } from "./process-cpu.ts";
import { report, requiredEnv } from "./bench-support.ts";

/** Where the bare Deno server listens: beside the bench stack's ports (shifted with them by slot), unused by it. */
const BARE_PORT_OFFSET = 78;
const DEMO_KEY = "orb_local_only_demo_key_000000000000000000000000";
const ROUNDS = 3;
const REQUESTS_PER_ROUND = 6_000;

/** Starts the api function under a bare Deno.serve and resolves with its pid and a stop function. */
async function startBareFunction(config: StackConfig, port: number): Promise<{ pid: number; stop: () => void }> {
  const child = spawn(denoBinary(), denoRunArguments(join(PROJECT_ROOT, "bench", "bare-function-server.ts")), {
    cwd: PROJECT_ROOT,
    env: {
      PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1",
      ...functionEnvironment(config),
      BARE_FUNCTION_PORT: String(port),
      BARE_FUNCTION_ENTRYPOINT: `file://${join(PROJECT_ROOT, "supabase", "functions", "api", "index.ts")}`,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  await waitForPort(port, "The bare Deno function server", 60_000);
  return { pid: child.pid ?? 0, stop: () => child.kill("SIGKILL") };
}

/** Runs the three paths side by side at each concurrency and prints and reports them. */
export async function run(): Promise<void> {
  const gatewayUrl = requiredEnv("SUPABASE_URL");
  const serviceKey = requiredEnv("SUPABASE_SERVICE_ROLE_KEY");
  const config = loadConfig("bench");
  const pids = servicePids(config);
  const barePort = config.ports.gateway + BARE_PORT_OFFSET;
  const bare = await startBareFunction(config, barePort);
  try {
    // The service role is exempt from the gateway's per-caller limit (500 a minute), as server code is.
    const requests = (base: string): PreparedRequest[] => Array.from({ length: REQUESTS_PER_ROUND }, () => ({
      method: "POST", url: `${base}/api/workflows/not-a-uuid/execute`, token: serviceKey, headers: { "X-API-Key": DEMO_KEY }, body: {},
    }));
    const paths = {
      bare: requests(`http://127.0.0.1:${barePort}`),
      host: requests(`http://127.0.0.1:${config.ports.functions}`),
      gateway: requests(gatewayUrl),
    };
    for (const path of Object.values(paths)) await runLoad(path.slice(0, 500), 8);
    const statuses = await runLoad(paths.gateway.slice(0, 1), 1);
    if (!statuses.statuses["404"]) throw new Error(`the api function did not answer 404 (${JSON.stringify(statuses.statuses)})`);

    console.log(`POST /api/workflows/not-a-uuid/execute (404 before any SQL), ${REQUESTS_PER_ROUND} requests per round, median of ${ROUNDS} alternating rounds`);
    for (const concurrency of [1, 8, 32]) {
      const results: Record<keyof typeof paths, LoadResult[]> = { bare: [], host: [], gateway: [] };
      const cpu = { bare: 0, host: 0, functions: 0, gateway: 0 };
      for (let round = 0; round < ROUNDS; round++) {
        const measuredBare = await measureCpu({ bare: bare.pid }, () => runLoad(paths.bare, concurrency));
        results.bare.push(measuredBare.result);
        cpu.bare += measuredBare.cpuMs.bare;
        const measuredHost = await measureCpu({ host: pids.functions }, () => runLoad(paths.host, concurrency));
        results.host.push(measuredHost.result);
        cpu.host += measuredHost.cpuMs.host;
        const measured = await measureCpu({ functions: pids.functions, gateway: pids.gateway }, () => runLoad(paths.gateway, concurrency));
        results.gateway.push(measured.result);
        cpu.functions += measured.cpuMs.functions;
        cpu.gateway += measured.cpuMs.gateway;
      }
      const floor = medianRun(results.bare);
      const host = medianRun(results.host);
      const ours = medianRun(results.gateway);
      const perRequest = (ms: number) => ((ms * 1000) / (ROUNDS * REQUESTS_PER_ROUND)).toFixed(0);
      console.log(`  ${String(concurrency).padStart(2)} in flight: bare Deno ${describeLoad(floor)}`);
      console.log(`               functions host straight ${describeLoad(host)}`);
      console.log(`               through the gateway ${describeLoad(ours)}`);
      console.log(`               time per request ÷ bare Deno's: functions host straight ${(floor.perSecond / host.perSecond).toFixed(2)}×, through the gateway ${(floor.perSecond / ours.perSecond).toFixed(2)}× (goal ≤ 1.5×)`);
      console.log(`               CPU per request: bare Deno ${perRequest(cpu.bare)} µs; functions host straight (host and worker) ${perRequest(cpu.host)} µs; through the gateway: gateway (HAProxy) ${perRequest(cpu.gateway)} µs, functions host and worker ${perRequest(cpu.functions)} µs`);
      report({
        bench: "functions", metric: "edge function request straight to the functions host", scale: `${concurrency} in flight`, value: host.perSecond, unit: "req/s", higherIsBetter: true,
        baseline: { name: "bare Deno.serve", value: floor.perSecond },
      });
      report({
        bench: "functions", metric: "edge function request through the gateway", scale: `${concurrency} in flight`, value: ours.perSecond, unit: "req/s", higherIsBetter: true,
        baseline: { name: "bare Deno.serve", value: floor.perSecond }, goal: { text: "≥ 0.67× bare (within 1.5×)", met: ours.perSecond * 1.5 >= floor.perSecond },
      });
    }
  } finally {
    bare.stop();
  }
}
