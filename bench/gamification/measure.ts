/**
 * The gamification measurements: scoring throughput and ranking latency through the HTTP API
 * (gateway → `api` edge function → Postgres), and the national position computed in
 * SQL alone, on the data set of data.ts.
 */
import postgres, { type Sql } from "postgres";
import { technicianId, type Scale } from "./data.ts";
import { runLoad, type LoadResult, type PreparedRequest } from "./load.ts";
import { signedInToken } from "../bench-support.ts";
import type { BoardEntry } from "../redis-baseline.ts";

/** Stack coordinates, from the environment the bench runner exports. */
export interface Stack {
  url: string;
  jwtSecret: string;
  /** The size of the data set generated on it. */
  scale: Scale;
}

/** A session token for bench technician `n`. */
function tokenFor(stack: Stack, n: number): Promise<string> {
  return signedInToken(stack.jwtSecret, technicianId(n));
}

/** Deterministic spread of bench technicians (a multiplicative walk over 1..technicians). */
function technicianNumbers(scale: Scale, count: number, seed: number): number[] {
  return Array.from({ length: count }, (_, i) => 1 + ((seed + i * 7919) % scale.technicians));
}

/** The technician of prepared call `n`: calls outnumber technicians on a small data set, so they wrap around. */
function technicianOfCall(scale: Scale, n: number): number {
  return 1 + ((n - 1) % scale.technicians);
}

/**
 * Creates one concluded call for each bench technician `first` .. `first + count - 1` and returns
 * their ids. The week's and month's category boards are then refreshed at once: new calls are the
 * back office's work, and a refresh left to the 5-minute job would compete for the CPU while
 * scoring is measured (the year's and all-time boards, hourly, are left alone: at a million
 * technicians each of their refreshes reads every call).
 */
export async function prepareCalls(sql: Sql, scale: Scale, first: number, count: number): Promise<(n: number) => string> {
  await sql.unsafe(`
    insert into public.chamados (id, tecnico_id, cidade_id, latitude, longitude, agendado_para, aceito_em, checkin_em, checkout_em, status)
    select ('e0000000-0000-4000-8000-' || lpad(to_hex(n), 12, '0'))::uuid, ('b0000000-0000-4000-8000-' || lpad(to_hex(t), 12, '0'))::uuid,
      'bench-' || (t % ${scale.cities}), -23.55, -46.63, now() - interval '3 hours', now() - interval '1 day',
      now() - interval '3 hours', now() - interval '2 hours', 'concluido'
    from generate_series(${first}, ${first + count - 1}) n cross join lateral (select 1 + (n - 1) % ${scale.technicians} as t) w`);
  await sql`select gamificacao.atualizar_rankings_categorias(now(), true, array['semanal', 'mensal'])`;
  // The refresh rewrote every board row; vacuum now rather than let autovacuum do it mid-measurement.
  await sql`vacuum analyze gamificacao.quadros_categorias_blocos, gamificacao.quadros_categorias_usuarios, public.chamados`;
  return (n) => `e0000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
}

/** The action registration that scores prepared call `n` for its technician. */
export function registration(scale: Scale, n: number, callOf: (n: number) => string) {
  return { usuario_id: technicianId(technicianOfCall(scale, n)), acao: "chamado_concluido", chamado_id: callOf(n) };
}

/**
 * One action per request: `count` technicians (numbers `first` onwards) each score their
 * prepared call through POST /points with their own JWT.
 */
export async function measureScoring(sql: Sql, stack: Stack, count: number, concurrency: number, first = 1): Promise<LoadResult> {
  const callOf = await prepareCalls(sql, stack.scale, first, count);
  const requests: PreparedRequest[] = [];
  for (let n = first; n < first + count; n += 1) {
    requests.push({
      method: "POST", url: `${stack.url}/functions/v1/api/v1/gamification/points`,
      token: await tokenFor(stack, technicianOfCall(stack.scale, n)), body: registration(stack.scale, n, callOf),
    });
  }
  const warmUp = Math.min(500, Math.floor(count / 10));
  await runLoad(requests.slice(0, warmUp), concurrency);
  return runLoad(requests.slice(warmUp), concurrency);
}

/**
 * The back office's bulk path: `count` technicians' actions sent `size` at a time through POST
 * /points/lote with the service role key. Returns the load result and actions scored per second.
 */
export async function measureBatchScoring(
  sql: Sql, stack: Stack, serviceRoleKey: string, count: number, size: number, concurrency: number, first: number,
): Promise<{ load: LoadResult; actionsPerSecond: number }> {
  const callOf = await prepareCalls(sql, stack.scale, first, count);
  const requests: PreparedRequest[] = [];
  for (let start = first; start < first + count; start += size) {
    const acoes = Array.from({ length: Math.min(size, first + count - start) }, (_, i) => registration(stack.scale, start + i, callOf));
    requests.push({ method: "POST", url: `${stack.url}/functions/v1/api/v1/gamification/points/lote`, token: serviceRoleKey, body: { acoes } });
  }
  const warmUp = Math.max(1, Math.floor(requests.length / 10));
  await runLoad(requests.slice(0, warmUp), concurrency);
  const load = await runLoad(requests.slice(warmUp), concurrency);
  return { load, actionsPerSecond: (load.requests * size) / load.seconds };
}

/** Actions per second of the batch scoring transaction in SQL, and of a plain insert of the same history rows. */
export interface LedgerResult {
  scoringPerSecond: number;
  plainInsertPerSecond: number;
}

/**
 * The scoring transaction without HTTP beside its floor, on the same connections and data set:
 * `count` prepared actions sent `size` at a time, `concurrency` in flight, once through
 * public.gamificacao_registrar_acoes as the service role (what POST /points/lote runs) and once,
 * on `count` other prepared calls, as a plain insert of the history rows scoring would write
 * (same columns and indexes; no checks, totals, buckets, badges or positions). Each batch is one
 * transaction in both.
 */
export async function measureLedger(
  dbUrl: string, sql: Sql, scale: Scale, count: number, size: number, concurrency: number, first: number,
): Promise<LedgerResult> {
  const scored = await prepareCalls(sql, scale, first, count);
  const plain = await prepareCalls(sql, scale, first + count, count);
  const batches = (callOf: (n: number) => string, start: number) => {
    const result: ReturnType<typeof registration>[][] = [];
    for (let n = start; n < start + count; n += size) {
      result.push(Array.from({ length: Math.min(size, start + count - n) }, (_, i) => registration(scale, n + i, callOf)));
    }
    return result;
  };
  const pool = postgres(dbUrl, { max: concurrency, onnotice: () => {} });
  const run = async (items: ReturnType<typeof registration>[][], send: (batch: ReturnType<typeof registration>[]) => Promise<unknown>) => {
    let next = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < items.length) await send(items[next++]);
    }));
    return (items.flat().length) / ((performance.now() - started) / 1000);
  };
  try {
    const scoringPerSecond = await run(batches(scored, first), (batch) =>
      pool.begin(async (tx) => {
        await tx`select set_config('request.jwt.claims', '{"role": "service_role"}', true)`;
        const [{ falhas }] = await tx<{ falhas: number }[]>`
          select (public.gamificacao_registrar_acoes(${tx.json(batch)}::jsonb) -> 'data' ->> 'falhas')::int as falhas`;
        if (falhas !== 0) throw new Error(`${falhas} of ${batch.length} actions failed to score`);
      }));
    const plainInsertPerSecond = await run(batches(plain, first + count), (batch) =>
      pool.begin((tx) => tx`
        insert into public.historico_pontos (usuario_id, chamado_id, acao, cidade_id, pontos_base, multiplicador_tier, multiplicador_densidade,
          multiplicador_nivel, pontos_final, tier, tecnicos_ativos, nivel_antes, distancia_m, metadata, registrado_por, data_acao)
        select (a ->> 'usuario_id')::uuid, (a ->> 'chamado_id')::uuid, a ->> 'acao', ch.cidade_id, 50, m.multiplicador_tier,
          m.multiplicador_densidade, 1.00, 50, m.tier, m.tecnicos_ativos, 'iniciante', null, '{}', null, now()
        from jsonb_array_elements(${tx.json(batch)}::jsonb) a
        join public.chamados ch on ch.id = (a ->> 'chamado_id')::uuid
        join public.cidades_metricas m on m.cidade_id = ch.cidade_id`));
    return { scoringPerSecond, plainInsertPerSecond };
  } finally {
    await pool.end();
  }
}

/** GET requests for `path` (with `query`) by `count` different technicians. */
async function readRequests(stack: Stack, path: string, count: number, seed: number, query: (n: number) => Record<string, string>): Promise<PreparedRequest[]> {
  const requests: PreparedRequest[] = [];
  for (const n of technicianNumbers(stack.scale, count, seed)) {
    const url = new URL(`${stack.url}/functions/v1/api/v1/gamification${path}`);
    for (const [name, value] of Object.entries(query(n))) url.searchParams.set(name, value);
    requests.push({ method: "GET", url: url.toString(), token: await tokenFor(stack, n) });
  }
  return requests;
}

/** The read measurements: name and result. */
export type ReadResults = [string, LoadResult][];

/** Ranking reads through the API: local (own city), national, national by level, a category board, and the caller's national position. */
export async function measureRankings(stack: Stack, count: number, concurrency: number): Promise<ReadResults> {
  const scenarios: [string, string, (n: number) => Record<string, string>][] = [
    ["local board (own city, month, 20 entries + own position)", "/rankings/local", () => ({ periodo: "mensal" })],
    ["national board (month, 20 entries + own position)", "/rankings/nacional", () => ({ periodo: "mensal" })],
    ["national board of a level (all time)", "/rankings/nacional", () => ({ periodo: "geral", categoria: "experiente" })],
    ["category board (qualidade, month)", "/rankings/categoria/qualidade", () => ({ periodo: "mensal" })],
    ["own national position (month, limit=1)", "/rankings/nacional", () => ({ periodo: "mensal", limit: "1" })],
  ];
  const results: ReadResults = [];
  let seed = 11;
  for (const [name, path, query] of scenarios) {
    seed += 104_729;
    await runLoad(await readRequests(stack, path, Math.floor(count / 10), seed + 1, query), concurrency);
    results.push([name, await runLoad(await readRequests(stack, path, count, seed, query), concurrency)]);
  }
  return results;
}

/**
 * The same national-board read straight through the gateway's data API (POST /rest/v1/rpc/...,
 * no edge function), as a reference for how much of the latency the function hop adds.
 */
export async function measureDirectRpc(stack: Stack, anonKey: string, count: number, concurrency: number): Promise<LoadResult> {
  const requests: PreparedRequest[] = [];
  for (const n of technicianNumbers(stack.scale, count, 777)) {
    requests.push({
      method: "POST",
      url: `${stack.url}/rest/v1/rpc/gamificacao_ranking_nacional`,
      token: await tokenFor(stack, n),
      apikey: anonKey,
      body: { p_periodo: "mensal", p_limit: 1 },
    });
  }
  await runLoad(requests.slice(0, Math.floor(count / 10)), concurrency);
  return runLoad(requests, concurrency);
}

/** `count` technicians on this month's national board (not every one scored this month), whose own position is measured in SQL and in Redis alike. */
export async function positionSample(sql: Sql, scale: Scale, count: number): Promise<string[]> {
  const candidates = technicianNumbers(scale, 2 * count, 4242).map((n) => technicianId(n));
  const onBoard = await sql<{ id: string }[]>`
    select t.usuario_id::text as id from gamificacao.totais_periodo t
    where t.usuario_id = any(${candidates}::uuid[]) and t.periodo = 'mensal' and t.periodo_inicio = gamificacao.inicio_periodo('mensal', now())`;
  const present = new Set(onBoard.map((row) => row.id));
  return candidates.filter((id) => present.has(id)).slice(0, count);
}

/** The technician's own national position on the current month's board, computed in SQL alone. */
export async function positionInSql(sql: Sql, id: string): Promise<void> {
  const rows = await sql`
    select gamificacao.posicao('nacional', t.periodo, t.periodo_inicio, null, t.pontos, t.ultima_pontuacao_em, t.usuario_id) as posicao
    from gamificacao.totais_periodo t
    where t.usuario_id = ${id} and t.periodo = 'mensal' and t.periodo_inicio = gamificacao.inicio_periodo('mensal', now())`;
  if (rows.length !== 1) throw new Error(`${id} is not on this month's national board`);
}

/**
 * The current month's national board as Redis sorted-set entries, in chunks: the score orders
 * members as the board does (points, then the earlier last scoring) — points × 2²² plus the
 * seconds left in a 2²²-second (48-day) window after the month's start, exact in a double.
 */
export async function* monthlyBoard(sql: Sql): AsyncIterable<BoardEntry[]> {
  const cursor = sql<BoardEntry[]>`
    select t.usuario_id::text as member,
      t.pontos::float8 * 4194304 + (4194303 - extract(epoch from t.ultima_pontuacao_em - gamificacao.meia_noite_local(t.periodo_inicio))::bigint) as score
    from gamificacao.totais_periodo t
    where t.periodo = 'mensal' and t.periodo_inicio = gamificacao.inicio_periodo('mensal', now())`.cursor(50_000);
  for await (const rows of cursor) yield rows.map((row) => ({ member: row.member, score: Number(row.score) }));
}

/**
 * Pauses the gamification pg_cron jobs for the measurements: a category refresh after the bench's
 * changes (seconds of CPU on a large board) or the daily snapshot inside a measurement window would
 * measure the job, not the API. The jobs' own work is measured by measureCategoryJobs.
 */
export async function pauseJobs(sql: Sql): Promise<string[]> {
  const paused = await sql<{ jobname: string }[]>`
    select j.jobname from cron.job j cross join lateral cron.alter_job(j.jobid, active := false) where j.jobname like 'gamificacao-%'`;
  return paused.map((job) => job.jobname);
}

/**
 * Calls the back office changes in a busy five minutes: the data set's calls are spread over 120
 * days, and a peak hour runs at ten times the average rate (1M technicians: 4 million calls, about
 * 1,160 calls in five minutes; 100k: 580). Each is created checked in, then concluded and rated.
 */
export function callsInFiveMinutes(scale: Scale): number {
  return Math.round((scale.calls / (120 * 288)) * 10);
}

/** The category jobs' work on one data set, in seconds. */
export interface CategoryJobResult {
  /** The week's and month's boards recomputed from every call, as the 5-minute job did before it kept statistics. */
  fullSeconds: number;
  /** Calls changed in the five minutes (callsInFiveMinutes). */
  changedCalls: number;
  /** Change-log rows the 5-minute run found (two per update, one per insert). */
  changeLogRows: number;
  /** The 5-minute job (week and month) after those changes. */
  fiveMinuteSeconds: number;
  /** The hourly job (year and all time) right after it, the same changes already folded. */
  hourlySeconds: number;
  /** The 5-minute job again, with nothing changed. */
  idleSeconds: number;
}

/** Seconds `work` takes. */
async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return (performance.now() - started) / 1000;
}

/**
 * The category jobs' work: first the full recomputation from every call (its boards are the
 * statistics' boards, row for row), then a busy five minutes of back-office changes
 * (callsInFiveMinutes calls spread over the technicians, scheduled in the last hours), then the
 * 5-minute job, the hourly job and the 5-minute job once more with nothing changed.
 */
export async function measureCategoryJobs(sql: Sql, scale: Scale): Promise<CategoryJobResult> {
  const changedCalls = callsInFiveMinutes(scale);
  const fullSeconds = await timed(() => sql`
    select gamificacao.recalcular_quadros_categorias(p.periodo, gamificacao.inicio_periodo(p.periodo, now()), now())
    from unnest(array['semanal', 'mensal']) p (periodo)`);
  await sql`vacuum analyze gamificacao.quadros_categorias_blocos, gamificacao.quadros_categorias_usuarios`;
  const callId = (n: string) => `('d0000000-0000-4000-8000-' || lpad(to_hex(${n}), 12, '0'))::uuid`;
  await sql.unsafe(`
    insert into public.chamados (id, tecnico_id, cidade_id, latitude, longitude, agendado_para, aceito_em, checkin_em, status)
    select ${callId("n")}, ('b0000000-0000-4000-8000-' || lpad(to_hex(t), 12, '0'))::uuid, 'bench-' || (t % ${scale.cities}), -23.55, -46.63,
      a.agendado, a.agendado - interval '1 day', a.agendado + (n % 30 - 10) * interval '1 minute', 'em_andamento'
    from generate_series(1, ${changedCalls}) n
    cross join lateral (select 1 + (n::bigint * 7919) % ${scale.technicians} as t, now() - interval '3 hours' - (n % 120) * interval '1 minute' as agendado) a`);
  await sql.unsafe(`
    update public.chamados set status = 'concluido', checkout_em = checkin_em + (30 + abs(hashtext(id::text)) % 60) * interval '1 minute',
      estrelas = 3 + abs(hashtext(id::text)) % 3
    where id between ${callId("1")} and ${callId(String(changedCalls))}`);
  const [{ linhas }] = await sql<{ linhas: number }[]>`select count(*)::int as linhas from gamificacao.chamados_alterados`;
  const fiveMinuteSeconds = await timed(() => sql`select gamificacao.atualizar_rankings_categorias(now(), false, array['semanal', 'mensal'])`);
  const hourlySeconds = await timed(() => sql`select gamificacao.atualizar_rankings_categorias(now(), false, array['anual', 'geral'])`);
  const idleSeconds = await timed(() => sql`select gamificacao.atualizar_rankings_categorias(now(), false, array['semanal', 'mensal'])`);
  // The runs rewrote board rows; vacuum now rather than let autovacuum do it mid-measurement.
  await sql`vacuum analyze gamificacao.quadros_categorias_blocos, gamificacao.quadros_categorias_usuarios, gamificacao.estatisticas_categorias, public.chamados`;
  return { fullSeconds, changedCalls, changeLogRows: linhas, fiveMinuteSeconds, hourlySeconds, idleSeconds };
}
