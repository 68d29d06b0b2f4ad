-- Gamification: the same scoring for less work per action.
--
-- Nothing a caller can observe changes: the same checks in the same order (the 409 still wins over
-- every later failure), the same points, totals, bucket moves, badges and answers, the same row
-- locks taken in the same order. What changes is how much Postgres does to get there (about
-- 1.35 ms of SQL per action on the bench data set: 100,000 technicians, 5 M history rows):
--
-- - A SQL function that cannot be inlined (a SET clause, here search_path, prevents it) is parsed
--   and planned again for every query that calls it, about 15 µs a call; scoring made a dozen
--   such calls per action (the period starts once per totals row, the local-time helpers once per
--   history row read by a badge rule, the score result's helpers). Those on the scoring path
--   become PL/pgSQL, whose body and plans are kept for the session, with the same signature,
--   volatility and search_path. Dropping the SET clause to let them inline was measured too and
--   is slower inside PL/pgSQL: the plan cache then keeps re-planning (and re-inlining) custom plans.
-- - gamificacao.aplicar_acao reads the technician (locked), the action, the call and the city
--   metrics in one statement, the levels and the points in one more, and computes the rank-bucket
--   moves of its four period rows inside the statement that upserts them (already summed per
--   bucket) instead of about twenty gamificacao.mover() and juntar_movimentos() calls. The
--   duplicate check stays a statement of its own after the lock (see there).
-- - gamificacao.avaliar_badges calls the rating-average rule only for rating actions; for every
--   other action it answered false, at the price of a PL/pgSQL call with three row arguments.
-- - The batch RPC gathers its items' bucket moves and results in one statement each at the end,
--   instead of copying ever longer arrays and JSON item after item.
--
-- The four indexes each history insert writes all stay: the primary key (usuario_badges references
-- it), the unique (usuario_id, chamado_id, acao) (idempotency), (usuario_id, data_acao desc, id
-- desc) (GET /points/history, the weekly badge rule) and (chamado_id), which the foreign key from
-- the history to public.chamados needs: without it deleting a call (or a technician, whose calls
-- cascade) would scan the whole ledger.
--
-- gamificacao.mover, juntar_movimentos and sem_movimentos have no caller left and are dropped.

-- Helpers on the scoring path, as PL/pgSQL ----------------------------------------------------

/** The moment as a local wall-clock time in America/Sao_Paulo. */
create or replace function gamificacao.hora_local(p_momento timestamptz) returns timestamp
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  return p_momento at time zone 'America/Sao_Paulo';
end;
$$;

/** First local day of the period of kind `p_periodo` that contains `p_momento` (-infinity for geral). */
create or replace function gamificacao.inicio_periodo(p_periodo text, p_momento timestamptz) returns date
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  return case p_periodo
    when 'semanal' then date_trunc('week', gamificacao.hora_local(p_momento))::date
    when 'mensal' then date_trunc('month', gamificacao.hora_local(p_momento))::date
    when 'anual' then date_trunc('year', gamificacao.hora_local(p_momento))::date
    when 'geral' then '-infinity'::date
  end;
end;
$$;

/** Local midnight of `p_dia` in America/Sao_Paulo as an instant. */
create or replace function gamificacao.meia_noite_local(p_dia date) returns timestamptz
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  return p_dia::timestamp at time zone 'America/Sao_Paulo';
end;
$$;

/** True when the request runs with the service_role key (the field-service back office). */
create or replace function gamificacao.eh_servico() returns boolean
language plpgsql stable security invoker set search_path = '' as $$
begin
  return coalesce(auth.role(), '') = 'service_role';
end;
$$;

/** Great-circle distance in metres between two points (haversine, mean Earth radius). */
create or replace function gamificacao.distancia_m(p_lat1 double precision, p_lon1 double precision, p_lat2 double precision, p_lon2 double precision)
returns double precision
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  return 2 * 6371008.8 * asin(sqrt(
    power(sin(radians(p_lat2 - p_lat1) / 2), 2)
    + cos(radians(p_lat1)) * cos(radians(p_lat2)) * power(sin(radians(p_lon2 - p_lon1) / 2), 2)
  ));
end;
$$;

/** A successful RPC answer. */
create or replace function gamificacao.resposta_ok(p_dados jsonb, p_limite jsonb) returns jsonb
language plpgsql immutable set search_path = '' as $$
begin
  return jsonb_build_object('status', 200, 'data', p_dados, 'limite', p_limite);
end;
$$;

/** A failed RPC answer with the envelope's error object. */
create or replace function gamificacao.resposta_erro(p_status integer, p_codigo text, p_mensagem text, p_detalhes jsonb, p_limite jsonb)
returns jsonb
language plpgsql immutable set search_path = '' as $$
begin
  return jsonb_build_object(
    'status', p_status,
    'error', jsonb_strip_nulls(jsonb_build_object('codigo', p_codigo, 'mensagem', p_mensagem, 'detalhes', p_detalhes)),
    'limite', p_limite);
end;
$$;

/** The RPC answer for a caught GM000 failure (its message, detail and hint, see gamificacao.falhar). */
create or replace function gamificacao.resposta_falha(p_codigo text, p_mensagem text, p_dica text, p_limite jsonb) returns jsonb
language plpgsql immutable set search_path = '' as $$
begin
  return gamificacao.resposta_erro((p_dica::jsonb ->> 'status')::integer, p_codigo, p_mensagem, p_dica::jsonb -> 'detalhes', p_limite);
end;
$$;

-- Scoring --------------------------------------------------------------------------------------

/**
 * Applies `p_acao` on call `p_chamado_id` for technician `p_usuario_id` at `p_momento` (now() for
 * the API; the seed replays past moments): every check and write except the positions and the
 * rank-bucket moves, which it returns (summed per bucket). Raises GM000 failures; the caller's
 * transaction (or savepoint) then undoes everything.
 */
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
  -- bucket changes nothing. Summed per bucket, zero sums left out.
  with gravados as (
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
    returning t.periodo, t.periodo_inicio, t.pontos, case when t.acoes = 1 then null else t.pontos - v_pontos end as antes
  ), mudancas as (
    select g.periodo, g.periodo_inicio, q.nivel, e.escala, e.faixa, sum(x.delta)::integer as delta
    from gravados g
    join gamificacao.periodos p on p.periodo = g.periodo
    cross join lateral (values
      (0::smallint, g.antes, g.pontos),
      (v_nivel_antes.ordem, g.antes, case when not v_subiu then g.pontos end),
      (v_nivel_depois.ordem, null, case when v_subiu then g.pontos end)
    ) q (nivel, antes, depois)
    cross join lateral (values (q.antes, -1), (q.depois, 1)) x (pontos, delta)
    cross join lateral (values
      (0::smallint, x.pontos / p.largura_faixa),
      (1::smallint, x.pontos / p.largura_faixa / gamificacao.faixas_por_grupo())
    ) e (escala, faixa)
    where x.pontos is not null
      and (q.antes is null or q.depois is null or q.antes / p.largura_faixa <> q.depois / p.largura_faixa)
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

/**
 * Awards every active event-driven badge whose rule now holds and that the technician does not
 * hold yet; returns the new awards as the API shows them (codigo, nome, categoria, descricao,
 * icone, conquistado_em), in catalogue order. `p_contagem` is how many times the technician has
 * now scored this action. One statement: the cheap rules (that count, the frozen city metrics,
 * the level) are checked inline, and only the rules that read history or calls call
 * gamificacao.badge_conquistado() (the rating average only on a rating action, the one kind of
 * action that can move it).
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
  if v_novos is null then
    return '[]'::jsonb;
  end if;
  update public.tecnicos set badges_count = badges_count + jsonb_array_length(v_novos) where id = p_historico.usuario_id;
  return v_novos;
end;
$$;

/** The technician's positions on the monthly home-city and national boards, as the score result reports them. */
create or replace function gamificacao.posicoes_mensais(p_usuario_id uuid, p_cidade_id text, p_momento timestamptz) returns jsonb
language plpgsql stable set search_path = '' as $$
declare
  v_total gamificacao.totais_periodo;
begin
  select * into v_total from gamificacao.totais_periodo t
  where t.usuario_id = p_usuario_id and t.periodo = 'mensal' and t.periodo_inicio = gamificacao.inicio_periodo('mensal', p_momento);
  if not found then
    return null;
  end if;
  return jsonb_build_object(
    'posicao_ranking_local', gamificacao.posicao('local', v_total.periodo, v_total.periodo_inicio, p_cidade_id, v_total.pontos, v_total.ultima_pontuacao_em, v_total.usuario_id),
    'posicao_ranking_nacional', gamificacao.posicao('nacional', v_total.periodo, v_total.periodo_inicio, null, v_total.pontos, v_total.ultima_pontuacao_em, v_total.usuario_id));
end;
$$;

-- API ------------------------------------------------------------------------------------------

/**
 * POST /api/v1/gamification/points/lote: scores up to 100 action registrations in one transaction,
 * each on its own (a savepoint per item: one failure leaves the others recorded), and answers
 * {resultados: [{indice, status, data | error}] in request order, total, sucesso, falhas}.
 * Items run in usuario_id order and every bucket move is applied once at the end, in key order,
 * so concurrent batches cannot deadlock; positions are therefore those after the whole batch. A
 * technician spends one rate-limit token per item and may only list their own actions.
 */
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
    coalesce(array_agg(m.escala), '{}'), coalesce(array_agg(m.faixa), '{}'), coalesce(array_agg(m.delta), '{}')
  into v_movimentos
  from unnest(v_aplicadas) a
  cross join lateral unnest((a.movimentos).periodos, (a.movimentos).inicios, (a.movimentos).niveis,
    (a.movimentos).escalas, (a.movimentos).faixas, (a.movimentos).deltas) m (periodo, inicio, nivel, escala, faixa, delta);
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

-- No caller left ------------------------------------------------------------------------------
drop function gamificacao.mover(text, date, smallint, integer, integer, integer);
drop function gamificacao.juntar_movimentos(gamificacao.movimentos, gamificacao.movimentos);
drop function gamificacao.sem_movimentos();
