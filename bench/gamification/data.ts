/**
 * Generates the gamification bench data set in SQL (generate_series) at a given scale (100,000
 * technicians in 500 cities, 2 million calls and about 5 million history rows by default), then the
 * running totals, counters, badges, rank buckets, category boards and snapshots that scoring would
 * have left behind; and removes it again, so one bench run can measure two sizes.
 *
 * Bulk-load practice keeps it to a few minutes on 2 cores: ids are sequential (append-only
 * b-tree inserts), the two big tables are loaded by two sessions at once, and their secondary
 * indexes, unique constraints and foreign keys are dropped first and recreated afterwards from
 * the definitions read from the catalog, so the measured schema is exactly the migrations'.
 */
import postgres, { type Sql } from "postgres";

/** Sizes of one generated data set. */
export interface Scale {
  technicians: number;
  cities: number;
  calls: number;
}

/**
 * The data set for `technicians`: 500 cities; 20 calls a technician up to 2 million calls, and at
 * least 4 a technician beyond (1 million technicians: 4 million calls, about 10 million history
 * rows, the issue's hand-run data set).
 */
export function scaleFor(technicians: number): Scale {
  return { technicians, cities: 500, calls: Math.max(Math.min(20 * technicians, 2_000_000), 4 * technicians) };
}

/** The id of bench technician `n` (1-based); sequential, so the primary key grows at its right edge. */
export function technicianId(n: number): string {
  return `b0000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
}

/** SQL for technicianId() on an integer expression. */
const technicianIdSql = (n: string) => `('b0000000-0000-4000-8000-' || lpad(to_hex(${n}), 12, '0'))::uuid`;
const callIdSql = (k: string) => `('c0000000-0000-4000-8000-' || lpad(to_hex(${k}), 12, '0'))::uuid`;

/** A secondary object of a table, as the catalog defines it. */
interface Secondary {
  table: string;
  name: string;
  definition: string;
  kind: "index" | "constraint";
}

/** The indexes (not backing a constraint), unique constraints and foreign keys of `table`. */
async function secondaries(sql: Sql, table: string): Promise<Secondary[]> {
  return sql<Secondary[]>`
    select ${table} as table, conname as name, pg_get_constraintdef(oid) as definition, 'constraint' as kind
    from pg_constraint where conrelid = ${table}::regclass and contype in ('f', 'u')
    union all
    select ${table}, c.relname, pg_get_indexdef(i.indexrelid), 'index'
    from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid = ${table}::regclass and not i.indisprimary
      and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)`;
}

async function dropSecondaries(sql: Sql, items: Secondary[]): Promise<void> {
  for (const item of items) {
    const schema = item.table.split(".")[0];
    if (item.kind === "constraint") await sql.unsafe(`alter table ${item.table} drop constraint "${item.name}"`);
    else await sql.unsafe(`drop index ${schema}."${item.name}"`);
  }
}

/** Recreates indexes first (two at a time), then constraints (a unique one builds its index; a foreign key validates in one pass). */
async function restoreSecondaries(sql: Sql, items: Secondary[]): Promise<void> {
  const indexes = items.filter((item) => item.kind === "index");
  for (let i = 0; i < indexes.length; i += 2) await Promise.all(indexes.slice(i, i + 2).map((item) => sql.unsafe(item.definition)));
  for (const item of items.filter((entry) => entry.kind === "constraint")) {
    await sql.unsafe(`alter table ${item.table} add constraint "${item.name}" ${item.definition}`);
  }
}

/** Inserts calls k in [from, to]: 15% in the current week and 25% in the current month (so current boards are full whatever the date), the rest over 120 days. */
function callsSql(scale: Scale, from: number, to: number): string {
  return `
    insert into public.chamados (id, tecnico_id, cidade_id, latitude, longitude, agendado_para, aceito_em, checkin_em, checkout_em,
      status, cancelado_em, cancelado_por, estrelas, criado_em, atualizado_em)
    select ${callIdSql("k")}, ${technicianIdSql(`1 + k % ${scale.technicians}`)}, 'bench-' || ((1 + k % ${scale.technicians}) % ${scale.cities}),
      -23.55, -46.63, c.agendado, c.agendado - interval '1 day',
      case when not c.cancelado then c.agendado + c.atraso end,
      case when not c.cancelado then c.agendado + c.atraso + c.duracao end,
      case when c.cancelado then 'cancelado' else 'concluido' end,
      case when c.cancelado then c.agendado end,
      case when c.cancelado then case when k % 2 = 0 then 'tecnico' else 'cliente' end end,
      case when not c.cancelado then case when h.sorte % 10 < 7 then 5 when h.sorte % 10 < 9 then 4 end end,
      c.agendado, c.agendado
    from (select gamificacao.meia_noite_local(gamificacao.inicio_periodo('semanal', now())) as semana,
            gamificacao.meia_noite_local(gamificacao.inicio_periodo('mensal', now())) as mes,
            now() - interval '120 days' as janela) l
    cross join generate_series(${from}, ${to}) k
    cross join lateral (select abs(hashtext(k::text)) as sorte) h
    cross join lateral (select case when k % 20 < 3 then l.semana when k % 20 < 8 then l.mes else l.janela end as desde) j
    cross join lateral (select
        least(j.desde + (h.sorte % 1000000) / 1000000.0 * (now() - j.desde), now() - interval '4 hours') as agendado,
        h.sorte % 25 = 0 as cancelado,
        (h.sorte % 36 - 10) * interval '1 minute' as atraso,
        (30 + h.sorte % 120) * interval '1 minute' as duracao) c`;
}

/** Inserts the history of the bench calls k in [from, to]: check-in if punctual, conclusion, rating; nivel 1.00 throughout. */
function historySql(from: number, to: number): string {
  return `
    insert into public.historico_pontos (usuario_id, chamado_id, acao, cidade_id, pontos_base, multiplicador_tier, multiplicador_densidade,
      multiplicador_nivel, pontos_final, tier, tecnicos_ativos, nivel_antes, data_acao)
    select ch.tecnico_id, ch.id, a.acao, ch.cidade_id, a.base, m.multiplicador_tier, m.multiplicador_densidade, 1.00,
      round(a.base * m.multiplicador_tier * m.multiplicador_densidade), m.tier, m.tecnicos_ativos, 'iniciante', a.momento
    from public.chamados ch
    join public.cidades_metricas m on m.cidade_id = ch.cidade_id
    cross join lateral (values
      ('checkin_pontual', 10, ch.checkin_em + interval '2 minutes', ch.checkin_em <= ch.agendado_para + interval '15 minutes'),
      ('chamado_concluido', 50, ch.checkout_em + interval '1 minute', true),
      ('avaliacao_5_estrelas', 25, ch.checkout_em + interval '2 minutes', ch.estrelas = 5),
      ('avaliacao_4_estrelas', 10, ch.checkout_em + interval '2 minutes', ch.estrelas = 4)
    ) a (acao, base, momento, elegivel)
    where ch.id between ${callIdSql(String(from))} and ${callIdSql(String(to))} and ch.status = 'concluido' and a.elegivel`;
}

/** Splits 1..total into two halves for the two loading sessions. */
function halves(total: number): [number, number][] {
  const middle = Math.floor(total / 2);
  return [
    [1, middle],
    [middle + 1, total],
  ];
}

const setupSql = (scale: Scale) => `
  insert into public.cidades (id, nome, uf)
  select 'bench-' || c, 'Bench ' || c, 'BX' from generate_series(0, ${scale.cities - 1}) c;
  insert into public.cidades_metricas (cidade_id, chamados_90d, tier, multiplicador_tier, tecnicos_ativos, multiplicador_densidade, calculado_em)
  select 'bench-' || c, v.chamados, (f).tier, (f).multiplicador, 1 + c % 12, gamificacao.multiplicador_densidade(1 + c % 12), now()
  from generate_series(0, ${scale.cities - 1}) c
  cross join lateral (select (array[1500, 500, 120, 30, 5])[1 + c % 5] as chamados) v
  cross join lateral (select gamificacao.faixa_tier(v.chamados) as f) t;
  ${techniciansSql(1, scale.technicians, scale.cities)}`;

/** Inserts bench technicians `from`..`to` (with their auth users), in `cities` cities bench-0… (which must exist). */
export function techniciansSql(from: number, to: number, cities: number): string {
  return `
  insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at, raw_app_meta_data, raw_user_meta_data,
    created_at, updated_at, confirmation_token, recovery_token, email_change_token_new, email_change)
  select '00000000-0000-0000-0000-000000000000', ${technicianIdSql("n")}, 'authenticated', 'authenticated',
    'bench-' || n || '@bench.orbita.test', '', now(), '{}', '{}', now(), now(), '', '', '', ''
  from generate_series(${from}, ${to}) n;
  insert into public.tecnicos (id, nome, cidade_id)
  select ${technicianIdSql("n")}, 'Técnico Bench ' || n, 'bench-' || (n % ${cities}) from generate_series(${from}, ${to}) n;`;
}

/**
 * Lifetime totals and levels, then the period totals, from one pass of daily sums over the bench
 * history; the action counters from one pass of per-action counts, kept (bench_acoes) for badgesSql
 * in the same transaction.
 */
const totalsSql = `
  create temporary table bench_diarios on commit drop as
  select h.usuario_id, gamificacao.hora_local(h.data_acao)::date as dia, sum(h.pontos_final)::integer as pontos,
    count(*)::integer as acoes, max(h.data_acao) as ultima
  from public.historico_pontos h where h.cidade_id like 'bench-%' group by 1, 2;
  update public.tecnicos t set pontos_total = s.pontos, ultima_pontuacao_em = s.ultima,
    nivel = (select n.slug from public.niveis n where n.pontos_minimos <= s.pontos order by n.ordem desc limit 1)
  from (select usuario_id, sum(pontos)::integer as pontos, max(ultima) as ultima from bench_diarios group by 1) s
  where t.id = s.usuario_id;
  insert into gamificacao.totais_periodo (usuario_id, periodo, periodo_inicio, cidade_id, nivel_ordem, pontos, acoes, ultima_pontuacao_em)
  select d.usuario_id, p.periodo, case p.periodo
      when 'semanal' then date_trunc('week', d.dia)::date when 'mensal' then date_trunc('month', d.dia)::date
      when 'anual' then date_trunc('year', d.dia)::date else '-infinity'::date end,
    t.cidade_id, n.ordem, sum(d.pontos), sum(d.acoes), max(d.ultima)
  from bench_diarios d
  cross join gamificacao.periodos p
  join public.tecnicos t on t.id = d.usuario_id
  join public.niveis n on n.slug = t.nivel
  group by 1, 2, 3, 4, 5;
  create temporary table bench_acoes on commit drop as
  select usuario_id, acao, count(*)::integer as quantidade, max(id) as ultimo_id
  from public.historico_pontos where cidade_id like 'bench-%' group by 1, 2;
  insert into gamificacao.contagem_acoes (usuario_id, acao, quantidade) select usuario_id, acao, quantidade from bench_acoes;`;

/**
 * The badges the loaded history earns under the rules scoring checks inline (action counts, the
 * level, the city's tier and active technicians), linked to the technician's last action of the
 * rule's kind, and their number on each technician; without them every measured scoring would
 * also award its technician's backlog of badges (about 2.6 an action), which no running deployment
 * does. The rules that read history or calls (full week, early check-ins, rating average) are left
 * to scoring, which evaluates them on every action anyway. Runs after totalsSql, in its
 * transaction, reading its per-action counts (bench_acoes).
 */
const badgesSql = `
  insert into public.usuario_badges (usuario_id, badge_codigo, conquistado_em, historico_id)
  select t.id, b.codigo, t.ultima_pontuacao_em, max(h.ultimo_id)
  from public.tecnicos t
  join public.niveis n on n.slug = t.nivel
  join public.cidades_metricas m on m.cidade_id = t.cidade_id
  join bench_acoes h on h.usuario_id = t.id
  join public.badges b on b.ativo and (b.regra_acao is null or b.regra_acao = h.acao)
  where case b.regra_tipo
    when 'contagem_acao' then h.quantidade >= b.regra_minimo
    when 'nivel' then n.ordem >= b.regra_minimo
    when 'tier_cidade' then m.tier >= b.regra_minimo
    when 'tecnicos_ativos' then greatest(m.tecnicos_ativos, 1) <= b.regra_minimo
    else false
  end
  group by 1, 2, 3;
  update public.tecnicos t set badges_count = c.quantidade
  from (select usuario_id, count(*)::integer as quantidade from public.usuario_badges group by 1) c
  where t.id = c.usuario_id and t.cidade_id like 'bench-%';`;

/** The triggers that log changed calls for the category job (20261121020800_gamification-category-rankings.sql). */
const changeLogTriggers = ["chamados_alterados_insert", "chamados_alterados_update", "chamados_alterados_delete"];

/** Tables vacuumed after the load, so index-only scans see all-visible pages (VACUUM refuses multi-statement strings). */
const vacuumed = [
  "public.chamados", "public.historico_pontos", "public.tecnicos", "public.usuario_badges", "gamificacao.totais_periodo", "gamificacao.faixas_ranking", "gamificacao.faixas_cidades",
  "gamificacao.quadros_categorias_blocos", "gamificacao.quadros_categorias_usuarios", "gamificacao.ranking_snapshots", "gamificacao.contagem_acoes", "gamificacao.estatisticas_categorias",
];

/** What generating a data set took and left. */
export interface Generated {
  seconds: number;
  historyRows: number;
}

/** Generates the data set on the database at `dbUrl`, printing each step's duration. */
export async function generateData(dbUrl: string, scale: Scale, log: (line: string) => void): Promise<Generated> {
  const sql = postgres(dbUrl, {
    max: 2,
    onnotice: () => {},
    connection: { work_mem: "128MB", maintenance_work_mem: "512MB", max_parallel_maintenance_workers: 1, statement_timeout: 0 },
  });
  const started = Date.now();
  const step = async (label: string, work: () => Promise<unknown>) => {
    const stepStarted = Date.now();
    await work();
    log(`  ${label}: ${((Date.now() - stepStarted) / 1000).toFixed(1)} s`);
  };
  try {
    await step(`${scale.cities} cities, ${scale.technicians.toLocaleString("en")} auth users and technicians`, () => sql.unsafe(setupSql(scale)));
    const big = [...(await secondaries(sql, "public.chamados")), ...(await secondaries(sql, "public.historico_pontos"))];
    await step("drop secondary indexes, unique constraints and foreign keys of calls and history", () => dropSecondaries(sql, big));
    // The change log of calls would hold a row per loaded call for the category job to fold; the
    // statistics are rebuilt from the calls instead (gamificacao.reconstruir_estatisticas_categorias below).
    await sql.unsafe(changeLogTriggers.map((name) => `alter table public.chamados disable trigger ${name}`).join(";"));
    await step(`${scale.calls.toLocaleString("en")} calls`, () => Promise.all(halves(scale.calls).map(([from, to]) => sql.unsafe(callsSql(scale, from, to)))));
    await step("history (check-in, conclusion, rating of each call)", () =>
      Promise.all(halves(scale.calls).map(([from, to]) => sql.unsafe(historySql(from, to)))));
    await step("recreate them", () => restoreSecondaries(sql, big));
    await sql.unsafe(changeLogTriggers.map((name) => `alter table public.chamados enable trigger ${name}`).join(";"));
    await sql`select gamificacao.reconstruir_estatisticas_categorias()`;
    await step("analyze", () => sql.unsafe("analyze public.chamados; analyze public.historico_pontos;"));
    const totals = await secondaries(sql, "gamificacao.totais_periodo");
    await dropSecondaries(sql, totals.filter((item) => item.kind === "index"));
    const badges = await secondaries(sql, "public.usuario_badges");
    await dropSecondaries(sql, badges);
    await sql.begin(async (tx) => {
      await step("lifetime totals, levels, period totals and action counters", () => tx.unsafe(totalsSql));
      await step("badges the history earns", () => tx.unsafe(badgesSql));
    });
    await restoreSecondaries(sql, badges);
    await step("recreate the board indexes and rebuild the rank buckets", async () => {
      await restoreSecondaries(sql, totals.filter((item) => item.kind === "index"));
      await sql`select gamificacao.reconstruir_faixas()`;
    });
    await step("category boards and snapshots (the daily job)", () => sql`select gamificacao.capturar_snapshots()`);
    await step("vacuum analyze", async () => {
      for (const table of vacuumed) await sql.unsafe(`vacuum analyze ${table}`);
    });
    const [{ linhas }] = await sql<{ linhas: string }[]>`select count(*)::text as linhas from public.historico_pontos`;
    const seconds = (Date.now() - started) / 1000;
    log(`  ${Number(linhas).toLocaleString("en")} history rows ready in ${seconds.toFixed(0)} s`);
    return { seconds, historyRows: Number(linhas) };
  } finally {
    await sql.end();
  }
}

/**
 * Removes a generated data set, so the next size starts from the same empty boards. The ledger,
 * calls and everything derived from them are truncated (a row-by-row cascade over millions of
 * history rows would take longer than generating them); the seed's few scored actions go with
 * them, which the measurements (bench technicians only) do not read.
 */
export async function removeData(dbUrl: string): Promise<void> {
  const sql = postgres(dbUrl, { max: 1, onnotice: () => {}, connection: { statement_timeout: 0 } });
  try {
    await sql.unsafe(`
      truncate public.usuario_badges, public.historico_pontos, public.chamados, gamificacao.totais_periodo, gamificacao.faixas_ranking, gamificacao.faixas_cidades,
        gamificacao.contagem_acoes, gamificacao.quadros_categorias_blocos, gamificacao.quadros_categorias_usuarios, gamificacao.ranking_categorias_calculos, gamificacao.ranking_snapshots,
        gamificacao.limites_uso, gamificacao.estatisticas_periodos, gamificacao.estatisticas_categorias, gamificacao.chamados_alterados;
      delete from public.tecnicos where id::text like 'b0000000-%';
      delete from auth.users where id::text like 'b0000000-%';
      delete from public.cidades_metricas where cidade_id like 'bench-%';
      delete from public.cidades where id like 'bench-%';`);
    for (const table of ["public.tecnicos", "auth.users", "public.cidades"]) await sql.unsafe(`vacuum analyze ${table}`);
  } finally {
    await sql.end();
  }
}
