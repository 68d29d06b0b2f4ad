/**
 * Scoring profile (`npm run bench -- scoring-profile [--technicians N] [--actions K]`), issue 33
 * step 1: where one POST /points action's cost goes. On the gamification bench's data set of N
 * technicians (10,000 by default) it
 *
 * 1. scores K actions (200 by default) one transaction each in SQL, as their technician, with
 *    `track_functions = 'all'` and reads `pg_stat_user_functions` and `pg_stat_user_tables` before
 *    and after (flushed with pg_stat_force_next_flush): self time per SQL function and rows written
 *    per table, per action (the bench stack runs nothing else meanwhile, its cron jobs paused);
 * 2. inserts K plain history rows (the gamification bench's baseline, one row a transaction) and
 *    compares the session backend's CPU (from /proc) for both;
 * 3. logs one action's nested statements with `auto_explain` (analyze, buffers, nested
 *    statements; needs the superuser, hence the stack's admin URL) and prints the slowest;
 * 4. runs the gamification bench's single-action load (POST /points, 32 in flight) and prints the
 *    CPU per request of the gateway, each functions-host thread and the Postgres backends.
 *
 * Step 1 also reads pg_stat_statements (`track = 'all'`, so the statements inside the SQL
 * functions are counted one by one) when the server preloads it, as the platform's Postgres now
 * does. Nothing here changes the project's schema or functions (the extension is created in
 * `extensions`); the data set is the gamification bench's (bench/gamification/data.ts), so the
 * figures compare with its table.
 */
import { readdirSync, readFileSync } from "node:fs";
import postgres, { type Sql } from "postgres";
import { loadConfig } from "../platform/config/stack-config.ts";
import type { BenchOptions } from "../scripts/bench.ts";
import { requiredEnv, signedInToken } from "./bench-support.ts";
import { generateData, scaleFor, type Scale } from "./gamification/data.ts";
import { describeLoad, runLoad, type PreparedRequest } from "./gamification/load.ts";
import { measureScoring, pauseJobs, prepareCalls, registration } from "./gamification/measure.ts";
import { servicePids } from "./process-cpu.ts";

/** CPU ms (user + system) of a process or thread from its /proc stat file; 0 once gone. */
function statCpuMs(path: string): number {
  try {
    const stat = readFileSync(path, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** CPU ms of every thread of `pid`, by thread name (threads of one name summed). */
function threadCpu(pid: number): Map<string, number> {
  const result = new Map<string, number>();
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return result;
  }
  for (const task of tasks) {
    let name = "?";
    try {
      name = readFileSync(`/proc/${pid}/task/${task}/comm`, "utf8").trim();
    } catch { /* gone */ }
    result.set(name, (result.get(name) ?? 0) + statCpuMs(`/proc/${pid}/task/${task}/stat`));
  }
  return result;
}

/** CPU ms of every child process of `parent` (Postgres backends of the postmaster), by pid. */
function childrenCpu(parent: number): Map<number, number> {
  const result = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === parent) result.set(Number(entry), (Number(fields[11]) + Number(fields[12])) * 10);
    } catch { /* gone */ }
  }
  return result;
}

/** The postmaster's pid (the first line of postmaster.pid, read through the server). */
async function postmasterPid(admin: Sql): Promise<number> {
  const [{ pid }] = await admin<{ pid: number }[]>`select (regexp_split_to_array(pg_read_file('postmaster.pid'), E'\n'))[1]::int as pid`;
  return pid;
}

/** Per-function self/total time and per-table rows written, summed over the profiled actions. */
/** Cumulative function and table statistics of the database, flushed from this session first. */
async function statistics(admin: Sql): Promise<{ functions: Map<string, { calls: number; self: number; total: number }>; tables: Map<string, { ins: number; upd: number; del: number }> }> {
  // Pending statistics are flushed when a transaction ends, at most once a second unless forced.
  await admin`select pg_stat_force_next_flush()`;
  await admin`select 1`;
  await admin`select pg_stat_clear_snapshot()`;
  const functions = new Map((await admin<{ name: string; calls: number; self: number; total: number }[]>`
    select schemaname || '.' || funcname as name, calls::int, self_time as self, total_time as total from pg_stat_user_functions`)
    .map((f) => [f.name, f]));
  const tables = new Map((await admin<{ name: string; ins: number; upd: number; del: number }[]>`
    select schemaname || '.' || relname as name, n_tup_ins::int as ins, n_tup_upd::int as upd, n_tup_del::int as del from pg_stat_user_tables`)
    .map((t) => [t.name, t]));
  return { functions, tables };
}

/** Starts pg_stat_statements afresh for this session's nested statements; false when the server does not preload it. */
async function resetStatements(admin: Sql): Promise<boolean> {
  const [{ libs }] = await admin<{ libs: string }[]>`select current_setting('shared_preload_libraries') as libs`;
  if (!libs.split(",").map((lib) => lib.trim()).includes("pg_stat_statements")) return false;
  await admin`create extension if not exists pg_stat_statements with schema extensions`;
  await admin`set pg_stat_statements.track = 'all'`;
  await admin`select extensions.pg_stat_statements_reset()`;
  return true;
}

/** The statements that took the most time over the profiled actions (nested ones included), ms and rows an action. */
async function printStatements(admin: Sql, actions: number): Promise<void> {
  const top = await admin<{ calls: number; ms: number; rows: number; query: string }[]>`
    select calls::int, total_exec_time as ms, rows::int, regexp_replace(query, '\\s+', ' ', 'g') as query
    from extensions.pg_stat_statements
    -- The scoring's own statements: nested ones, and the top-level call (the stack's other clients,
    -- PostgREST's and postgres-meta's catalog reads, run top-level statements of their own).
    where dbid = (select oid from pg_database where datname = current_database())
      and (not toplevel or query ~ 'gamificacao_registrar') and query !~* 'pg_stat_|set_config'
    order by total_exec_time desc limit 20`;
  console.log(`
pg_stat_statements (track = 'all'), the 20 statements with the most time, ms an action (a statement's time includes its callees'):`);
  for (const row of top) {
    console.log(`  ${(row.ms / actions).toFixed(3).padStart(7)} ms  ${(row.calls / actions).toFixed(1).padStart(5)} calls  ${(row.rows / actions).toFixed(1).padStart(6)} rows  ${row.query.slice(0, 100)}`);
  }
}

/** Per-function self/total time and per-table rows written, over `actions` scorings one transaction each, beside the plain insert. */
async function profileFunctions(admin: Sql, scale: Scale, actions: number, first: number): Promise<void> {
  const callOf = await prepareCalls(admin, scale, first, actions);
  const [{ pid }] = await admin<{ pid: number }[]>`select pg_backend_pid() as pid`;
  await admin`set track_functions = 'all'`;
  const statements = await resetStatements(admin);
  const before = await statistics(admin);
  const cpuBefore = statCpuMs(`/proc/${pid}/stat`);
  const started = performance.now();
  for (let n = first; n < first + actions; n += 1) {
    const action = registration(scale, n, callOf);
    await admin.begin(async (tx) => {
      // As the technician, as POST /points runs it: auth.uid() is set, so a rate-limit token is spent.
      await tx`select set_config('request.jwt.claims', ${JSON.stringify({ role: "authenticated", sub: action.usuario_id })}, true)`;
      const [{ status }] = await tx<{ status: number }[]>`
        select (public.gamificacao_registrar_acao(${action.usuario_id}::uuid, ${action.acao}, ${action.chamado_id}::uuid, '{}') ->> 'status')::int as status`;
      if (status !== 200) throw new Error(`action ${n} answered ${status}`);
    });
  }
  const scoringCpu = (statCpuMs(`/proc/${pid}/stat`) - cpuBefore) / actions;
  const scoringWall = (performance.now() - started) / actions;
  const after = await statistics(admin);
  await admin`set track_functions = 'none'`;
  if (statements) await printStatements(admin, actions);
  const self = new Map<string, { calls: number; self: number; total: number }>();
  for (const [name, f] of after.functions) {
    const b = before.functions.get(name) ?? { calls: 0, self: 0, total: 0 };
    if (f.calls > b.calls) self.set(name, { calls: f.calls - b.calls, self: f.self - b.self, total: f.total - b.total });
  }
  const rows = new Map<string, { ins: number; upd: number; del: number }>();
  for (const [name, t] of after.tables) {
    const b = before.tables.get(name) ?? { ins: 0, upd: 0, del: 0 };
    const d = { ins: t.ins - b.ins, upd: t.upd - b.upd, del: t.del - b.del };
    if (d.ins + d.upd + d.del > 0) rows.set(name, d);
  }

  // The baseline: the gamification bench's plain insert of the same history row, one a transaction.
  const plainOf = await prepareCalls(admin, scale, first + actions, actions);
  const plainBefore = statCpuMs(`/proc/${pid}/stat`);
  const plainStarted = performance.now();
  for (let n = first + actions; n < first + 2 * actions; n += 1) {
    const action = registration(scale, n, plainOf);
    await admin.begin((tx) => tx`
      insert into public.historico_pontos (usuario_id, chamado_id, acao, cidade_id, pontos_base, multiplicador_tier, multiplicador_densidade,
        multiplicador_nivel, pontos_final, tier, tecnicos_ativos, nivel_antes, distancia_m, metadata, registrado_por, data_acao)
      select ${action.usuario_id}::uuid, ch.id, ${action.acao}, ch.cidade_id, 50, m.multiplicador_tier, m.multiplicador_densidade, 1.00, 50,
        m.tier, m.tecnicos_ativos, 'iniciante', null, '{}', null, now()
      from public.chamados ch join public.cidades_metricas m on m.cidade_id = ch.cidade_id where ch.id = ${action.chamado_id}::uuid`);
  }
  const plainCpu = (statCpuMs(`/proc/${pid}/stat`) - plainBefore) / actions;
  const plainWall = (performance.now() - plainStarted) / actions;
  console.log(`\nOne action a transaction, ${actions} actions, one session (backend CPU from /proc; wall includes the client round trips):`);
  console.log(`  scoring (public.gamificacao_registrar_acao, as the technician): backend CPU ${scoringCpu.toFixed(2)} ms, wall ${scoringWall.toFixed(2)} ms an action`);
  console.log(`  plain insert of the same history row (baseline):              backend CPU ${plainCpu.toFixed(2)} ms, wall ${plainWall.toFixed(2)} ms a row`);
  console.log(`  scoring ÷ plain insert: ${(scoringCpu / plainCpu).toFixed(1)}× CPU, ${(scoringWall / plainWall).toFixed(1)}× wall`);

  console.log(`\nSQL functions (track_functions = 'all'), ms an action, by self time (the function's own statements, callees excluded):`);
  console.log(`  ${"function".padEnd(52)} ${"calls".padStart(7)} ${"self".padStart(8)} ${"total".padStart(8)}`);
  for (const [name, f] of [...self].sort((a, b) => b[1].self - a[1].self)) {
    if (f.self / actions < 0.005) continue;
    console.log(`  ${name.padEnd(52)} ${(f.calls / actions).toFixed(1).padStart(7)} ${(f.self / actions).toFixed(3).padStart(8)} ${(f.total / actions).toFixed(3).padStart(8)}`);
  }
  console.log(`\nRows written an action (pg_stat_user_tables, before and after; an update counts once, HOT or not):`);
  for (const [name, t] of [...rows].sort((a, b) => b[1].ins + b[1].upd + b[1].del - (a[1].ins + a[1].upd + a[1].del))) {
    console.log(`  ${name.padEnd(52)} inserted ${(t.ins / actions).toFixed(2)}, updated ${(t.upd / actions).toFixed(2)}, deleted ${(t.del / actions).toFixed(2)}`);
  }
}

/** One action with auto_explain on every nested statement (analyze, buffers); prints the slowest plans' headers. */
async function explainOne(adminUrl: string, scale: Scale, first: number): Promise<void> {
  const plans: { ms: number; text: string }[] = [];
  const admin = postgres(adminUrl, {
    max: 1,
    onnotice: (notice) => {
      const match = /^duration: ([\d.]+) ms/.exec(notice.message ?? "");
      if (match) plans.push({ ms: Number(match[1]), text: notice.message });
    },
  });
  try {
    const callOf = await prepareCalls(admin, scale, first, 3);
    await admin`load 'auto_explain'`;
    await admin.unsafe(`set auto_explain.log_min_duration = 0; set auto_explain.log_analyze = on; set auto_explain.log_buffers = on;
      set auto_explain.log_nested_statements = on; set auto_explain.log_timing = on; set auto_explain.log_level = notice; set client_min_messages = notice`);
    // The first two warm the session's plan caches; the third is the one printed.
    for (let n = first; n < first + 3; n += 1) {
      plans.length = 0;
      const action = registration(scale, n, callOf);
      await admin.begin(async (tx) => {
        await tx`select set_config('request.jwt.claims', '{"role": "service_role"}', true)`;
        await tx`select public.gamificacao_registrar_acao(${action.usuario_id}::uuid, ${action.acao}, ${action.chamado_id}::uuid, '{}')`;
      });
    }
    const statements = plans.filter((p) => !/Query Text: select set_config/.test(p.text));
    const top = statements.reduce((max, p) => Math.max(max, p.ms), 0);
    console.log(`\nauto_explain, one warm action: ${statements.length} statements logged (nested included; each duration includes its callees'), the top-level ${top.toFixed(2)} ms. The slowest 25:`);
    for (const plan of [...statements].sort((a, b) => b.ms - a.ms).slice(0, 25)) {
      const query = /Query Text: ([\s\S]*?)\n[A-Z ]*\(/.exec(plan.text)?.[1] ?? plan.text.split("\n")[1] ?? "";
      const buffers = /Buffers: ([^\n]*)/.exec(plan.text)?.[1] ?? "";
      console.log(`  ${plan.ms.toFixed(3).padStart(8)} ms  ${query.replace(/\s+/g, " ").slice(0, 110)}${buffers ? `  [${buffers.trim()}]` : ""}`);
    }
  } finally {
    await admin.end();
  }
}

/** The single-action HTTP load with the CPU each process (and host thread) spent per request. */
async function profileHttp(sql: Sql, admin: Sql, scale: Scale, count: number, first: number): Promise<void> {
  const { gateway, functions, postgrest } = servicePids(loadConfig("bench"));
  const postmaster = await postmasterPid(admin);
  const stack = { url: requiredEnv("SUPABASE_URL"), jwtSecret: requiredEnv("SUPABASE_JWT_SECRET"), scale };
  const callOf = await prepareCalls(sql, scale, first, count);
  const requests: PreparedRequest[] = [];
  for (let n = first; n < first + count; n += 1) {
    const action = registration(scale, n, callOf);
    requests.push({
      method: "POST", url: `${stack.url}/functions/v1/api/v1/gamification/points`,
      token: await signedInToken(stack.jwtSecret, action.usuario_id), body: action,
    });
  }
  const warmUp = Math.floor(count / 10);
  await runLoad(requests.slice(0, warmUp), 32);
  const measured = count - warmUp;
  const threadsBefore = threadCpu(functions);
  const backendsBefore = childrenCpu(postmaster);
  const gatewayBefore = statCpuMs(`/proc/${gateway}/stat`);
  const postgrestBefore = postgrest ? statCpuMs(`/proc/${postgrest}/stat`) : 0;
  const ownBefore = process.cpuUsage();
  const load = await runLoad(requests.slice(warmUp), 32);
  const own = process.cpuUsage(ownBefore);
  const threadsAfter = threadCpu(functions);
  const backendsAfter = childrenCpu(postmaster);
  const per = (ms: number) => (ms / measured).toFixed(2);
  console.log(`\nPOST /points, one action a request, 32 in flight, ${measured} requests after ${warmUp} to warm up (${describeLoad(load)}); CPU ms a request:`);
  console.log(`  the load generator (this node process, signing nothing: tokens are made beforehand) ${per((own.user + own.system) / 1000)}`);
  console.log(`  gateway (HAProxy) ${per(statCpuMs(`/proc/${gateway}/stat`) - gatewayBefore)}`);
  if (postgrest) console.log(`  PostgREST ${per(statCpuMs(`/proc/${postgrest}/stat`) - postgrestBefore)}`);
  let hostTotal = 0;
  for (const [name, after] of [...threadsAfter].sort((a, b) => b[1] - a[1])) {
    const spent = after - (threadsBefore.get(name) ?? 0);
    hostTotal += spent;
    if (spent / count >= 0.01) console.log(`  functions host thread "${name}" ${per(spent)}`);
  }
  console.log(`  functions host, all threads ${per(hostTotal)}`);
  let backends = 0;
  for (const [pid, after] of backendsAfter) backends += after - (backendsBefore.get(pid) ?? 0);
  console.log(`  Postgres processes (backends, walwriter, …; exited ones not counted) ${per(backends)}`);
}

/** Generates the data set and runs the three profiles. */
export async function run(options: BenchOptions): Promise<void> {
  const technicians = Number(options.flags.technicians ?? 10_000);
  const actions = Number(options.flags.actions ?? 200);
  const dbUrl = requiredEnv("SUPABASE_DB_URL");
  const adminUrl = loadConfig("bench").adminDbUrl;
  const scale = scaleFor(technicians);
  const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    console.log(`Scoring profile on ${technicians.toLocaleString("en")} technicians (${scale.calls.toLocaleString("en")} calls); generating the data set:`);
    await generateData(dbUrl, scale, (line) => console.log(line));
    console.log(`pg_cron jobs paused: ${(await pauseJobs(sql)).join(", ")}.`);
    const [{ libs }] = await admin<{ libs: string }[]>`select current_setting('shared_preload_libraries') as libs`;
    console.log(`shared_preload_libraries = '${libs}' (pg_stat_statements ${libs.includes("pg_stat_statements") ? "available" : "not loaded, so not used"}).`);
    // Settle the freshly loaded data set as the gamification bench does (its first 20,000 actions run slower).
    await measureScoring(sql, { url: requiredEnv("SUPABASE_URL"), jwtSecret: requiredEnv("SUPABASE_JWT_SECRET"), scale }, 2000, 8, 200_001);
    await profileFunctions(admin, scale, actions, 300_001);
    await explainOne(adminUrl, scale, 310_001);
    await profileHttp(sql, admin, scale, 2200, 320_001);
  } finally {
    await sql.end();
    await admin.end();
  }
}
