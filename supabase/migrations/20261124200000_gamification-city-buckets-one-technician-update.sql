-- Gamification: local (city) positions counted from per-city rank buckets, so their cost stays
-- flat as cities grow.
--
-- A local position was 1 + an index count of everyone in the technician's city ahead of them on
-- the period's board: half the city on average. Every scoring pays it for its result's local
-- position, and it grows with the board: with 1,000,000 technicians in 500 cities a month's city
-- board holds about 1,500 entries, ten times the 100,000-technician board's, and the count walked
-- ten times as many index entries.
--
-- City boards now count their technicians per rank bucket too (gamificacao.faixas_cidades, the
-- same fine and coarse buckets as the national boards), so a local position is two short bucket
-- sums plus an index count of the city's entries inside the technician's own fine bucket (10
-- points wide for a week or a month, 25 for a year or all time). Scoring moves the technician
-- between their city's buckets with the same ordered, batched upsert as the other buckets, applied
-- after them, so every scoring still locks bucket rows in one order; a move of home city moves the
-- technician's rows from the old city's buckets to the new one's.
--
-- The moves carry their city in a new attribute of gamificacao.movimentos (`cidades`): null for the
-- national and level boards, the city for a city board's move.
--
-- The board of all levels also counts its technicians per exact points (gamificacao.faixas_ranking,
-- escala 2). Its position summed the tie keys of every higher point value inside the fine bucket:
-- up to 9 point values × 64 slots, and a million technicians fill nearly all of them, so that sum
-- read about ten times as many rows as at 100,000. It now sums at most 9 exact-points rows, then
-- the slots of the technician's own points as before. Tie-key moves become escala 3.
--
-- Scoring also writes the technician's row once instead of twice when it awards badges: the badges
-- are evaluated before the update of the points, which now adds their number to badges_count
-- (gamificacao.avaliar_badges no longer updates the row itself). Every version of the row re-checks
-- its constraints and, when its page is full, needs new index entries; the saving is small (about
-- 0.04 ms an action in a profile at a million technicians, where the bench's first scorings award
-- badges).

create table gamificacao.faixas_cidades (
  periodo text not null,
  periodo_inicio date not null,
  cidade_id text not null,
  escala smallint not null check (escala in (0, 1)),
  faixa integer not null,
  -- No check (quantidade >= 0), as in faixas_ranking: the upsert's proposed row may carry a -1.
  quantidade integer not null,
  primary key (periodo, periodo_inicio, cidade_id, escala, faixa)
);
comment on table gamificacao.faixas_cidades is
  'Technicians per points bucket of each period''s city boards, at the two scales of gamificacao.faixas_ranking: the part of a local position outside its fine bucket.';
comment on column gamificacao.faixas_cidades.cidade_id is 'The city board (gamificacao.totais_periodo.cidade_id).';
comment on column gamificacao.faixas_cidades.escala is '0: fine buckets (periodos.largura_faixa points); 1: coarse buckets of 32 fine ones.';
comment on column gamificacao.faixas_cidades.faixa is 'pontos / largura_faixa (fine) or that / 32 (coarse), integer division.';
comment on column gamificacao.faixas_cidades.quantidade is 'Technicians of the city whose period points fall in the bucket.';
alter table gamificacao.faixas_cidades enable row level security;
revoke all on gamificacao.faixas_cidades from anon, authenticated, service_role;

alter type gamificacao.movimentos add attribute cidades text[];
comment on type gamificacao.movimentos is
  'Bucket changes collected before being applied in one statement per table: rank buckets (escala 0, 1 and 2) of the national and level boards, tie keys (escala 3), and a city board''s rank buckets where cidades is set.';

alter table gamificacao.faixas_ranking drop constraint faixas_ranking_escala_check;
alter table gamificacao.faixas_ranking add constraint faixas_ranking_escala_check check (escala in (0, 1, 2));
comment on table gamificacao.faixas_ranking is
  'Technicians per points bucket of each national board, at three scales: position = 1 + technicians in higher coarse buckets + in higher fine buckets of the same coarse one + those ahead inside the fine bucket (on the board of all levels: higher exact points, then the tie keys).';
comment on column gamificacao.faixas_ranking.escala is
  '0: fine buckets (periodos.largura_faixa points); 1: coarse buckets of 32 fine ones; 2: exact points (board of all levels only).';
comment on column gamificacao.faixas_ranking.faixa is 'pontos / largura_faixa (fine), that / 32 (coarse), or pontos (exact points), integer division.';

/**
 * 1-based position on a board of the entry (p_pontos, p_ultima, p_usuario); the entry itself need
 * not be on the board yet. One statement per part, so the bucket sums and the counts come from the
 * same snapshot: the rank buckets above (gamificacao.faixas_cidades for a city board,
 * gamificacao.faixas_ranking otherwise), then the entries ahead inside the fine bucket, which the
 * board of all levels counts from its exact-points rows and its tie keys.
 */
create or replace function gamificacao.posicao(
  p_quadro text, p_periodo text, p_inicio date, p_chave text,
  p_pontos integer, p_ultima timestamptz, p_usuario uuid
) returns integer
-- Generic plans: every statement is an index range on its board's key, whatever the parameters,
-- and the planner's default of re-planning when a custom plan looks cheaper cost more than the
-- statements (at a million technicians 0.25 ms a position against 0.15 ms).
language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  v_posicao bigint;
  v_largura integer;
  v_faixa integer;
  v_grupo integer;
  v_nivel smallint;
  v_fatia integer;
begin
  select p.largura_faixa into strict v_largura from gamificacao.periodos p where p.periodo = p_periodo;
  v_faixa := p_pontos / v_largura;
  v_grupo := v_faixa / gamificacao.faixas_por_grupo();

  if p_quadro = 'local' then
    select 1
      + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_cidades f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.cidade_id = p_chave and f.escala = 1 and f.faixa > v_grupo)
      + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_cidades f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.cidade_id = p_chave and f.escala = 0
           and f.faixa > v_faixa and f.faixa < (v_grupo + 1) * gamificacao.faixas_por_grupo())
      + (select count(*) from gamificacao.totais_periodo t
         where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.cidade_id = p_chave
           and t.pontos > p_pontos and t.pontos < (v_faixa + 1) * v_largura)
      + (select count(*) from gamificacao.totais_periodo t
         where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.cidade_id = p_chave and t.pontos = p_pontos
           and (t.ultima_pontuacao_em, t.usuario_id) < (p_ultima, p_usuario))
    into v_posicao;
    return v_posicao;
  end if;

  v_nivel := case when p_quadro = 'nivel' then p_chave::smallint else 0 end;
  select 1
    + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_ranking f
       where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.nivel = v_nivel and f.escala = 1 and f.faixa > v_grupo)
    + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_ranking f
       where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.nivel = v_nivel and f.escala = 0
         and f.faixa > v_faixa and f.faixa < (v_grupo + 1) * gamificacao.faixas_por_grupo())
  into v_posicao;

  if v_nivel = 0 then
    v_fatia := gamificacao.fatia_empate(p_periodo, p_inicio, p_ultima);
    select v_posicao
      + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_ranking f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.nivel = 0 and f.escala = 2
           and f.faixa > p_pontos and f.faixa < (v_faixa + 1) * v_largura)
      + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_pontos f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio
           and f.chave >= p_pontos * 64 and f.chave < p_pontos * 64 + v_fatia)
      + (select count(*) from gamificacao.totais_periodo t
         where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.pontos = p_pontos
           and t.ultima_pontuacao_em >= gamificacao.inicio_fatia_empate(p_periodo, p_inicio, v_fatia)
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
  'Position on a points board (nacional, nivel or local) from the rank buckets, the tie keys and the board indexes.';

/**
 * Applies bucket changes in one statement per table: summed per bucket, rows in key order (the
 * lock order every scoring shares: rank buckets of the national and level boards, then tie keys,
 * then city buckets), zero sums skipped. Changes of escala 3 are tie keys and go to
 * gamificacao.faixas_pontos; changes with a city go to gamificacao.faixas_cidades.
 */
create or replace function gamificacao.aplicar_movimentos(p_movimentos gamificacao.movimentos) returns void
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

/**
 * Rebuilds the rank buckets, tie keys and city buckets from the totals, for one period kind or
 * (null) all. Needed after a bulk load that bypassed scoring (the bench) or after changing
 * periodos.largura_faixa.
 */
create or replace function gamificacao.reconstruir_faixas(p_periodo text default null) returns void
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
create or replace function gamificacao.seguir_cidade_do_tecnico() returns trigger
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
comment on function gamificacao.seguir_cidade_do_tecnico() is
  'Trigger: keeps totais_periodo.cidade_id equal to the technician''s home city and moves the rows between the cities'' rank buckets.';

-- Scoring: the same as 20261124050000_gamification-position-ties.sql, plus the city-bucket moves and
-- one update of the technician, after the badges --

create or replace function gamificacao.aplicar_acao(
  p_usuario_id uuid, p_acao text, p_chamado_id uuid, p_metadata jsonb, p_momento timestamptz, p_registrado_por uuid
) returns gamificacao.acao_aplicada
language plpgsql set search_path = '' as $$
declare
  v_lido record;
  v_tecnico public.tecnicos;
  v_acao public.acoes;
  v_chamado public.chamados;
  v_metricas public.cidades_metricas;
  v_niveis record;
  v_nivel_antes public.niveis;
  v_nivel_depois public.niveis;
  v_subiu boolean;
  v_distancia integer;
  v_pontos integer;
  v_historico public.historico_pontos;
  v_badges jsonb;
  v_contagem integer;
  v_movimentos gamificacao.movimentos;
begin
  -- Same-technician scorings queue here, so totals, level and badges move one action at a time.
  -- NO KEY UPDATE, the lock the update below takes anyway: it does not wait for the key-share
  -- locks that the jobs' inserts into tables referencing technicians (category boards, snapshots)
  -- hold for their whole transaction. The action, the call and the city metrics come along: no
  -- scoring writes them, and their join conditions do not read the technician's row, so a
  -- recheck after waiting for the lock keeps them.
  select t as tecnico, a as acao, c as chamado, m as metricas into v_lido
  from public.tecnicos t
  left join public.acoes a on a.codigo = p_acao and a.ativo
  left join public.chamados c on c.id = p_chamado_id
  left join public.cidades_metricas m on m.cidade_id = c.cidade_id
  where t.id = p_usuario_id
  for no key update of t;
  if not found then
    perform gamificacao.falhar(404, 'TECNICO_NAO_ENCONTRADO', 'Não há técnico com este usuario_id.', jsonb_build_object('usuario_id', p_usuario_id));
  end if;
  v_tecnico := v_lido.tecnico;
  if not v_tecnico.ativo then
    perform gamificacao.falhar(403, 'TECNICO_INATIVO', 'Técnicos inativos não pontuam.');
  end if;
  if v_lido.acao is null then
    perform gamificacao.falhar(422, 'ACAO_INVALIDA', format('Ação desconhecida ou inativa: %s.', p_acao),
      jsonb_build_object('acoes_validas', (select jsonb_agg(a.codigo order by a.codigo) from public.acoes a where a.ativo)));
  end if;
  v_acao := v_lido.acao;
  if v_lido.chamado is null then
    perform gamificacao.falhar(404, 'CHAMADO_NAO_ENCONTRADO', 'Chamado não encontrado.', jsonb_build_object('chamado_id', p_chamado_id));
  end if;
  v_chamado := v_lido.chamado;
  if v_chamado.tecnico_id <> p_usuario_id then
    perform gamificacao.falhar(403, 'CHAMADO_DE_OUTRO_TECNICO', 'O chamado está atribuído a outro técnico.');
  end if;

  -- A replay answers 409 whatever else changed since (the check-in may be too old by now). A
  -- statement of its own, after the lock: a concurrent duplicate that held the lock has committed
  -- its history row by now, and only a snapshot taken after the wait sees it.
  if exists (select 1 from public.historico_pontos h where h.usuario_id = p_usuario_id and h.chamado_id = p_chamado_id and h.acao = p_acao) then
    perform gamificacao.falhar(409, 'ACAO_DUPLICADA', 'Esta ação já foi pontuada para este chamado.',
      jsonb_build_object('usuario_id', p_usuario_id, 'chamado_id', p_chamado_id, 'acao', p_acao));
  end if;

  if not v_chamado.status = any (v_acao.status_exigidos) then
    perform gamificacao.falhar(422, 'CHAMADO_ESTADO_INVALIDO',
      format('A ação %s exige o chamado em %s; ele está %s.', p_acao, array_to_string(v_acao.status_exigidos, ' ou '), v_chamado.status),
      jsonb_build_object('status', v_chamado.status, 'status_exigidos', to_jsonb(v_acao.status_exigidos)));
  end if;
  if v_acao.estrelas_exigidas is not null and v_chamado.estrelas is distinct from v_acao.estrelas_exigidas then
    perform gamificacao.falhar(422, 'CHAMADO_ESTADO_INVALIDO',
      format('A ação %s exige avaliação de %s estrelas.', p_acao, v_acao.estrelas_exigidas),
      jsonb_build_object('estrelas', v_chamado.estrelas));
  end if;
  if v_acao.exige_urgente and not v_chamado.urgente then
    perform gamificacao.falhar(422, 'CHAMADO_ESTADO_INVALIDO', format('A ação %s exige um chamado urgente.', p_acao));
  end if;
  v_distancia := gamificacao.validar_leitura(v_acao, v_chamado, p_metadata, p_momento);

  v_metricas := v_lido.metricas;
  if v_lido.metricas is null then
    -- Read again after the lock first: a concurrent first scoring in the city may just have computed them.
    select * into v_metricas from public.cidades_metricas where cidade_id = v_chamado.cidade_id;
    if not found then
      perform gamificacao.recalcular_metricas_cidades(v_chamado.cidade_id, p_momento);
      select * into strict v_metricas from public.cidades_metricas where cidade_id = v_chamado.cidade_id;
    end if;
  end if;

  -- Exact decimals, one rounding (half up) at the end, per history row, with the multiplier of the
  -- level held before the action. Levels come from the lifetime total and are never lost.
  select a as antes, d as depois, p.pontos into strict v_niveis
  from public.niveis a
  cross join lateral (
    select round(v_acao.pontos_base * v_metricas.multiplicador_tier * v_metricas.multiplicador_densidade * a.multiplicador)::integer as pontos
  ) p
  join public.niveis d on d.ordem = greatest(a.ordem,
    (select max(m.ordem) from public.niveis m where m.pontos_minimos <= v_tecnico.pontos_total + p.pontos))
  where a.slug = v_tecnico.nivel;
  v_nivel_antes := v_niveis.antes;
  v_nivel_depois := v_niveis.depois;
  v_pontos := v_niveis.pontos;
  v_subiu := v_nivel_depois.ordem <> v_nivel_antes.ordem;

  insert into public.historico_pontos (
    usuario_id, chamado_id, acao, cidade_id, pontos_base, multiplicador_tier, multiplicador_densidade,
    multiplicador_nivel, pontos_final, tier, tecnicos_ativos, nivel_antes, distancia_m, metadata, registrado_por, data_acao)
  values (
    p_usuario_id, p_chamado_id, p_acao, v_chamado.cidade_id, v_acao.pontos_base, v_metricas.multiplicador_tier,
    v_metricas.multiplicador_densidade, v_nivel_antes.multiplicador, v_pontos, v_metricas.tier, v_metricas.tecnicos_ativos,
    v_nivel_antes.slug, v_distancia, p_metadata, p_registrado_por, p_momento)
  on conflict (usuario_id, chamado_id, acao) do nothing
  returning * into v_historico;
  if not found then
    perform gamificacao.falhar(409, 'ACAO_DUPLICADA', 'Esta ação já foi pontuada para este chamado.',
      jsonb_build_object('usuario_id', p_usuario_id, 'chamado_id', p_chamado_id, 'acao', p_acao));
  end if;

  insert into gamificacao.contagem_acoes as c (usuario_id, acao, quantidade) values (p_usuario_id, p_acao, 1)
  on conflict (usuario_id, acao) do update set quantidade = c.quantidade + 1
  returning c.quantidade into v_contagem;

  -- One row per period kind, and the bucket moves it causes: the technician moves up on the board
  -- of all levels (nivel 0) and on their level's board (from the old level's board to the new
  -- one's on a level-up), at both scales; a new row only arrives, and a move inside one fine
  -- bucket changes nothing there. On the board of all levels the technician also always moves
  -- between exact points (escala 2) and between tie keys (escala 3: exact points and the time slot
  -- of the last scoring, whose rows gamificacao.aplicar_movimentos keeps in
  -- gamificacao.faixas_pontos), and on their home city's
  -- board between that city's rank buckets; `anteriores` reads the last scoring before this one
  -- (the CTEs share one snapshot, taken before the upsert). Summed per bucket, zero sums left out.
  with anteriores as (
    select t.periodo, t.ultima_pontuacao_em
    from gamificacao.totais_periodo t
    where t.usuario_id = p_usuario_id and t.periodo_inicio = gamificacao.inicio_periodo(t.periodo, p_momento)
  ), gravados as (
    insert into gamificacao.totais_periodo as t
      (usuario_id, periodo, periodo_inicio, cidade_id, nivel_ordem, pontos, acoes, ultima_pontuacao_em)
    select p_usuario_id, p.periodo, gamificacao.inicio_periodo(p.periodo, p_momento), v_tecnico.cidade_id,
      v_nivel_depois.ordem, v_pontos, 1, p_momento
    from gamificacao.periodos p
    order by p.periodo
    on conflict (usuario_id, periodo, periodo_inicio) do update set
      pontos = t.pontos + excluded.pontos,
      acoes = t.acoes + 1,
      nivel_ordem = excluded.nivel_ordem,
      ultima_pontuacao_em = greatest(t.ultima_pontuacao_em, excluded.ultima_pontuacao_em)
    returning t.periodo, t.periodo_inicio, t.pontos, case when t.acoes = 1 then null else t.pontos - v_pontos end as antes,
      t.ultima_pontuacao_em as ultima
  ), mudancas as (
    select g.periodo, g.periodo_inicio, q.nivel, q.cidade, e.escala, e.faixa, sum(x.delta)::integer as delta
    from gravados g
    join gamificacao.periodos p on p.periodo = g.periodo
    left join anteriores a on a.periodo = g.periodo
    cross join lateral (values
      (0::smallint, null::text, g.antes, g.pontos),
      (v_nivel_antes.ordem, null, g.antes, case when not v_subiu then g.pontos end),
      (v_nivel_depois.ordem, null, null, case when v_subiu then g.pontos end),
      (null, v_tecnico.cidade_id, g.antes, g.pontos)
    ) q (nivel, cidade, antes, depois)
    cross join lateral (values (q.antes, a.ultima_pontuacao_em, -1), (q.depois, g.ultima, 1)) x (pontos, ultima, delta)
    cross join lateral (values
      (0::smallint, x.pontos / p.largura_faixa),
      (1::smallint, x.pontos / p.largura_faixa / gamificacao.faixas_por_grupo()),
      (2::smallint, case when q.nivel = 0 then x.pontos end),
      (3::smallint, case when q.nivel = 0 then gamificacao.chave_empate(g.periodo, g.periodo_inicio, x.pontos, x.ultima) end)
    ) e (escala, faixa)
    where x.pontos is not null
      and case when e.escala >= 2 then q.nivel = 0
        else q.antes is null or q.depois is null or q.antes / p.largura_faixa <> q.depois / p.largura_faixa end
    group by 1, 2, 3, 4, 5, 6
    having sum(x.delta) <> 0
  )
  select coalesce(array_agg(m.periodo), '{}'), coalesce(array_agg(m.periodo_inicio), '{}'), coalesce(array_agg(m.nivel), '{}'),
    coalesce(array_agg(m.escala), '{}'), coalesce(array_agg(m.faixa), '{}'), coalesce(array_agg(m.delta), '{}'),
    coalesce(array_agg(m.cidade), '{}')
  into v_movimentos
  from mudancas m;

  -- A level-up moves the older periods' rows too, from the old level's board to the new one's
  -- (their city boards hold every level, so nothing moves there).
  if v_subiu then
    with movidos as (
      update gamificacao.totais_periodo t set nivel_ordem = v_nivel_depois.ordem
      from gamificacao.periodos p
      where t.usuario_id = p_usuario_id and t.nivel_ordem <> v_nivel_depois.ordem and p.periodo = t.periodo
      returning t.periodo, t.periodo_inicio, t.pontos, p.largura_faixa
    ), mudancas as (
      select m.periodo, m.periodo_inicio, q.nivel, e.escala, e.faixa, q.delta
      from movidos m
      cross join lateral (values (v_nivel_antes.ordem, -1), (v_nivel_depois.ordem, 1)) q (nivel, delta)
      cross join lateral (values
        (0::smallint, m.pontos / m.largura_faixa),
        (1::smallint, m.pontos / m.largura_faixa / gamificacao.faixas_por_grupo())
      ) e (escala, faixa)
    )
    select v_movimentos.periodos || coalesce(array_agg(m.periodo), '{}'), v_movimentos.inicios || coalesce(array_agg(m.periodo_inicio), '{}'),
      v_movimentos.niveis || coalesce(array_agg(m.nivel), '{}'), v_movimentos.escalas || coalesce(array_agg(m.escala), '{}'),
      v_movimentos.faixas || coalesce(array_agg(m.faixa), '{}'), v_movimentos.deltas || coalesce(array_agg(m.delta), '{}'),
      v_movimentos.cidades || coalesce(array_agg(null::text), '{}')
    into v_movimentos
    from mudancas m;
  end if;

  v_badges := gamificacao.avaliar_badges(v_historico, v_acao, v_nivel_depois.ordem, v_contagem);

  -- One update of the technician, after the badges, so a scoring that awards some does not write
  -- the row twice (each version re-checks the row's constraints and may need new index entries).
  update public.tecnicos set
    pontos_total = pontos_total + v_pontos,
    nivel = v_nivel_depois.slug,
    ultima_pontuacao_em = greatest(ultima_pontuacao_em, p_momento),
    badges_count = badges_count + jsonb_array_length(v_badges)
  where id = p_usuario_id;

  return row(
    jsonb_build_object(
      'pontos_adicionados', v_pontos,
      'pontos_total', v_tecnico.pontos_total + v_pontos,
      'nivel_atual', v_nivel_depois.nome,
      'subiu_nivel', v_nivel_depois.ordem > v_nivel_antes.ordem,
      'badges_conquistados', v_badges,
      'multiplicadores', jsonb_build_object(
        'tier', v_metricas.multiplicador_tier,
        'densidade', v_metricas.multiplicador_densidade,
        'nivel', v_nivel_antes.multiplicador)),
    p_usuario_id, v_tecnico.cidade_id, v_movimentos)::gamificacao.acao_aplicada;
end;
$$;


/**
 * The badges that scoring `p_historico` (action `p_acao`, level `p_nivel_ordem` after it, the
 * action's count `p_contagem` after it) awards and the technician lacks: inserted into
 * public.usuario_badges and returned as a JSON array (empty when none). The caller adds their
 * number to public.tecnicos.badges_count in its own update of the technician.
 */
create or replace function gamificacao.avaliar_badges(p_historico public.historico_pontos, p_acao public.acoes, p_nivel_ordem smallint, p_contagem integer)
returns jsonb
language plpgsql set search_path = '' as $$
declare
  v_tidos text[];
  v_novos jsonb;
begin
  select coalesce(array_agg(ub.badge_codigo), '{}') into v_tidos from public.usuario_badges ub where ub.usuario_id = p_historico.usuario_id;
  with premiados as (
    insert into public.usuario_badges (usuario_id, badge_codigo, conquistado_em, historico_id)
    select p_historico.usuario_id, b.codigo, p_historico.data_acao, p_historico.id
    from public.badges b
    where b.ativo and b.regra_tipo <> 'ranking_mensal'
      and (b.regra_acao is null or b.regra_acao = p_historico.acao)
      and b.codigo <> all (v_tidos)
      and case b.regra_tipo
        when 'contagem_acao' then p_contagem >= b.regra_minimo
        when 'tier_cidade' then p_historico.tier >= b.regra_minimo
        -- The scorer is active in the city even if the daily job has not counted them yet.
        when 'tecnicos_ativos' then greatest(p_historico.tecnicos_ativos, 1) <= b.regra_minimo
        when 'nivel' then p_nivel_ordem >= b.regra_minimo
        when 'media_avaliacoes' then case when p_acao.estrelas_exigidas is null then false else gamificacao.badge_conquistado(b, p_historico, p_acao) end
        else gamificacao.badge_conquistado(b, p_historico, p_acao)
      end
    on conflict do nothing
    returning badge_codigo
  )
  select jsonb_agg(jsonb_build_object(
      'codigo', b.codigo, 'nome', b.nome, 'categoria', b.categoria, 'descricao', b.descricao,
      'icone', b.icone, 'conquistado_em', p_historico.data_acao) order by b.codigo)
  into v_novos
  from premiados p join public.badges b on b.codigo = p.badge_codigo;
  return coalesce(v_novos, '[]'::jsonb);
end;
$$;
comment on function gamificacao.avaliar_badges(public.historico_pontos, public.acoes, smallint, integer) is
  'Awards the badges an action earns (usuario_badges) and returns them; the caller counts them on the technician.';

-- Batch scoring: the same as 20261121190000_gamification-scoring-speed.sql, carrying the moves' cities --

create or replace function public.gamificacao_registrar_acoes(p_acoes jsonb)
returns jsonb
language plpgsql security definer set search_path = '' set timezone = 'America/Sao_Paulo' as $$
declare
  v_admissao jsonb := gamificacao.admitir('pontuacao');
  v_limite jsonb := v_admissao -> 'limite';
  v_usuario uuid := auth.uid();
  v_primeiro boolean := true;
  v_item record;
  v_aplicada gamificacao.acao_aplicada;
  v_aplicadas gamificacao.acao_aplicada[] := '{}'::gamificacao.acao_aplicada[];
  v_indices integer[] := '{}'::integer[];
  v_movimentos gamificacao.movimentos;
  v_falhas jsonb := '[]'::jsonb;
  v_resultados jsonb;
  v_total integer;
  v_codigo text;
  v_mensagem text;
  v_dica text;
begin
  if v_admissao ? 'resposta' then
    return v_admissao -> 'resposta';
  end if;
  if jsonb_typeof(p_acoes) is distinct from 'array' or jsonb_array_length(p_acoes) not between 1 and 100 then
    return gamificacao.resposta_erro(400, 'PARAMETRO_INVALIDO', 'acoes deve ser uma lista de 1 a 100 registros.', null, v_limite);
  end if;
  v_total := jsonb_array_length(p_acoes);

  for v_item in
    select e.value as acao, e.ordinality::integer - 1 as indice
    from jsonb_array_elements(p_acoes) with ordinality e
    order by e.value ->> 'usuario_id', e.ordinality
  loop
    if v_usuario is not null and not v_primeiro then
      v_limite := gamificacao.consumir_limite(v_usuario, 'pontuacao');
      if not (v_limite ->> 'permitido')::boolean then
        v_falhas := v_falhas || jsonb_build_array(jsonb_build_object('indice', v_item.indice)
          || (gamificacao.resposta_erro(429, 'LIMITE_EXCEDIDO', 'Limite de pontuações por minuto excedido.', null, null) - 'limite'));
        continue;
      end if;
    end if;
    v_primeiro := false;
    begin
      if jsonb_typeof(v_item.acao) is distinct from 'object' or v_item.acao ->> 'acao' is null
        or v_item.acao ->> 'usuario_id' !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
        or v_item.acao ->> 'chamado_id' !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
        perform gamificacao.falhar(400, 'PARAMETRO_INVALIDO', 'Cada registro precisa de usuario_id e chamado_id (UUIDs) e acao.');
      end if;
      if v_usuario is not null and v_usuario <> (v_item.acao ->> 'usuario_id')::uuid then
        perform gamificacao.falhar(403, 'SEM_PERMISSAO', 'Um técnico só pode registrar pontos para si mesmo.');
      end if;
      v_aplicada := gamificacao.aplicar_acao((v_item.acao ->> 'usuario_id')::uuid, v_item.acao ->> 'acao', (v_item.acao ->> 'chamado_id')::uuid,
        coalesce(v_item.acao -> 'metadata', '{}'), now(), v_usuario);
      v_aplicadas := v_aplicadas || v_aplicada;
      v_indices := v_indices || v_item.indice;
    exception when sqlstate 'GM000' then
      get stacked diagnostics v_codigo = message_text, v_mensagem = pg_exception_detail, v_dica = pg_exception_hint;
      v_falhas := v_falhas || jsonb_build_array(jsonb_build_object('indice', v_item.indice)
        || (gamificacao.resposta_falha(v_codigo, v_mensagem, v_dica, null) - 'limite'));
    end;
  end loop;

  select coalesce(array_agg(m.periodo), '{}'), coalesce(array_agg(m.inicio), '{}'), coalesce(array_agg(m.nivel), '{}'),
    coalesce(array_agg(m.escala), '{}'), coalesce(array_agg(m.faixa), '{}'), coalesce(array_agg(m.delta), '{}'),
    coalesce(array_agg(m.cidade), '{}')
  into v_movimentos
  from unnest(v_aplicadas) a
  cross join lateral unnest((a.movimentos).periodos, (a.movimentos).inicios, (a.movimentos).niveis,
    (a.movimentos).escalas, (a.movimentos).faixas, (a.movimentos).deltas, (a.movimentos).cidades) m (periodo, inicio, nivel, escala, faixa, delta, cidade);
  perform gamificacao.aplicar_movimentos(v_movimentos);

  select jsonb_agg(r.resultado order by r.indice) into v_resultados
  from (
    select (f ->> 'indice')::integer as indice, f as resultado from jsonb_array_elements(v_falhas) f
    union all
    select a.indice, jsonb_build_object('indice', a.indice, 'status', 200,
      'data', a.resultado || gamificacao.posicoes_mensais(a.usuario_id, a.cidade_id, now()))
    from unnest(v_aplicadas, v_indices) a (resultado, usuario_id, cidade_id, movimentos, indice)
  ) r;

  return gamificacao.resposta_ok(jsonb_build_object(
    'resultados', v_resultados,
    'total', v_total,
    'sucesso', cardinality(v_aplicadas),
    'falhas', v_total - cardinality(v_aplicadas)), v_limite);
end;
$$;

-- The city buckets and exact-points counts of the boards scored so far (a recount from the totals,
-- which also drops counts that deleted technicians left behind).
select gamificacao.reconstruir_faixas();
