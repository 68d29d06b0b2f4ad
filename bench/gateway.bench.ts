/**
 * Gateway bench (`npm run bench -- gateway`): the same single-row data-API read sent straight to
 * PostgREST (the floor) and through the gateway (HAProxy with the duties in Lua: key translation,
 * CORS, request id, caps, rate limits, the claims of the caller's token), in alternating rounds at 1, 8 and 32 in flight so machine noise falls on both sides.
 * Goal (the proof issue): the gateway keeps at least 0.9× bare PostgREST's throughput.
 * The service-role key is used because a user's calls are capped at 200 a minute by design.
 */
import { loadConfig } from "../platform/config/stack-config.ts";
import { describeLoad, medianRun, runLoad, type LoadResult, type PreparedRequest } from "./gamification/load.ts";
import { measureCpu, servicePids } from "./process-cpu.ts";
import { report, requiredEnv } from "./bench-support.ts";

/** Runs the gateway and bare PostgREST side by side at each concurrency and prints both with the ratio. */
export async function run(): Promise<void> {
  const gatewayUrl = requiredEnv("SUPABASE_URL");
  const serviceKey = requiredEnv("SUPABASE_SERVICE_ROLE_KEY");
  const config = loadConfig("bench");
  const postgrestUrl = `http://127.0.0.1:${config.ports.postgrest}`;
  const pids = servicePids(config);
  const found = await fetch(`${postgrestUrl}/workspaces?select=id&limit=1`, { headers: { Authorization: `Bearer ${serviceKey}` } });
  const rows = (await found.json()) as { id: string }[];
  if (found.status !== 200 || rows.length === 0) throw new Error(`the seeded workspace was not found (${found.status})`);
  const [{ id }] = rows;
  const path = `/workspaces?select=id,name,created_at&id=eq.${id}`;
  const requests = (base: string, count: number): PreparedRequest[] =>
    Array.from({ length: count }, () => ({ method: "GET", url: `${base}${path}`, token: serviceKey, apikey: serviceKey }));
  const sides = { bare: requests(`${postgrestUrl}`, 3_000), gateway: requests(`${gatewayUrl}/rest/v1`, 3_000) };

  // Warm both paths (connections, PostgREST's schema cache, the gateway's JIT), not measured.
  await runLoad(requests(postgrestUrl, 500), 8);
  await runLoad(requests(`${gatewayUrl}/rest/v1`, 500), 8);

  console.log("single-row GET /rest/v1/workspaces, service role, 3,000 requests per round, median of 3 alternating rounds");
  for (const concurrency of [1, 8, 32]) {
    const bare: LoadResult[] = [];
    const gateway: LoadResult[] = [];
    const gatewayCpu = { gateway: 0, platform: 0, postgrest: 0 };
    for (let round = 0; round < 3; round++) {
      bare.push(await runLoad(sides.bare, concurrency));
      const measured = await measureCpu({ gateway: pids.gateway, platform: pids.platform, postgrest: pids.postgrest }, () => runLoad(sides.gateway, concurrency));
      gateway.push(measured.result);
      gatewayCpu.gateway += measured.cpuMs.gateway;
      gatewayCpu.platform += measured.cpuMs.platform;
      gatewayCpu.postgrest += measured.cpuMs.postgrest;
    }
    const floor = medianRun(bare);
    const ours = medianRun(gateway);
    const perRequest = (ms: number) => ((ms * 1000) / (3 * sides.gateway.length)).toFixed(0);
    console.log(`  ${String(concurrency).padStart(2)} in flight: bare PostgREST ${describeLoad(floor)}`);
    console.log(`               through the gateway ${describeLoad(ours)}`);
    console.log(`               ratio ${(ours.perSecond / floor.perSecond).toFixed(2)}× bare throughput (goal ≥ 0.90×); CPU per request through the gateway: HAProxy ${perRequest(gatewayCpu.gateway)} µs, node half ${perRequest(gatewayCpu.platform)} µs, PostgREST ${perRequest(gatewayCpu.postgrest)} µs`);
    report({
      bench: "gateway", metric: "data API single-row GET through the gateway", scale: `${concurrency} in flight`, value: ours.perSecond, unit: "req/s", higherIsBetter: true,
      baseline: { name: "bare PostgREST", value: floor.perSecond }, goal: { text: "≥ 0.90× bare", met: ours.perSecond >= 0.9 * floor.perSecond },
    });
  }
}
