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
 * 1-based position on a board of the entry (p_pontos, p_ultima, p_usuario); the entry itself need
 * not be on the board yet. One statement per scope, so the bucket sums and the counts come from
 * the same snapshot.
 */
create function gamificacao.posicao(
  p_quadro text, p_periodo text, p_inicio date, p_chave text,
  p_pontos integer, p_ultima timestamptz, p_usuario uuid
) returns integer
language plpgsql stable set search_path = '' as $$
declare
  v_posicao bigint;
  v_largura integer;
  v_faixa integer;
  v_grupo integer;
  v_nivel smallint;
begin
  if p_quadro = 'local' then
    select 1
      + (select count(*) from gamificacao.totais_periodo t
         where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.cidade_id = p_chave and t.pontos > p_pontos)
      + (select count(*) from gamificacao.totais_periodo t
         where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.cidade_id = p_chave and t.pontos = p_pontos
           and (t.ultima_pontuacao_em, t.usuario_id) < (p_ultima, p_usuario))
    into v_posicao;
    return v_posicao;
  end if;

  select p.largura_faixa into strict v_largura from gamificacao.periodos p where p.periodo = p_periodo;
  v_faixa := p_pontos / v_largura;
  v_grupo := v_faixa / gamificacao.faixas_por_grupo();
  v_nivel := case when p_quadro = 'nivel' then p_chave::smallint else 0 end;
  select 1
    + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_ranking f
       where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.nivel = v_nivel and f.escala = 1 and f.faixa > v_grupo)
    + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_ranking f
       where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.nivel = v_nivel and f.escala = 0
         and f.faixa > v_faixa and f.faixa < (v_grupo + 1) * gamificacao.faixas_por_grupo())
  into v_posicao;

  if v_nivel = 0 then
    select v_posicao
      + (select count(*) from gamificacao.totais_periodo t
         where t.periodo = p_periodo and t.periodo_inicio = p_inicio
           and t.pontos > p_pontos and t.pontos < (v_faixa + 1) * v_largura)
      + (select count(*) from gamificacao.totais_periodo t
         where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.pontos = p_pontos
           and (t.ultima_pontuacao_em, t.usuario_id) < (p_ultima, p_usuario))
    into v_posicao;
  else
    select v_posicao
      + (select count(*) from gamificacao.totais_periodo t
         where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.nivel_ordem = v_nivel
           and t.pontos > p_pontos and t.pontos < (v_faixa + 1) * v_largura)
      + (select count(*) from gamificacao.totais_periodo t
         where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.nivel_ordem = v_nivel and t.pontos = p_pontos
           and (t.ultima_pontuacao_em, t.usuario_id) < (p_ultima, p_usuario))
    into v_posicao;
  end if;
  return v_posicao;
end;
$$;
comment on function gamificacao.posicao(text, text, date, text, integer, timestamptz, uuid) is
  'Position on a points board (nacional, nivel or local) from the rank buckets and the board indexes.';

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
  deltas integer[]
);
comment on type gamificacao.movimentos is 'Changes to gamificacao.faixas_ranking, collected before being applied in one statement.';

/** No bucket changes. */
create function gamificacao.sem_movimentos() returns gamificacao.movimentos
language sql immutable set search_path = '' as $$
  select row('{}'::text[], '{}'::date[], '{}'::smallint[], '{}'::smallint[], '{}'::integer[], '{}'::integer[])::gamificacao.movimentos
$$;
comment on function gamificacao.sem_movimentos() is 'An empty gamificacao.movimentos.';

/** Both lists of changes, one after the other. */
create function gamificacao.juntar_movimentos(p_a gamificacao.movimentos, p_b gamificacao.movimentos) returns gamificacao.movimentos
language sql immutable set search_path = '' as $$
  select row(p_a.periodos || p_b.periodos, p_a.inicios || p_b.inicios, p_a.niveis || p_b.niveis,
    p_a.escalas || p_b.escalas, p_a.faixas || p_b.faixas, p_a.deltas || p_b.deltas)::gamificacao.movimentos
$$;
comment on function gamificacao.juntar_movimentos(gamificacao.movimentos, gamificacao.movimentos) is 'Concatenates two lists of bucket changes.';

/**
 * The changes that move one technician on the board (`p_periodo`, `p_inicio`, `p_nivel`) from
 * `p_antes` points to `p_depois` points, at both scales, with fine buckets of `p_largura` points;
 * a null side means not on that board.
 */
create function gamificacao.mover(p_periodo text, p_inicio date, p_nivel smallint, p_largura integer, p_antes integer, p_depois integer)
returns gamificacao.movimentos
language plpgsql immutable set search_path = '' as $$
declare
  v_grupo integer := gamificacao.faixas_por_grupo();
  v_movimentos gamificacao.movimentos := gamificacao.sem_movimentos();
begin
  if p_antes is not null and p_depois is not null and p_antes / p_largura = p_depois / p_largura then
    return v_movimentos;
  end if;
  if p_antes is not null then
    v_movimentos.periodos := v_movimentos.periodos || array[p_periodo, p_periodo];
    v_movimentos.inicios := v_movimentos.inicios || array[p_inicio, p_inicio];
    v_movimentos.niveis := v_movimentos.niveis || array[p_nivel, p_nivel];
    v_movimentos.escalas := v_movimentos.escalas || array[0::smallint, 1::smallint];
    v_movimentos.faixas := v_movimentos.faixas || array[p_antes / p_largura, p_antes / p_largura / v_grupo];
    v_movimentos.deltas := v_movimentos.deltas || array[-1, -1];
  end if;
  if p_depois is not null then
    v_movimentos.periodos := v_movimentos.periodos || array[p_periodo, p_periodo];
    v_movimentos.inicios := v_movimentos.inicios || array[p_inicio, p_inicio];
    v_movimentos.niveis := v_movimentos.niveis || array[p_nivel, p_nivel];
    v_movimentos.escalas := v_movimentos.escalas || array[0::smallint, 1::smallint];
    v_movimentos.faixas := v_movimentos.faixas || array[p_depois / p_largura, p_depois / p_largura / v_grupo];
    v_movimentos.deltas := v_movimentos.deltas || array[1, 1];
  end if;
  return v_movimentos;
end;
$$;
comment on function gamificacao.mover(text, date, smallint, integer, integer, integer) is
  'Bucket changes for one technician moving on one national board (fine and coarse scales).';

/**
 * Applies bucket changes in one statement: summed per bucket, rows in key order (the lock order
 * every scoring shares), zero sums skipped.
 */
create function gamificacao.aplicar_movimentos(p_movimentos gamificacao.movimentos) returns void
language plpgsql set search_path = '' as $$
begin
  insert into gamificacao.faixas_ranking as f (periodo, periodo_inicio, nivel, escala, faixa, quantidade)
  select m.periodo, m.periodo_inicio, m.nivel, m.escala, m.faixa, sum(m.delta)
  from unnest(p_movimentos.periodos, p_movimentos.inicios, p_movimentos.niveis, p_movimentos.escalas, p_movimentos.faixas, p_movimentos.deltas)
    as m (periodo, periodo_inicio, nivel, escala, faixa, delta)
  group by 1, 2, 3, 4, 5
  having sum(m.delta) <> 0
  order by 1, 2, 3, 4, 5
  on conflict (periodo, periodo_inicio, nivel, escala, faixa) do update set quantidade = f.quantidade + excluded.quantidade;
end;
$$;
comment on function gamificacao.aplicar_movimentos(gamificacao.movimentos) is 'Applies collected bucket changes to gamificacao.faixas_ranking.';

/**
 * Rebuilds the rank buckets from the totals, for one period kind or (null) all. Needed after a bulk
 * load that bypassed scoring (the bench) or after changing periodos.largura_faixa.
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
  group by 1, 2, 3, 4, 5;
$$;
comment on function gamificacao.reconstruir_faixas(text) is 'Recounts gamificacao.faixas_ranking from gamificacao.totais_periodo.';
