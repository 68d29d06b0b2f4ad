/**
 * Gamification bench (`npm run bench -- gamification`): generates 100,000 technicians and about
 * 5 million history rows in SQL, then measures through the HTTP API the scoring throughput (goal
 * ≥ 1,000 actions/s) and ranking latency (local, national and category boards p95 ≤ 20 ms; a
 * technician's national position p95 ≤ 10 ms), with the same reads straight through the data API
 * and the national position in SQL alone as references. Expects the stack's coordinates in
 * SUPABASE_URL, SUPABASE_ANON_KEY, SUPABASE_SERVICE_ROLE_KEY, SUPABASE_DB_URL and SUPABASE_JWT_SECRET.
 */
import { cpus, totalmem } from "node:os";
import postgres from "postgres";
import { generateData } from "./gamification/data.ts";
import { describeLoad } from "./gamification/load.ts";
import {
  measureBatchScoring, measureCategoryRefresh, measureDirectRpc, measurePositionInSql, measureRankings, measureScoring, pauseJobs, type Stack,
} from "./gamification/measure.ts";
import { requiredEnv, verdict } from "./bench-support.ts";

/** "✓" when a figure meets its goal, "✗" when not, "·" for a reference figure without one. */
/** Generates the data set, runs every measurement and prints the figures and the machine. */
export async function run(): Promise<void> {
  const stack: Stack = { url: requiredEnv("SUPABASE_URL"), jwtSecret: requiredEnv("SUPABASE_JWT_SECRET") };
  const dbUrl = requiredEnv("SUPABASE_DB_URL");
  const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
  try {
    const [{ version }] = await sql<{ version: string }[]>`select version()`;
    console.log(`Machine: ${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}`);
    console.log(`Database: ${version.split(",")[0]}; the load generator, gateway, functions host and Postgres share the machine.`);

    console.log("\nGenerating the data set (SQL, generate_series):");
    await generateData(dbUrl, (line) => console.log(line));

    console.log(`\npg_cron jobs paused while measuring: ${(await pauseJobs(sql)).join(", ")}.`);
    console.log(`  the 5-minute job's work when calls changed (week and month category boards, 2 million calls): ${(await measureCategoryRefresh(sql)).toFixed(1)} s`);

    console.log("\nScoring (chamado_concluido, each technician once):");
    // The first ~20,000 actions after the bulk load run at about half the steady rate, with twice the
    // Postgres CPU per action, whatever the technicians and with the jobs paused (a settling of the
    // freshly loaded data set not pinned down further), so they are reported on their own.
    const serviceRoleKey = requiredEnv("SUPABASE_SERVICE_ROLE_KEY");
    const cold = await measureBatchScoring(sql, stack, serviceRoleKey, 22_000, 100, 2, 10_001);
    console.log(`  ${verdict(null)} POST /points/lote, first 22,000 actions after loading the data set: ${cold.actionsPerSecond.toFixed(0)} actions/s; ` +
      `requests ${describeLoad(cold.load)}`);
    const batch = await measureBatchScoring(sql, stack, serviceRoleKey, 22_000, 100, 2, 32_001);
    console.log(`  ${verdict(batch.actionsPerSecond >= 1000)} POST /points/lote, 100 actions a request, 2 in flight, steady state (goal ≥ 1,000 actions/s): ` +
      `${batch.actionsPerSecond.toFixed(0)} actions/s; requests ${describeLoad(batch.load)}`);
    const single = await measureScoring(sql, stack, 5_500, 32);
    console.log(`  ${verdict(null)} POST /points, one action a request, 32 in flight: ${describeLoad(single)}`);

    for (const concurrency of [1, 4]) {
      console.log(`\nRanking reads through the API (2,000 different technicians each, ${concurrency} in flight):`);
      for (const [name, result] of await measureRankings(stack, 2000, concurrency)) {
        const goal = name.startsWith("own national position") ? 10 : 20;
        console.log(`  ${verdict(concurrency === 1 ? result.p95 <= goal : null)} ${name}${concurrency === 1 ? ` (goal p95 ≤ ${goal} ms)` : ""}: ${describeLoad(result)}`);
      }
    }

    console.log("\nReferences for the national position:");
    const direct = await measureDirectRpc(stack, requiredEnv("SUPABASE_ANON_KEY"), 2000, 1);
    console.log(`  ${verdict(null)} the same RPC straight through the data API (POST /rest/v1/rpc, no edge function), 1 in flight: ${describeLoad(direct)}`);
    const position = await measurePositionInSql(sql, 2000);
    console.log(`  ${verdict(position.p95 <= 10)} gamificacao.posicao in SQL alone, 2,000 technicians (goal p95 ≤ 10 ms): ` +
      `p50 ${position.p50.toFixed(2)} ms, p95 ${position.p95.toFixed(2)} ms, p99 ${position.p99.toFixed(2)} ms`);
  } finally {
    await sql.end();
  }
}
