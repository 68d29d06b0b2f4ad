/**
 * Positions bench (`npm run bench -- positions [--technicians N]`), issue 33's "positions flat with
 * size": a technician's own national position (`gamificacao.posicao`, the current month) on boards
 * of N/100, N/10 and N technicians (N = 1,000,000 by default), each beside Redis ZREVRANK on the
 * same board, one lookup of each alternating, so both see the same moments of the machine's load.
 * Goals: the position's p95 at the largest board ≤ 1.3× its p95 at the smaller ones, and ≤ 3×
 * Redis's on the same board.
 *
 * Only the month's board is built (totals written directly, the counters rebuilt with
 * gamificacao.reconstruir_faixas), not the gamification bench's calls and history, so the million
 * takes minutes instead of an hour. Its shape is the one that makes positions grow: 200 point
 * values (10 to 2,000, every technician on one of them) and last scorings spread evenly from the
 * month's start to an hour ago, so ties on points grow with the board (5,000 technicians on each
 * point value at a million) and crowd the month's few slots early in the month.
 */
import postgres from "postgres";
import type { BenchOptions } from "../scripts/bench.ts";
import { report, requiredEnv, verdict } from "./bench-support.ts";
import { removeData, techniciansSql } from "./gamification/data.ts";
import { monthlyBoard, pauseJobs, positionInSql } from "./gamification/measure.ts";
import { measureCpu } from "./process-cpu.ts";
import { percentilesOf, RedisBaseline, type Percentiles } from "./redis-baseline.ts";

/** The largest board when --technicians is not given. */
const DEFAULT_TECHNICIANS = 1_000_000;
/** Technicians whose position is measured at each size (after a tenth as many to warm up). */
const SAMPLE = 1000;
/** Cities of the bench technicians (the local boards are not measured here). */
const CITIES = 500;

interface SizeResult {
  technicians: number;
  sql: Percentiles;
  redis: Percentiles;
  /** The same positions timed inside the database (clock_timestamp() around each call, one statement): no client or network in it. */
  server: Percentiles;
  /** Backend CPU ms a position (from /proc, the sample computed three times in one statement each): what the machine's load hardly moves. */
  cpuMs: number;
}

/** Adds technicians `from`..`to` and their month totals, then rebuilds the month's counters. */
async function growBoard(dbUrl: string, from: number, to: number): Promise<void> {
  const sql = postgres(dbUrl, { max: 1, onnotice: () => {}, connection: { statement_timeout: 0, work_mem: "128MB" } });
  try {
    if (from === 1) {
      await sql.unsafe(`
        insert into public.cidades (id, nome, uf) select 'bench-' || c, 'Bench ' || c, 'BX' from generate_series(0, ${CITIES - 1}) c`);
    }
    await sql.unsafe(techniciansSql(from, to, CITIES));
    await sql.unsafe(`
      insert into gamificacao.totais_periodo (usuario_id, periodo, periodo_inicio, cidade_id, nivel_ordem, pontos, acoes, ultima_pontuacao_em)
      select t.id, 'mensal', l.inicio, t.cidade_id, 1, 10 * (1 + h.sorte % 200), 1 + h.sorte % 7,
        l.desde + (h.sorte / 2147483647.0) * (now() - interval '1 hour' - l.desde)
      from public.tecnicos t
      cross join lateral (select abs(hashtext(t.id::text)) as sorte) h
      cross join (select gamificacao.inicio_periodo('mensal', now()) as inicio,
        gamificacao.meia_noite_local(gamificacao.inicio_periodo('mensal', now())) as desde) l
      where t.id::text like 'b0000000-%' and t.cidade_id like 'bench-%'
      on conflict do nothing`);
    await sql`select gamificacao.reconstruir_faixas('mensal')`;
    await sql.unsafe("vacuum analyze gamificacao.totais_periodo");
    await sql.unsafe("vacuum analyze gamificacao.faixas_ranking");
    await sql.unsafe("vacuum analyze gamificacao.faixas_pontos");
  } finally {
    await sql.end();
  }
}

/** The own national position of SAMPLE technicians in SQL and with Redis ZREVRANK on the same board. */
async function measure(dbUrl: string, technicians: number): Promise<SizeResult> {
  const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
  const redis = await RedisBaseline.start();
  try {
    const key = "nacional:mensal";
    await redis.load(key, monthlyBoard(sql));
    const rows = await sql<{ id: string }[]>`
      select t.usuario_id::text as id from gamificacao.totais_periodo t
      where t.periodo = 'mensal' and t.periodo_inicio = gamificacao.inicio_periodo('mensal', now())
      order by hashtext(t.usuario_id::text || 'amostra') limit ${SAMPLE}`;
    const ids = rows.map((row) => row.id);
    const inSql: number[] = [];
    const inRedis: number[] = [];
    const warmUp = Math.floor(ids.length / 10);
    for (const id of [...ids.slice(0, warmUp), ...ids]) {
      let started = performance.now();
      await positionInSql(sql, id);
      inSql.push(performance.now() - started);
      started = performance.now();
      await redis.rank(key, id);
      inRedis.push(performance.now() - started);
    }
    // Target-list entries are evaluated in order, so each call sits between its two clock readings;
    // the position is selected too, or the planner would drop the unused call from the subquery.
    const timedPositions = () => sql<{ ms: number; posicao: number }[]>`
      select (extract(epoch from x.depois - x.antes) * 1000)::float8 as ms, x.posicao from (
        select clock_timestamp() as antes,
          gamificacao.posicao('nacional', t.periodo, t.periodo_inicio, null, t.pontos, t.ultima_pontuacao_em, t.usuario_id) as posicao,
          clock_timestamp() as depois
        from gamificacao.totais_periodo t
        where t.usuario_id = any(${ids}::uuid[]) and t.periodo = 'mensal' and t.periodo_inicio = gamificacao.inicio_periodo('mensal', now())
      ) x`;
    const [{ pid }] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
    const { result: rounds, cpuMs } = await measureCpu({ backend: pid }, async () => [await timedPositions(), await timedPositions(), await timedPositions()]);
    const timed = rounds.flat();
    return {
      technicians, sql: percentilesOf(inSql.slice(warmUp)), redis: percentilesOf(inRedis.slice(warmUp)), server: percentilesOf(timed.map((row) => row.ms)),
      cpuMs: cpuMs.backend / timed.length,
    };
  } finally {
    await redis.stop();
    await sql.end();
  }
}

/** "10k", "1M". */
function label(technicians: number): string {
  return technicians >= 1_000_000 ? `${technicians / 1_000_000}M` : `${technicians / 1000}k`;
}

/** Builds the three boards in turn (each grows the last) and measures the positions on each. */
export async function run(options: BenchOptions): Promise<void> {
  const largest = options.flags.technicians === undefined ? DEFAULT_TECHNICIANS : Number(options.flags.technicians);
  if (!Number.isInteger(largest) || largest < 10_000) throw new Error(`--technicians must be an integer ≥ 10000, not ${options.flags.technicians}`);
  const dbUrl = requiredEnv("SUPABASE_DB_URL");
  const admin = postgres(dbUrl, { max: 1, onnotice: () => {} });
  const results: SizeResult[] = [];
  try {
    console.log(`pg_cron jobs paused while measuring: ${(await pauseJobs(admin)).join(", ")}.`);
    await removeData(dbUrl);
    let built = 0;
    for (const technicians of [largest / 100, largest / 10, largest]) {
      const started = Date.now();
      await growBoard(dbUrl, built + 1, technicians);
      built = technicians;
      console.log(`\n-- ${technicians.toLocaleString("en")} technicians on this month's board (built in ${((Date.now() - started) / 1000).toFixed(0)} s)`);
      const result = await measure(dbUrl, technicians);
      results.push(result);
      const ratio = result.sql.p95 / result.redis.p95;
      console.log(`  ${verdict(null)} Redis ZREVRANK: p50 ${result.redis.p50.toFixed(2)} ms, p95 ${result.redis.p95.toFixed(2)} ms`);
      console.log(`  ${verdict(null)} gamificacao.posicao inside the database alone: p50 ${result.server.p50.toFixed(3)} ms, p95 ${result.server.p95.toFixed(3)} ms; ` +
        `backend CPU ${(result.cpuMs * 1000).toFixed(0)} µs a position`);
      console.log(`  ${verdict(ratio <= 3)} gamificacao.posicao: p50 ${result.sql.p50.toFixed(2)} ms, p95 ${result.sql.p95.toFixed(2)} ms ` +
        `(${ratio.toFixed(1)}× Redis at p95; goal ≤ 3×)`);
      report({
        bench: "positions", metric: "own national position in SQL, p95", scale: `${label(technicians)} technicians`, value: result.sql.p95, unit: "ms",
        higherIsBetter: false, baseline: { name: "Redis ZREVRANK", value: result.redis.p95 }, goal: { text: "≤ 3× Redis", met: ratio <= 3 },
      });
    }
    const smallest = results[0];
    for (const result of results.slice(1)) {
      const growth = result.sql.p95 / smallest.sql.p95;
      console.log(`  ${verdict(growth <= 1.3)} p95 at ${label(result.technicians)} ÷ at ${label(smallest.technicians)}: ${growth.toFixed(2)}× ` +
        `(Redis ${(result.redis.p95 / smallest.redis.p95).toFixed(2)}×; goal ≤ 1.3×); p50 ${(result.sql.p50 / smallest.sql.p50).toFixed(2)}×; ` +
        `inside the database p50 ${(result.server.p50 / smallest.server.p50).toFixed(2)}×, p95 ${(result.server.p95 / smallest.server.p95).toFixed(2)}×; ` +
        `backend CPU a position ${(result.cpuMs / smallest.cpuMs).toFixed(2)}×`);
      report({
        bench: "positions", metric: `own position, backend CPU: cost at ${label(result.technicians)} ÷ at ${label(smallest.technicians)}`,
        value: result.cpuMs / smallest.cpuMs, unit: "×", higherIsBetter: false, goal: { text: "≤ 1.3×", met: result.cpuMs / smallest.cpuMs <= 1.3 },
      });
      report({
        bench: "positions", metric: `own position in SQL (p95): cost at ${label(result.technicians)} ÷ at ${label(smallest.technicians)}`, value: growth,
        unit: "×", higherIsBetter: false, baseline: { name: "Redis ZREVRANK's growth", value: result.redis.p95 / smallest.redis.p95 },
        goal: { text: "≤ 1.3×", met: growth <= 1.3 },
      });
    }
  } finally {
    await removeData(dbUrl);
    await admin.end();
  }
}
