-- Gamification: positions on the national boards whose cost stays flat as the board grows.
--
-- A national position was 1 + the coarse and fine rank buckets above (a few dozen rows) + an
-- index count of everyone inside the technician's own fine bucket (10 points wide for the week
-- and the month) ahead of them. That last count grows with the board: a month's points cluster in
-- a narrow range, so ten times the technicians put about ten times as many in each fine bucket,
-- most of them tied on exactly the same points (an action is worth one of a few dozen amounts),
-- and the count walks that many index entries. Issue 18 measured gamificacao.posicao p95 at 0.59
-- ms with 100,000 technicians and 2.53 ms with 1,000,000; every scoring pays it for its result's
-- national position.
--
-- The board of all levels now also counts its technicians per tie key (gamificacao.faixas_pontos):
-- exact points × 64 + the time slot of the last scoring (the day within a week or month, six days
-- within a year, the year for all time). The part of the position inside the fine bucket becomes
-- two short key-range sums (higher points in the fine bucket: at most 9 point values × their slots;
-- equal points in earlier slots: at most 31 rows for a month) plus an index count of the entries
-- tied on points within the technician's own slot, which is a day's share of one tie. Scoring
-- moves the technician between two tie keys per period (with the same ordered, batched upsert as
-- the other buckets, so no new lock order); the level boards and city boards keep their counts.
--
-- Keys are integers (the moves travel in gamificacao.movimentos with the other buckets as escala
-- 2), so a period's points must stay below 2^31 / 64 = 33,554,432; the highest level starts at 40,000.

create table gamificacao.faixas_pontos (
  periodo text not null,
  periodo_inicio date not null,
  chave integer not null,
  -- No check (quantidade >= 0), as in faixas_ranking: the upsert's proposed row may carry a -1.
  quantidade integer not null,
  primary key (periodo, periodo_inicio, chave)
);
comment on table gamificacao.faixas_pontos is
  'Technicians per tie key (exact points and time slot of the last scoring) on each period''s board of all levels: the part of a national position inside its fine rank bucket.';
comment on column gamificacao.faixas_pontos.chave is 'pontos × 64 + gamificacao.fatia_empate() of the last scoring (gamificacao.chave_empate).';
comment on column gamificacao.faixas_pontos.quantidade is 'Technicians on the board with that key.';
alter table gamificacao.faixas_pontos enable row level security;
revoke all on gamificacao.faixas_pontos from anon, authenticated, service_role;

/**
 * The time slot of a last scoring at `p_momento` within period (`p_periodo`, `p_inicio`): the day
 * (0–30) for a week or month, the 6-day slot (0–60) for a year, the year since 2019 for all time,
 * clamped to 0–63. Later moments never get a smaller slot, so on equal points the slots keep the
 * board's order (the earlier last scoring ranks higher).
 */
create function gamificacao.fatia_empate(p_periodo text, p_inicio date, p_momento timestamptz) returns integer
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  return least(63, greatest(0, case p_periodo
    when 'geral' then extract(year from gamificacao.hora_local(p_momento))::integer - 2019
    else floor(extract(epoch from p_momento - gamificacao.meia_noite_local(p_inicio))
      / (86400 * case p_periodo when 'anual' then 6 else 1 end))::integer
  end));
end;
$$;
comment on function gamificacao.fatia_empate(text, date, timestamptz) is
  'Time slot (0–63) of a last scoring within its period: day of the week or month, 6-day slot of the year, year of all time.';

/** The first moment of slot `p_fatia` (see gamificacao.fatia_empate): -infinity for slot 0, which also holds anything earlier. */
create function gamificacao.inicio_fatia_empate(p_periodo text, p_inicio date, p_fatia integer) returns timestamptz
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  if p_fatia <= 0 then
    return '-infinity'::timestamptz;
  end if;
  return case p_periodo
    when 'geral' then gamificacao.meia_noite_local(make_date(2019 + p_fatia, 1, 1))
    else gamificacao.meia_noite_local(p_inicio) + make_interval(days => p_fatia * case p_periodo when 'anual' then 6 else 1 end)
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

/**
 * 1-based position on a board of the entry (p_pontos, p_ultima, p_usuario); the entry itself need
 * not be on the board yet. One statement per scope, so the bucket sums and the counts come from
 * the same snapshot. The board of all levels counts inside the fine bucket from its tie keys.
 */
create or replace function gamificacao.posicao(
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
  v_fatia integer;
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
    v_fatia := gamificacao.fatia_empate(p_periodo, p_inicio, p_ultima);
    select v_posicao
      + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_pontos f
         where f.periodo = p_periodo and f.periodo_inicio = p_inicio
           and f.chave >= (p_pontos + 1) * 64 and f.chave < (v_faixa + 1) * v_largura * 64)
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

/**
 * Applies bucket changes in one statement per table: summed per bucket, rows in key order (the
 * lock order every scoring shares: rank buckets first, then tie keys), zero sums skipped. Changes
 * of escala 2 are tie keys and go to gamificacao.faixas_pontos.
 */
create or replace function gamificacao.aplicar_movimentos(p_movimentos gamificacao.movimentos) returns void
language plpgsql set search_path = '' as $$
begin
  insert into gamificacao.faixas_ranking as f (periodo, periodo_inicio, nivel, escala, faixa, quantidade)
  select m.periodo, m.periodo_inicio, m.nivel, m.escala, m.faixa, sum(m.delta)
  from unnest(p_movimentos.periodos, p_movimentos.inicios, p_movimentos.niveis, p_movimentos.escalas, p_movimentos.faixas, p_movimentos.deltas)
    as m (periodo, periodo_inicio, nivel, escala, faixa, delta)
  where m.escala < 2
  group by 1, 2, 3, 4, 5
  having sum(m.delta) <> 0
  order by 1, 2, 3, 4, 5
  on conflict (periodo, periodo_inicio, nivel, escala, faixa) do update set quantidade = f.quantidade + excluded.quantidade;

  insert into gamificacao.faixas_pontos as f (periodo, periodo_inicio, chave, quantidade)
  select m.periodo, m.periodo_inicio, m.faixa, sum(m.delta)
  from unnest(p_movimentos.periodos, p_movimentos.inicios, p_movimentos.escalas, p_movimentos.faixas, p_movimentos.deltas)
    as m (periodo, periodo_inicio, escala, faixa, delta)
  where m.escala = 2
  group by 1, 2, 3
  having sum(m.delta) <> 0
  order by 1, 2, 3
  on conflict (periodo, periodo_inicio, chave) do update set quantidade = f.quantidade + excluded.quantidade;
end;
$$;
comment on function gamificacao.aplicar_movimentos(gamificacao.movimentos) is
  'Applies collected bucket changes to gamificacao.faixas_ranking and tie-key changes (escala 2) to gamificacao.faixas_pontos.';

/**
 * Rebuilds the rank buckets and tie keys from the totals, for one period kind or (null) all.
 * Needed after a bulk load that bypassed scoring (the bench) or after changing periodos.largura_faixa.
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
  group by 1, 2, 3, 4, 5;
  delete from gamificacao.faixas_pontos f where p_periodo is null or f.periodo = p_periodo;
  insert into gamificacao.faixas_pontos (periodo, periodo_inicio, chave, quantidade)
  select t.periodo, t.periodo_inicio, gamificacao.chave_empate(t.periodo, t.periodo_inicio, t.pontos, t.ultima_pontuacao_em), count(*)
  from gamificacao.totais_periodo t
  where p_periodo is null or t.periodo = p_periodo
  group by 1, 2, 3;
$$;
comment on function gamificacao.reconstruir_faixas(text) is 'Recounts gamificacao.faixas_ranking and gamificacao.faixas_pontos from gamificacao.totais_periodo.';

-- Scoring: the same as 20261121190000_gamification-scoring-speed.sql, plus the tie-key moves ----

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

  update public.tecnicos set
    pontos_total = pontos_total + v_pontos,
    nivel = v_nivel_depois.slug,
    ultima_pontuacao_em = greatest(ultima_pontuacao_em, p_momento)
  where id = p_usuario_id;

  insert into gamificacao.contagem_acoes as c (usuario_id, acao, quantidade) values (p_usuario_id, p_acao, 1)
  on conflict (usuario_id, acao) do update set quantidade = c.quantidade + 1
  returning c.quantidade into v_contagem;

  -- One row per period kind, and the bucket moves it causes: the technician moves up on the board
  -- of all levels (nivel 0) and on their level's board (from the old level's board to the new
  -- one's on a level-up), at both scales; a new row only arrives, and a move inside one fine
  -- bucket changes nothing there. On the board of all levels the technician also always moves
  -- between tie keys (escala 2: exact points and the time slot of the last scoring, whose rows
  -- gamificacao.aplicar_movimentos keeps in gamificacao.faixas_pontos); `anteriores` reads the
  -- last scoring before this one (the CTEs share one snapshot, taken before the upsert).
  -- Summed per bucket, zero sums left out.
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
    select g.periodo, g.periodo_inicio, q.nivel, e.escala, e.faixa, sum(x.delta)::integer as delta
    from gravados g
    join gamificacao.periodos p on p.periodo = g.periodo
    left join anteriores a on a.periodo = g.periodo
    cross join lateral (values
      (0::smallint, g.antes, g.pontos),
      (v_nivel_antes.ordem, g.antes, case when not v_subiu then g.pontos end),
      (v_nivel_depois.ordem, null, case when v_subiu then g.pontos end)
    ) q (nivel, antes, depois)
    cross join lateral (values (q.antes, a.ultima_pontuacao_em, -1), (q.depois, g.ultima, 1)) x (pontos, ultima, delta)
    cross join lateral (values
      (0::smallint, x.pontos / p.largura_faixa),
      (1::smallint, x.pontos / p.largura_faixa / gamificacao.faixas_por_grupo()),
      (2::smallint, case when q.nivel = 0 then gamificacao.chave_empate(g.periodo, g.periodo_inicio, x.pontos, x.ultima) end)
    ) e (escala, faixa)
    where x.pontos is not null
      and case when e.escala = 2 then q.nivel = 0
        else q.antes is null or q.depois is null or q.antes / p.largura_faixa <> q.depois / p.largura_faixa end
    group by 1, 2, 3, 4, 5
    having sum(x.delta) <> 0
  )
  select coalesce(array_agg(m.periodo), '{}'), coalesce(array_agg(m.periodo_inicio), '{}'), coalesce(array_agg(m.nivel), '{}'),
    coalesce(array_agg(m.escala), '{}'), coalesce(array_agg(m.faixa), '{}'), coalesce(array_agg(m.delta), '{}')
  into v_movimentos
  from mudancas m;

  -- A level-up moves the older periods' rows too, from the old level's board to the new one's.
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
      v_movimentos.faixas || coalesce(array_agg(m.faixa), '{}'), v_movimentos.deltas || coalesce(array_agg(m.delta), '{}')
    into v_movimentos
    from mudancas m;
  end if;

  v_badges := gamificacao.avaliar_badges(v_historico, v_acao, v_nivel_depois.ordem, v_contagem);

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

