-- Gamification: three savings on every scoring, measured where the bench's scoring spends its time.
--
-- 1. The ties of a national position's own time slot are counted from the slot's nearer end.
--    Scorings arrive now, so a technician who has just scored is the last of their slot: hardly
--    anyone ties after them, while everyone who scored the same points earlier in the slot (12
--    hours of a month, 160 minutes of a week) ties ahead. The scoring's answer counted those on
--    the index, which at a million technicians under the bench's load meant about 250 buffer reads
--    an answer, growing with the slot's traffic rather than with the board. When the present is
--    nearer than the slot's start, the position is now the points' whole count (the exact-points
--    row) less the later slots' tie keys and the entries from this one on, which for a fresh
--    scoring is a handful. On the bench's million (3 alternating runs of 3,000 actions, 2 in
--    flight): 2,130 → 1,860 µs of database time an action, 914 → 1,043 actions/s.
-- 2. Each period's start is computed once. The scoring's `anteriores` read found the technician's
--    current period rows by testing gamificacao.inicio_periodo() against every period row the
--    technician ever had (a row per week, month and year scored, about 14 at the bench's 100,000
--    technicians and growing with every week worked), one function call each. It now computes the
--    four starts once and reads the four current rows by primary key: 45 µs → 17 µs a scoring,
--    measured on 5,000 technicians, and no longer growing with a technician's history.
-- 3. The full-week badge (`dias_na_semana`) first reads the week's totals row, which the scoring
--    has just written: a week with fewer scorings (of any action) than the days the rule asks for
--    cannot hold that many days with the rule's action, and skips the scan of the week's history
--    (about 75 µs, a heap fetch per history row of the week).
--
-- 2 and 3 together save about 4% of a scoring's database time on the bench's 100,000 technicians
-- (2,000 → 1,930 µs an action, three alternating runs of 2,000 actions each).

-- Scoring: the same as 20261124200000_gamification-city-buckets-one-technician-update.sql, with the
-- period starts computed once --

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
  -- `inicios` computes each period's start once: `anteriores` then reads the four current rows by
  -- primary key instead of testing every period row the technician ever had.
  with inicios as materialized (
    select p.periodo, gamificacao.inicio_periodo(p.periodo, p_momento) as inicio from gamificacao.periodos p
  ), anteriores as (
    select t.periodo, t.ultima_pontuacao_em
    from inicios i
    join gamificacao.totais_periodo t on t.usuario_id = p_usuario_id and t.periodo = i.periodo and t.periodo_inicio = i.inicio
  ), gravados as (
    insert into gamificacao.totais_periodo as t
      (usuario_id, periodo, periodo_inicio, cidade_id, nivel_ordem, pontos, acoes, ultima_pontuacao_em)
    select p_usuario_id, i.periodo, i.inicio, v_tecnico.cidade_id, v_nivel_depois.ordem, v_pontos, 1, p_momento
    from inicios i
    order by i.periodo
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

-- Badge rules: the same as 20261121020600_gamification-badges.sql, with the week's count first --

/**
 * Whether `p_badge`'s rule holds for the technician right after the scored action `p_historico`
 * (already inserted, its period totals already updated), for the rule kinds that read history or
 * calls: acao_antes_da_hora, dias_na_semana and media_avaliacoes (gamificacao.avaliar_badges
 * checks the others inline).
 */
create or replace function gamificacao.badge_conquistado(p_badge public.badges, p_historico public.historico_pontos, p_acao public.acoes)
returns boolean
language plpgsql stable set search_path = '' as $$
declare
  v_leitura timestamptz;
  v_quantidade bigint;
  v_media numeric;
begin
  case p_badge.regra_tipo
    when 'acao_antes_da_hora' then
      v_leitura := (p_historico.metadata ->> 'timestamp_checkin')::timestamptz;
      if v_leitura is null or extract(hour from gamificacao.hora_local(v_leitura)) >= p_badge.regra_hora then
        return false;
      end if;
      select count(*) into v_quantidade from public.historico_pontos h
      where h.usuario_id = p_historico.usuario_id and h.acao = p_badge.regra_acao
        and extract(hour from gamificacao.hora_local((h.metadata ->> 'timestamp_checkin')::timestamptz)) < p_badge.regra_hora;
      return v_quantidade >= p_badge.regra_minimo;

    when 'dias_na_semana' then
      -- Fewer scorings this week (of any action) than the days the rule asks for cannot make it:
      -- one read of the week's totals row spares most calls the scan of the week's history.
      select t.acoes into v_quantidade from gamificacao.totais_periodo t
      where t.usuario_id = p_historico.usuario_id and t.periodo = 'semanal'
        and t.periodo_inicio = gamificacao.inicio_periodo('semanal', p_historico.data_acao);
      if coalesce(v_quantidade, 0) < p_badge.regra_minimo then
        return false;
      end if;
      select count(distinct gamificacao.hora_local(h.data_acao)::date) into v_quantidade from public.historico_pontos h
      where h.usuario_id = p_historico.usuario_id and h.acao = p_badge.regra_acao
        and h.data_acao >= gamificacao.meia_noite_local(gamificacao.inicio_periodo('semanal', p_historico.data_acao))
        and h.data_acao <= p_historico.data_acao;
      return v_quantidade >= p_badge.regra_minimo;

    when 'media_avaliacoes' then
      -- Ratings live on the calls (the back office records them); only a rating action can move the average.
      if p_acao.estrelas_exigidas is null then
        return false;
      end if;
      select count(ch.estrelas), avg(ch.estrelas) into v_quantidade, v_media from public.chamados ch
      where ch.tecnico_id = p_historico.usuario_id and ch.estrelas is not null
        and ch.checkout_em > p_historico.data_acao - make_interval(days => p_badge.regra_janela_dias)
        and ch.checkout_em <= p_historico.data_acao;
      return v_quantidade >= coalesce(p_badge.regra_amostra, 1) and v_media >= p_badge.regra_minimo;

    else
      return false;
  end case;
end;
$$;

-- Positions: the same as 20261124200000_gamification-city-buckets-one-technician-update.sql, with the
-- ties of the entry's own slot counted from its nearer end --

/**
 * 1-based position on a board of the entry (p_pontos, p_ultima, p_usuario); the entry itself need
 * not be on the board yet. One statement per part, so the bucket sums and the counts come from the
 * same snapshot: the rank buckets above (gamificacao.faixas_cidades for a city board,
 * gamificacao.faixas_ranking otherwise), then the entries ahead inside the fine bucket, which the
 * board of all levels counts from its exact-points rows and its tie keys. On that board the
 * entries tied on points inside the entry's own time slot are counted on the index from the nearer
 * end of the slot: the entries ahead directly when the slot's start is nearer, otherwise the
 * points' whole count less the later slots and the entries from this one on (the entry itself
 * included when it is on the board).
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
  v_inicio_fatia timestamptz;
  v_fim_fatia timestamptz;
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
      select v_posicao
        + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_ranking f
           where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.nivel = 0 and f.escala = 2
             and f.faixa >= p_pontos and f.faixa < (v_faixa + 1) * v_largura)
        - (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_pontos f
           where f.periodo = p_periodo and f.periodo_inicio = p_inicio
             and f.chave > p_pontos * 64 + v_fatia and f.chave < (p_pontos + 1) * 64)
        - (select count(*) from gamificacao.totais_periodo t
           where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.pontos = p_pontos
             and (t.ultima_pontuacao_em, t.usuario_id) >= (p_ultima, p_usuario) and t.ultima_pontuacao_em < v_fim_fatia)
      into v_posicao;
    else
      select v_posicao
        + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_ranking f
           where f.periodo = p_periodo and f.periodo_inicio = p_inicio and f.nivel = 0 and f.escala = 2
             and f.faixa > p_pontos and f.faixa < (v_faixa + 1) * v_largura)
        + (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_pontos f
           where f.periodo = p_periodo and f.periodo_inicio = p_inicio
             and f.chave >= p_pontos * 64 and f.chave < p_pontos * 64 + v_fatia)
        + (select count(*) from gamificacao.totais_periodo t
           where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.pontos = p_pontos
             and t.ultima_pontuacao_em >= v_inicio_fatia
             and (t.ultima_pontuacao_em, t.usuario_id) < (p_ultima, p_usuario))
      into v_posicao;
    end if;
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

