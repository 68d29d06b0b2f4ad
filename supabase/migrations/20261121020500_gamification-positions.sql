-- Gamification: positions on the points boards, without counting whole boards.
--
-- A board is a period (kind + first day) and a scope: `nacional` (everyone), `nivel` (everyone at
-- one level, key = level ordem) or `local` (one home city, key = city id). Order everywhere:
-- points desc, then the earlier last scoring (whoever reached the score first), then usuario_id,
-- so positions are unique and stable. National boards hold up to 100k technicians, so their
-- position is 1 + technicians in higher coarse buckets + in higher fine buckets of the same coarse
-- bucket (gamificacao.faixas_ranking, at most a few dozen rows each) + those ahead inside the fine
-- bucket (a short index range). City boards are small enough to count on their index.
--
-- Scoring moves a technician between buckets; the moves of one or many actions are collected as
-- gamificacao.movimentos and applied in one statement, rows in key order, so concurrent scorings
-- lock the shared bucket rows in the same order and cannot deadlock.

/** Fine buckets per coarse bucket. */
create function gamificacao.faixas_por_grupo() returns integer
language sql immutable parallel safe set search_path = '' as $$
  select 32
$$;
comment on function gamificacao.faixas_por_grupo() is 'How many fine rank buckets make one coarse bucket.';

/**
 * The period's fine bucket width and the fine and coarse buckets of `p_pontos` points, as one row a
 * position's statement joins. An SQL function without `set search_path`, so the planner inlines it
 * there (no statement of its own); every name in it is schema-qualified.
 */
create function gamificacao.faixas_da_posicao(p_periodo text, p_pontos integer)
returns table (largura integer, faixa integer, grupo integer)
language sql stable parallel safe as $$
  select p.largura_faixa, p_pontos / p.largura_faixa, p_pontos / p.largura_faixa / gamificacao.faixas_por_grupo()
  from gamificacao.periodos p where p.periodo = p_periodo
$$;
comment on function gamificacao.faixas_da_posicao(text, integer) is
  'Bucket width and the fine and coarse buckets of a points value in a period, for gamificacao.posicao.';

/**
 * 1-based position on a board of the entry (p_pontos, p_ultima, p_usuario); the entry itself need
 * not be on the board yet. One statement per call, so the bucket sums and the counts come from the
 * same snapshot and the board is read in one pass: the rank buckets above (gamificacao.faixas_cidades
 * for a city board, gamificacao.faixas_ranking otherwise), then the entries ahead inside the fine
 * bucket, which the board of all levels counts from its exact-points rows and its tie keys. On that
 * board the entries tied on points inside the entry's own time slot are counted on the index from
 * the nearer end of the slot: the entries ahead directly when the slot's start is nearer, otherwise
 * the points' whole count less the later slots and the entries from this one on (the entry itself
 * included when it is on the board).
 */
create function gamificacao.posicao(
  p_quadro text, p_periodo text, p_inicio date, p_chave text,
  p_pontos integer, p_ultima timestamptz, p_usuario uuid
) returns integer
-- Generic plans: every statement is an index range on its board's key, whatever the parameters,
-- and the planner's default of re-planning when a custom plan looks cheaper cost more than the
-- statements (at a million technicians 0.25 ms a position against 0.15 ms).
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  v_posicao bigint;
  v_nivel smallint;
  v_fatia integer;
  v_inicio_fatia timestamptz;
  v_fim_fatia timestamptz;
begin
  -- The bucket width is read inside each statement (`l`), not by a statement of its own: every
  -- statement a position runs is a fixed cost (executor start, locks) as large as its index reads.
  if p_quadro = 'local' then
    select 1
      + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_cidades f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.cidade_id = p_chave and f.escala = 1 and f.faixa > l.grupo)
      + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_cidades f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.cidade_id = p_chave and f.escala = 0
           and f.faixa > l.faixa and f.faixa < (l.grupo + 1) * gamificacao.faixas_por_grupo())
      + (select count(*) from gamificacao.totais_periodo t
         where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.cidade_id = p_chave
           and t.pontos > p_pontos and t.pontos < (l.faixa + 1) * l.largura)
      + (select count(*) from gamificacao.totais_periodo t
         where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.cidade_id = p_chave and t.pontos = p_pontos
           and (t.ultima_pontuacao_em, t.usuario_id) < (p_ultima, p_usuario))
    into v_posicao
    from gamificacao.faixas_da_posicao(p_periodo, p_pontos) l;
    return v_posicao;
  end if;

  v_nivel := case when p_quadro = 'nivel' then p_chave::smallint else 0 end;
  if v_nivel <> 0 then
    select 1
      + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_ranking f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.nivel = v_nivel and f.escala = 1 and f.faixa > l.grupo)
      + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_ranking f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.nivel = v_nivel and f.escala = 0
           and f.faixa > l.faixa and f.faixa < (l.grupo + 1) * gamificacao.faixas_por_grupo())
      + (select count(*) from gamificacao.totais_periodo t
         where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.nivel_ordem = v_nivel
           and t.pontos > p_pontos and t.pontos < (l.faixa + 1) * l.largura)
      + (select count(*) from gamificacao.totais_periodo t
         where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.nivel_ordem = v_nivel and t.pontos = p_pontos
           and (t.ultima_pontuacao_em, t.usuario_id) < (p_ultima, p_usuario))
    into v_posicao
    from gamificacao.faixas_da_posicao(p_periodo, p_pontos) l;
    return v_posicao;
  end if;

  v_fatia := gamificacao.fatia_empate(p_periodo, p_inicio, p_ultima);
  v_inicio_fatia := gamificacao.inicio_fatia_empate(p_periodo, p_inicio, v_fatia);
  -- Scorings arrive now, so a slot fills up to the present: a technician who has just scored
  -- has hardly anyone after them in their slot, but everyone who scored the same points earlier
  -- in it ahead (at a million technicians, a busy slot's hundreds of index entries per answer).
  -- The index count runs from whichever end of the slot is nearer in time: the slot's end, or
  -- the present while the slot is still filling (a CASE, so slot 0's infinite start is never
  -- subtracted). A past slot is full, so an entry in its later half counts from its end: half
  -- the walk, on average, of counting every past entry from the start. Two statements: one with
  -- a CASE between the two counts measured no faster (1,024 against 1,054 actions/s, three
  -- alternating runs on the bench's 100k data set, within the machine's noise).
  v_fim_fatia := case when v_fatia >= 63 then 'infinity' else gamificacao.inicio_fatia_empate(p_periodo, p_inicio, v_fatia + 1) end;
  if (case when v_inicio_fatia = '-infinity' then true else least(v_fim_fatia, now()) - p_ultima < p_ultima - v_inicio_fatia end) then
    select 1
      + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_ranking f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.nivel = 0 and f.escala = 1 and f.faixa > l.grupo)
      + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_ranking f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.nivel = 0 and f.escala = 0
           and f.faixa > l.faixa and f.faixa < (l.grupo + 1) * gamificacao.faixas_por_grupo())
      + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_ranking f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.nivel = 0 and f.escala = 2
           and f.faixa >= p_pontos and f.faixa < (l.faixa + 1) * l.largura)
      - (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_pontos f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio
           and f.chave > p_pontos * 64 + v_fatia and f.chave < (p_pontos + 1) * 64)
      - (select count(*) from gamificacao.totais_periodo t
         where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.pontos = p_pontos
           and (t.ultima_pontuacao_em, t.usuario_id) >= (p_ultima, p_usuario) and t.ultima_pontuacao_em < v_fim_fatia)
    into v_posicao
    from gamificacao.faixas_da_posicao(p_periodo, p_pontos) l;
  else
    select 1
      + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_ranking f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.nivel = 0 and f.escala = 1 and f.faixa > l.grupo)
      + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_ranking f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.nivel = 0 and f.escala = 0
           and f.faixa > l.faixa and f.faixa < (l.grupo + 1) * gamificacao.faixas_por_grupo())
      + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_ranking f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.nivel = 0 and f.escala = 2
           and f.faixa > p_pontos and f.faixa < (l.faixa + 1) * l.largura)
      + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_pontos f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio
           and f.chave >= p_pontos * 64 and f.chave < p_pontos * 64 + v_fatia)
      + (select count(*) from gamificacao.totais_periodo t
         where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.pontos = p_pontos
           and t.ultima_pontuacao_em >= v_inicio_fatia
           and (t.ultima_pontuacao_em, t.usuario_id) < (p_ultima, p_usuario))
    into v_posicao
    from gamificacao.faixas_da_posicao(p_periodo, p_pontos) l;
  end if;
  return v_posicao;
end;
$$;
comment on function gamificacao.posicao(text, text, date, text, integer, timestamptz, uuid) is
  'Position on a points board (nacional, nivel or local) from the rank buckets, the tie keys and the board indexes.';

/**
 * Points between an entry and the entry right above it: 0 for the leader, and 0 when tied on points
 * but placed below by the time tie-break (passing then takes one point more than this distance).
 */
create function gamificacao.distancia_proximo(
  p_quadro text, p_periodo text, p_inicio date, p_chave text,
  p_pontos integer, p_ultima timestamptz, p_usuario uuid
) returns integer
language plpgsql stable set search_path = '' as $$
declare
  v_empatado_acima boolean;
  v_acima integer;
begin
  if p_quadro = 'local' then
    select
      exists (select 1 from gamificacao.totais_periodo t
              where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.cidade_id = p_chave and t.pontos = p_pontos
                and (t.ultima_pontuacao_em, t.usuario_id) < (p_ultima, p_usuario)),
      (select min(t.pontos) from gamificacao.totais_periodo t
       where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.cidade_id = p_chave and t.pontos > p_pontos)
    into v_empatado_acima, v_acima;
  elsif p_quadro = 'nivel' then
    select
      exists (select 1 from gamificacao.totais_periodo t
              where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.nivel_ordem = p_chave::smallint
                and t.pontos = p_pontos and (t.ultima_pontuacao_em, t.usuario_id) < (p_ultima, p_usuario)),
      (select min(t.pontos) from gamificacao.totais_periodo t
       where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.nivel_ordem = p_chave::smallint and t.pontos > p_pontos)
    into v_empatado_acima, v_acima;
  else
    select
      exists (select 1 from gamificacao.totais_periodo t
              where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.pontos = p_pontos
                and (t.ultima_pontuacao_em, t.usuario_id) < (p_ultima, p_usuario)),
      (select min(t.pontos) from gamificacao.totais_periodo t
       where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.pontos > p_pontos)
    into v_empatado_acima, v_acima;
  end if;
  if v_empatado_acima then
    return 0;
  end if;
  return coalesce(v_acima - p_pontos, 0);
end;
$$;
comment on function gamificacao.distancia_proximo(text, text, date, text, integer, timestamptz, uuid) is
  'Points to the entry right above on a board (0 for the leader or a time-broken tie).';

-- Bucket moves ---------------------------------------------------------------------------------

/** Bucket count changes, one element per (period, board, scale, bucket) change. */
create type gamificacao.movimentos as (
  periodos text[],
  inicios date[],
  niveis smallint[],
  escalas smallint[],
  faixas integer[],
  deltas integer[],
  cidades text[]
);
comment on type gamificacao.movimentos is
  'Bucket changes collected before being applied in one statement per table: rank buckets (escala 0, 1 and 2) of the national and level boards, tie keys (escala 3), and a city board''s rank buckets where cidades is set.';

/**
 * Applies bucket changes in one statement per table: summed per bucket, rows in key order (the
 * lock order every scoring shares: rank buckets of the national and level boards, then tie keys,
 * then city buckets), zero sums skipped. Changes of escala 3 are tie keys and go to
 * gamificacao.faixas_pontos; changes with a city go to gamificacao.faixas_cidades.
 */
create function gamificacao.aplicar_movimentos(p_movimentos gamificacao.movimentos) returns void
language plpgsql set search_path = '' as $$
begin
  insert into gamificacao.faixas_ranking as f (periodo, periodo_inicio, nivel, escala, faixa, quantidade)
  select m.periodo, m.periodo_inicio, m.nivel, m.escala, m.faixa, sum(m.delta)
  from unnest(p_movimentos.periodos, p_movimentos.inicios, p_movimentos.niveis, p_movimentos.escalas, p_movimentos.faixas,
    p_movimentos.deltas, p_movimentos.cidades) as m (periodo, periodo_inicio, nivel, escala, faixa, delta, cidade)
  where m.escala < 3 and m.cidade is null
  group by 1, 2, 3, 4, 5
  having sum(m.delta) <> 0
  order by 1, 2, 3, 4, 5
  on conflict (periodo, periodo_inicio, nivel, escala, faixa) do update set quantidade = f.quantidade + excluded.quantidade;

  insert into gamificacao.faixas_pontos as f (periodo, periodo_inicio, chave, quantidade)
  select m.periodo, m.periodo_inicio, m.faixa, sum(m.delta)
  from unnest(p_movimentos.periodos, p_movimentos.inicios, p_movimentos.escalas, p_movimentos.faixas, p_movimentos.deltas)
    as m (periodo, periodo_inicio, escala, faixa, delta)
  where m.escala = 3
  group by 1, 2, 3
  having sum(m.delta) <> 0
  order by 1, 2, 3
  on conflict (periodo, periodo_inicio, chave) do update set quantidade = f.quantidade + excluded.quantidade;

  insert into gamificacao.faixas_cidades as f (periodo, periodo_inicio, cidade_id, escala, faixa, quantidade)
  select m.periodo, m.periodo_inicio, m.cidade, m.escala, m.faixa, sum(m.delta)
  from unnest(p_movimentos.periodos, p_movimentos.inicios, p_movimentos.escalas, p_movimentos.faixas, p_movimentos.deltas, p_movimentos.cidades)
    as m (periodo, periodo_inicio, escala, faixa, delta, cidade)
  where m.cidade is not null
  group by 1, 2, 3, 4, 5
  having sum(m.delta) <> 0
  order by 1, 2, 3, 4, 5
  on conflict (periodo, periodo_inicio, cidade_id, escala, faixa) do update set quantidade = f.quantidade + excluded.quantidade;
end;
$$;
comment on function gamificacao.aplicar_movimentos(gamificacao.movimentos) is
  'Applies collected bucket changes to gamificacao.faixas_ranking, tie-key changes (escala 3) to gamificacao.faixas_pontos and city changes to gamificacao.faixas_cidades.';

-- Tie keys: national positions whose cost stays flat as the board grows ------------------------
-- The board of all levels also counts its technicians per tie key (gamificacao.faixas_pontos):
-- exact points × 64 + the time slot of the last scoring. The part of a national position inside the
-- technician's fine bucket is then two short key-range sums (higher points in the fine bucket;
-- equal points in earlier slots) plus an index count of the entries tied on points within the
-- technician's own slot. Scoring moves the technician between two tie keys per period, with the
-- same ordered, batched upsert as the other buckets, so no new lock order. Keys are integers (the
-- moves travel in gamificacao.movimentos with the other buckets), so a period's points must stay
-- below 2^31 / 64 = 33,554,432; the highest level starts at 40,000. Measurements and the slot
-- widths' reasons: docs/gamification.md, "Tie keys".

create table gamificacao.faixas_pontos (
  periodo text not null,
  periodo_inicio date not null,
  chave integer not null,
  -- No check (quantidade >= 0), as in faixas_ranking: the upsert's proposed row may carry a -1.
  quantidade integer not null,
  primary key (periodo, periodo_inicio, chave)
)
-- Updated by every scoring: room on each page keeps the updates HOT (see faixas_ranking).
with (fillfactor = 50);
comment on table gamificacao.faixas_pontos is
  'Technicians per tie key (exact points and time slot of the last scoring) on each period''s board of all levels: the part of a national position inside its fine rank bucket.';
comment on column gamificacao.faixas_pontos.chave is 'pontos × 64 + gamificacao.fatia_empate() of the last scoring (gamificacao.chave_empate).';
comment on column gamificacao.faixas_pontos.quantidade is 'Technicians on the board with that key.';
alter table gamificacao.faixas_pontos enable row level security;
revoke all on gamificacao.faixas_pontos from anon, authenticated, service_role;
/**
 * The time slot of a last scoring at `p_momento` within period (`p_periodo`, `p_inicio`): 160
 * minutes of a week, 12 hours of a month, 6 days of a year (gamificacao.largura_fatia_empate), the
 * year since 2019 for all time, clamped to 0–63. Later moments never get a smaller slot, so on
 * equal points the slots keep the board's order (the earlier last scoring ranks higher).
 */
create function gamificacao.fatia_empate(p_periodo text, p_inicio date, p_momento timestamptz) returns integer
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  return least(63, greatest(0, case p_periodo
    when 'geral' then extract(year from gamificacao.hora_local(p_momento))::integer - 2019
    else floor(extract(epoch from p_momento - gamificacao.meia_noite_local(p_inicio)) / gamificacao.largura_fatia_empate(p_periodo))::integer
  end));
end;
$$;
comment on function gamificacao.fatia_empate(text, date, timestamptz) is
  'Time slot (0–63) of a last scoring within its period: 160 minutes of a week, 12 hours of a month, 6 days of a year, the year of all time.';
/** The first moment of slot `p_fatia` (see gamificacao.fatia_empate): -infinity for slot 0, which also holds anything earlier. */
create function gamificacao.inicio_fatia_empate(p_periodo text, p_inicio date, p_fatia integer) returns timestamptz
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  if p_fatia <= 0 then
    return '-infinity'::timestamptz;
  end if;
  return case p_periodo
    when 'geral' then gamificacao.meia_noite_local(make_date(2019 + p_fatia, 1, 1))
    else gamificacao.meia_noite_local(p_inicio) + make_interval(secs => p_fatia * gamificacao.largura_fatia_empate(p_periodo))
  end;
end;
$$;
comment on function gamificacao.inicio_fatia_empate(text, date, integer) is 'First moment of a tie slot (-infinity for slot 0).';
/** The tie key of `p_pontos` points last scored at `p_ultima` in a period; null when either is null. */
create function gamificacao.chave_empate(p_periodo text, p_inicio date, p_pontos integer, p_ultima timestamptz) returns integer
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  return p_pontos * 64 + gamificacao.fatia_empate(p_periodo, p_inicio, p_ultima);
end;
$$;
comment on function gamificacao.chave_empate(text, date, integer, timestamptz) is 'Key of gamificacao.faixas_pontos: points × 64 + time slot.';
/** Length in seconds of a tie slot of a week, month or year (all time slots by calendar year instead). */
create function gamificacao.largura_fatia_empate(p_periodo text) returns integer
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  -- PL/pgSQL, as the other helpers of the scoring path: a SQL function with a pinned search_path
  -- is not inlined, and is parsed and planned again in every statement that calls it.
  return case p_periodo when 'anual' then 6 * 86400 when 'mensal' then 43200 else 9600 end;
end;
$$;
comment on function gamificacao.largura_fatia_empate(text) is
  'Seconds per tie slot: 160 minutes in a week (63 slots), 12 hours in a month (62), 6 days in a year (61).';
-- City buckets: local positions whose cost stays flat as cities grow ----------------------------
-- City boards count their technicians per rank bucket (gamificacao.faixas_cidades, the same fine
-- and coarse buckets as the national boards), so a local position is two short bucket sums plus an
-- index count of the city's entries inside the technician's own fine bucket. Scoring moves the
-- technician between their city's buckets with the same ordered, batched upsert as the other
-- buckets, applied after them, so every scoring locks bucket rows in one order; a move of home city
-- moves the technician's rows from the old city's buckets to the new one's. The moves carry their
-- city in gamificacao.movimentos.cidades (null for the national and level boards).
--
-- The board of all levels also counts its technicians per exact points (gamificacao.faixas_ranking,
-- escala 2), so its position sums at most 9 exact-points rows, then the slots of the technician's
-- own points; tie-key moves are escala 3. Scoring writes the technician's row once: badges are
-- evaluated before the points update, which adds their number to badges_count
-- (docs/gamification.md, "City buckets").

create table gamificacao.faixas_cidades (
  periodo text not null,
  periodo_inicio date not null,
  cidade_id text not null,
  escala smallint not null check (escala in (0, 1)),
  faixa integer not null,
  -- No check (quantidade >= 0), as in faixas_ranking: the upsert's proposed row may carry a -1.
  quantidade integer not null,
  primary key (periodo, periodo_inicio, cidade_id, escala, faixa)
)
-- Updated by every scoring: room on each page keeps the updates HOT (see faixas_ranking).
with (fillfactor = 50);
comment on table gamificacao.faixas_cidades is
  'Technicians per points bucket of each period''s city boards, at the two scales of gamificacao.faixas_ranking: the part of a local position outside its fine bucket.';
comment on column gamificacao.faixas_cidades.cidade_id is 'The city board (gamificacao.totais_periodo.cidade_id).';
comment on column gamificacao.faixas_cidades.escala is '0: fine buckets (periodos.largura_faixa points); 1: coarse buckets of 32 fine ones.';
comment on column gamificacao.faixas_cidades.faixa is 'pontos / largura_faixa (fine) or that / 32 (coarse), integer division.';
comment on column gamificacao.faixas_cidades.quantidade is 'Technicians of the city whose period points fall in the bucket.';
alter table gamificacao.faixas_cidades enable row level security;
revoke all on gamificacao.faixas_cidades from anon, authenticated, service_role;
/**
 * Rebuilds the rank buckets, tie keys and city buckets from the totals, for one period kind or
 * (null) all. Needed after a bulk load that bypassed scoring (the bench) or after changing
 * periodos.largura_faixa.
 */
create function gamificacao.reconstruir_faixas(p_periodo text default null) returns void
language sql set search_path = '' as $$
  delete from gamificacao.faixas_ranking f where p_periodo is null or f.periodo = p_periodo;
  insert into gamificacao.faixas_ranking (periodo, periodo_inicio, nivel, escala, faixa, quantidade)
  select t.periodo, t.periodo_inicio, n.nivel, e.escala,
    t.pontos / p.largura_faixa / case e.escala when 1 then gamificacao.faixas_por_grupo() else 1 end, count(*)
  from gamificacao.totais_periodo t
  join gamificacao.periodos p on p.periodo = t.periodo
  cross join lateral (values (0::smallint), (t.nivel_ordem)) n (nivel)
  cross join (values (0::smallint), (1::smallint)) e (escala)
  where p_periodo is null or t.periodo = p_periodo
  group by 1, 2, 3, 4, 5
  union all
  select t.periodo, t.periodo_inicio, 0, 2, t.pontos, count(*)
  from gamificacao.totais_periodo t
  where p_periodo is null or t.periodo = p_periodo
  group by 1, 2, 5;
  delete from gamificacao.faixas_pontos f where p_periodo is null or f.periodo = p_periodo;
  insert into gamificacao.faixas_pontos (periodo, periodo_inicio, chave, quantidade)
  select t.periodo, t.periodo_inicio, gamificacao.chave_empate(t.periodo, t.periodo_inicio, t.pontos, t.ultima_pontuacao_em), count(*)
  from gamificacao.totais_periodo t
  where p_periodo is null or t.periodo = p_periodo
  group by 1, 2, 3;
  delete from gamificacao.faixas_cidades f where p_periodo is null or f.periodo = p_periodo;
  insert into gamificacao.faixas_cidades (periodo, periodo_inicio, cidade_id, escala, faixa, quantidade)
  select t.periodo, t.periodo_inicio, t.cidade_id, e.escala,
    t.pontos / p.largura_faixa / case e.escala when 1 then gamificacao.faixas_por_grupo() else 1 end, count(*)
  from gamificacao.totais_periodo t
  join gamificacao.periodos p on p.periodo = t.periodo
  cross join (values (0::smallint), (1::smallint)) e (escala)
  where p_periodo is null or t.periodo = p_periodo
  group by 1, 2, 3, 4, 5;
$$;
comment on function gamificacao.reconstruir_faixas(text) is
  'Recounts gamificacao.faixas_ranking, gamificacao.faixas_pontos and gamificacao.faixas_cidades from gamificacao.totais_periodo.';
/**
 * Moves a technician's totals rows to their new home city, so local boards follow the move, and
 * each row from the old city's rank buckets to the new one's.
 */
create function gamificacao.seguir_cidade_do_tecnico() returns trigger
language plpgsql set search_path = '' as $$
declare
  v_movimentos gamificacao.movimentos;
begin
  with movidos as (
    update gamificacao.totais_periodo t set cidade_id = new.cidade_id
    from gamificacao.periodos p
    where t.usuario_id = new.id and p.periodo = t.periodo
    returning t.periodo, t.periodo_inicio, t.pontos, p.largura_faixa
  ), mudancas as (
    select m.periodo, m.periodo_inicio, q.cidade, e.escala, e.faixa, q.delta
    from movidos m
    cross join lateral (values (old.cidade_id, -1), (new.cidade_id, 1)) q (cidade, delta)
    cross join lateral (values
      (0::smallint, m.pontos / m.largura_faixa),
      (1::smallint, m.pontos / m.largura_faixa / gamificacao.faixas_por_grupo())
    ) e (escala, faixa)
  )
  select coalesce(array_agg(m.periodo), '{}'), coalesce(array_agg(m.periodo_inicio), '{}'), coalesce(array_agg(null::smallint), '{}'),
    coalesce(array_agg(m.escala), '{}'), coalesce(array_agg(m.faixa), '{}'), coalesce(array_agg(m.delta), '{}'),
    coalesce(array_agg(m.cidade), '{}')
  into v_movimentos
  from mudancas m;
  perform gamificacao.aplicar_movimentos(v_movimentos);
  return new;
end;
$$;
create trigger tecnicos_seguir_cidade after update of cidade_id on public.tecnicos
  for each row when (old.cidade_id is distinct from new.cidade_id) execute function gamificacao.seguir_cidade_do_tecnico();
comment on function gamificacao.seguir_cidade_do_tecnico() is
  'Trigger: keeps totais_periodo.cidade_id equal to the technician''s home city and moves the rows between the cities'' rank buckets.';
-- Deleting a technician (their account) deletes their period totals by cascade; a statement
-- trigger on the totals removes every deleted row from the counts it was in (rank buckets,
-- exact-points counts, tie keys, city buckets), with the same ordered upsert as scoring.

/**
 * Trigger (after delete on gamificacao.totais_periodo, per statement): takes the deleted rows off
 * their boards' counts: the board of all levels (rank buckets, exact points, tie key), their
 * level's board and their city's board.
 */
create function gamificacao.retirar_dos_quadros() returns trigger
language plpgsql set search_path = '' as $$
declare
  v_movimentos gamificacao.movimentos;
begin
  with mudancas as (
    select a.periodo, a.periodo_inicio, q.nivel, q.cidade, e.escala, e.faixa, -count(*)::integer as delta
    from apagados a
    join gamificacao.periodos p on p.periodo = a.periodo
    cross join lateral (values (0::smallint, null::text), (a.nivel_ordem, null), (null, a.cidade_id)) q (nivel, cidade)
    cross join lateral (values
      (0::smallint, a.pontos / p.largura_faixa),
      (1::smallint, a.pontos / p.largura_faixa / gamificacao.faixas_por_grupo()),
      (2::smallint, case when q.nivel = 0 then a.pontos end),
      (3::smallint, case when q.nivel = 0 then gamificacao.chave_empate(a.periodo, a.periodo_inicio, a.pontos, a.ultima_pontuacao_em) end)
    ) e (escala, faixa)
    where e.escala < 2 or q.nivel = 0
    group by 1, 2, 3, 4, 5, 6
  )
  select coalesce(array_agg(m.periodo), '{}'), coalesce(array_agg(m.periodo_inicio), '{}'), coalesce(array_agg(m.nivel), '{}'),
    coalesce(array_agg(m.escala), '{}'), coalesce(array_agg(m.faixa), '{}'), coalesce(array_agg(m.delta), '{}'),
    coalesce(array_agg(m.cidade), '{}')
  into v_movimentos
  from mudancas m;
  perform gamificacao.aplicar_movimentos(v_movimentos);
  return null;
end;
$$;
comment on function gamificacao.retirar_dos_quadros() is
  'Trigger: removes deleted period totals from the rank buckets, exact-points counts, tie keys and city buckets.';
create trigger totais_periodo_retirar_dos_quadros after delete on gamificacao.totais_periodo
  referencing old table as apagados for each statement execute function gamificacao.retirar_dos_quadros();
