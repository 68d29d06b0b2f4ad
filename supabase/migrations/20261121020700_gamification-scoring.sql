-- Gamification: scoring actions, each in one transaction.
--
-- gamificacao.aplicar_acao() validates an action, its call and its check-in, computes the three
-- multipliers and the points (decisions.md, Gamification 1), appends the history row (unique per
-- technician, call and action), moves the technician's total, level, period totals and counters
-- and awards badges; it returns the score result and the rank-bucket moves still to apply.
-- gamificacao.registrar_acao() adds the positions and applies the moves: that is the whole of POST
-- /api/v1/gamification/points. The RPCs the `api` edge function calls with the caller's JWT
-- authorise, spend the caller's rate limit and turn expected failures into the error envelope,
-- rolling back everything but the rate-limit token: public.gamificacao_registrar_acao() for one
-- action and public.gamificacao_registrar_acoes() for a batch of up to 100 (the back office's
-- bulk path; the HTTP cost of one request per action caps throughput long before Postgres does).

-- API responses --------------------------------------------------------------------------------
-- Every gamificacao_* RPC answers {status, data | error, limite}: the HTTP status, the envelope's
-- payload and the caller's rate-limit state (null for the service role). The edge function turns
-- it into the HTTP response; errors are answered, not raised, so the rate-limit token stays spent.

/** A successful RPC answer. */
create function gamificacao.resposta_ok(p_dados jsonb, p_limite jsonb) returns jsonb
language plpgsql immutable set search_path = '' as $$
begin
  return jsonb_build_object('status', 200, 'data', p_dados, 'limite', p_limite);
end;
$$;
comment on function gamificacao.resposta_ok(jsonb, jsonb) is 'RPC answer for a success: {status: 200, data, limite}.';

/** A failed RPC answer with the envelope's error object. */
create function gamificacao.resposta_erro(p_status integer, p_codigo text, p_mensagem text, p_detalhes jsonb, p_limite jsonb)
returns jsonb
language plpgsql immutable set search_path = '' as $$
begin
  return jsonb_build_object(
    'status', p_status,
    'error', jsonb_strip_nulls(jsonb_build_object('codigo', p_codigo, 'mensagem', p_mensagem, 'detalhes', p_detalhes)),
    'limite', p_limite);
end;
$$;
comment on function gamificacao.resposta_erro(integer, text, text, jsonb, jsonb) is
  'RPC answer for a failure: {status, error: {codigo, mensagem, detalhes?}, limite}.';

/** The RPC answer for a caught GM000 failure (its message, detail and hint, see gamificacao.falhar). */
create function gamificacao.resposta_falha(p_codigo text, p_mensagem text, p_dica text, p_limite jsonb) returns jsonb
language plpgsql immutable set search_path = '' as $$
begin
  return gamificacao.resposta_erro((p_dica::jsonb ->> 'status')::integer, p_codigo, p_mensagem, p_dica::jsonb -> 'detalhes', p_limite);
end;
$$;
comment on function gamificacao.resposta_falha(text, text, text, jsonb) is 'Turns a caught gamificacao.falhar() into an RPC answer.';

/**
 * Who may call: a signed-in user (spending one token of their `p_tipo` bucket) or the service
 * role (not limited). Returns the rate-limit state, or an RPC error answer under key `resposta`
 * when the caller is anonymous or out of tokens.
 */
create function gamificacao.admitir(p_tipo text) returns jsonb
language plpgsql set search_path = '' as $$
declare
  v_usuario uuid := auth.uid();
  v_limite jsonb;
begin
  if v_usuario is null then
    if gamificacao.eh_servico() then
      return jsonb_build_object('limite', null);
    end if;
    return jsonb_build_object('resposta', gamificacao.resposta_erro(401, 'NAO_AUTENTICADO', 'Envie um JWT de usuário ou a chave service_role.', null, null));
  end if;
  v_limite := gamificacao.consumir_limite(v_usuario, p_tipo);
  if not (v_limite ->> 'permitido')::boolean then
    return jsonb_build_object('resposta', gamificacao.resposta_erro(429, 'LIMITE_EXCEDIDO',
      format('Limite de %s requisições por minuto excedido; tente de novo em %s s.', v_limite ->> 'limite', v_limite ->> 'retry_after'),
      jsonb_build_object('retry_after', (v_limite ->> 'retry_after')::integer), v_limite));
  end if;
  return jsonb_build_object('limite', v_limite);
end;
$$;
comment on function gamificacao.admitir(text) is 'Authenticates the RPC caller and spends their rate-limit token.';

-- Input checks ---------------------------------------------------------------------------------

/** Great-circle distance in metres between two points (haversine, mean Earth radius). */
create function gamificacao.distancia_m(p_lat1 double precision, p_lon1 double precision, p_lat2 double precision, p_lon2 double precision)
returns double precision
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  return 2 * 6371008.8 * asin(sqrt(
    power(sin(radians(p_lat2 - p_lat1) / 2), 2)
    + cos(radians(p_lat1)) * cos(radians(p_lat2)) * power(sin(radians(p_lon2 - p_lon1) / 2), 2)
  ));
end;
$$;
comment on function gamificacao.distancia_m(double precision, double precision, double precision, double precision) is
  'Haversine distance in metres.';

/** An ISO 8601 date-time with an offset (or Z), or null when `p_texto` is not one. */
create function gamificacao.ler_instante_iso(p_texto text) returns timestamptz
language plpgsql immutable set search_path = '' as $$
begin
  if p_texto !~ '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)$' then
    return null;
  end if;
  return p_texto::timestamptz;
exception when others then
  return null;
end;
$$;
comment on function gamificacao.ler_instante_iso(text) is 'Parses an ISO 8601 date-time with offset; null when malformed.';

/**
 * Validates the metadata of an action against its call and returns the distance in metres (null
 * when the action is not geolocated). Failures (422): COORDENADAS_INVALIDAS, METADATA_INCOMPLETA,
 * TIMESTAMP_INVALIDO, FORA_DO_RAIO, CHECKIN_FORA_DO_HORARIO.
 */
create function gamificacao.validar_leitura(p_acao public.acoes, p_chamado public.chamados, p_metadata jsonb, p_momento timestamptz)
returns integer
language plpgsql stable set search_path = '' as $$
declare
  v_tem_lat boolean := p_metadata ? 'latitude';
  v_tem_lon boolean := p_metadata ? 'longitude';
  v_lat double precision;
  v_lon double precision;
  v_leitura timestamptz;
  v_raio integer;
  v_distancia double precision;
begin
  if v_tem_lat or v_tem_lon then
    if jsonb_typeof(p_metadata -> 'latitude') is distinct from 'number' or jsonb_typeof(p_metadata -> 'longitude') is distinct from 'number' then
      perform gamificacao.falhar(422, 'COORDENADAS_INVALIDAS', 'latitude e longitude devem ser enviadas juntas, como números.');
    end if;
    v_lat := (p_metadata ->> 'latitude')::double precision;
    v_lon := (p_metadata ->> 'longitude')::double precision;
    if v_lat not between -90 and 90 or v_lon not between -180 and 180 or (v_lat = 0 and v_lon = 0) then
      perform gamificacao.falhar(422, 'COORDENADAS_INVALIDAS',
        'Coordenadas fora do intervalo (latitude -90..90, longitude -180..180) ou nulas (0, 0).',
        jsonb_build_object('latitude', v_lat, 'longitude', v_lon));
    end if;
  end if;
  if not p_acao.exige_geolocalizacao then
    return null;
  end if;

  if v_lat is null or not p_metadata ? 'timestamp_checkin' then
    perform gamificacao.falhar(422, 'METADATA_INCOMPLETA',
      format('A ação %s exige metadata.latitude, metadata.longitude e metadata.timestamp_checkin.', p_acao.codigo));
  end if;
  v_leitura := gamificacao.ler_instante_iso(p_metadata ->> 'timestamp_checkin');
  if v_leitura is null then
    perform gamificacao.falhar(422, 'TIMESTAMP_INVALIDO', 'timestamp_checkin deve ser uma data-hora ISO 8601 com fuso.');
  end if;
  if v_leitura > p_momento + interval '5 minutes' then
    perform gamificacao.falhar(422, 'TIMESTAMP_INVALIDO', 'timestamp_checkin está mais de 5 minutos no futuro.',
      jsonb_build_object('timestamp_checkin', v_leitura, 'agora', p_momento));
  end if;
  if v_leitura < p_momento - interval '24 hours' then
    perform gamificacao.falhar(422, 'TIMESTAMP_INVALIDO', 'timestamp_checkin tem mais de 24 horas.',
      jsonb_build_object('timestamp_checkin', v_leitura, 'agora', p_momento));
  end if;

  select coalesce(p_chamado.raio_checkin_m, c.raio_checkin_m) into v_raio from public.cidades c where c.id = p_chamado.cidade_id;
  v_distancia := gamificacao.distancia_m(v_lat, v_lon, p_chamado.latitude, p_chamado.longitude);
  if v_distancia > v_raio then
    perform gamificacao.falhar(422, 'FORA_DO_RAIO',
      format('A leitura está a %s m do local do chamado; o raio permitido é %s m.', round(v_distancia), v_raio),
      jsonb_build_object('distancia_m', round(v_distancia), 'raio_m', v_raio));
  end if;

  if p_acao.janela_antes_min is not null
    and v_leitura not between p_chamado.agendado_para - make_interval(mins => p_acao.janela_antes_min)
                          and p_chamado.agendado_para + make_interval(mins => p_acao.janela_depois_min) then
    perform gamificacao.falhar(422, 'CHECKIN_FORA_DO_HORARIO',
      format('O check-in deve ocorrer entre %s min antes e %s min depois do horário agendado.', p_acao.janela_antes_min, p_acao.janela_depois_min),
      jsonb_build_object('agendado_para', p_chamado.agendado_para, 'timestamp_checkin', v_leitura));
  end if;
  return round(v_distancia)::integer;
end;
$$;
comment on function gamificacao.validar_leitura(public.acoes, public.chamados, jsonb, timestamptz) is
  'Checks coordinates, the reading''s time window, the radius and punctuality of a geolocated action.';

-- Scoring --------------------------------------------------------------------------------------

/** One applied action: the score result without its two positions, and the bucket moves still to apply. */
create type gamificacao.acao_aplicada as (
  resultado jsonb,
  usuario_id uuid,
  cidade_id text,
  movimentos gamificacao.movimentos
);
comment on type gamificacao.acao_aplicada is 'What gamificacao.aplicar_acao() leaves to its caller: result, technician, home city and bucket moves.';

/**
 * Validates and records one action (history, totals, level, counters, badges) and returns the
 * result without its positions, with the bucket moves still to apply: the caller applies the
 * moves of one or many actions in one ordered batch, then reads the positions.
 */
create function gamificacao.aplicar_acao(
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

  v_badges := gamificacao.avaliar_badges(v_historico, v_acao, v_nivel_antes.ordem, v_nivel_depois.ordem, v_contagem);

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
comment on function gamificacao.aplicar_acao(uuid, text, uuid, jsonb, timestamptz, uuid) is
  'Validates and records one action (history, totals, level, counters, badges); returns the result without positions and the bucket moves.';

/** The technician's positions on the monthly home-city and national boards, as the score result reports them. */
create function gamificacao.posicoes_mensais(p_usuario_id uuid, p_cidade_id text, p_momento timestamptz) returns jsonb
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
comment on function gamificacao.posicoes_mensais(uuid, text, timestamptz) is 'posicao_ranking_local and posicao_ranking_nacional of the score result.';

/**
 * Scores one action in the caller's transaction and returns the full score result: the action is
 * applied, its bucket moves are applied, and only then are the monthly positions read, so they
 * count the technician exactly where the boards will show them.
 */
create function gamificacao.registrar_acao(
  p_usuario_id uuid, p_acao text, p_chamado_id uuid, p_metadata jsonb, p_momento timestamptz, p_registrado_por uuid
) returns jsonb
language plpgsql set search_path = '' as $$
declare
  v_aplicada gamificacao.acao_aplicada := gamificacao.aplicar_acao(p_usuario_id, p_acao, p_chamado_id, p_metadata, p_momento, p_registrado_por);
begin
  perform gamificacao.aplicar_movimentos(v_aplicada.movimentos);
  return v_aplicada.resultado || gamificacao.posicoes_mensais(p_usuario_id, v_aplicada.cidade_id, p_momento);
end;
$$;
comment on function gamificacao.registrar_acao(uuid, text, uuid, jsonb, timestamptz, uuid) is
  'Scores one action in the caller''s transaction and returns the score result (raises GM000 on expected failures).';

-- API ------------------------------------------------------------------------------------------

/**
 * POST /api/v1/gamification/points. A technician scores only themself; the service role (back
 * office) scores anyone. Answers {status, data | error, limite} (see gamificacao.resposta_ok);
 * on any expected failure nothing but the caller's rate-limit token changes.
 */
create function public.gamificacao_registrar_acao(p_usuario_id uuid, p_acao text, p_chamado_id uuid, p_metadata jsonb default '{}')
returns jsonb
language plpgsql security definer set search_path = '' set timezone = 'America/Sao_Paulo' as $$
declare
  v_admissao jsonb := gamificacao.admitir('pontuacao');
  v_codigo text;
  v_mensagem text;
  v_dica text;
begin
  if v_admissao ? 'resposta' then
    return v_admissao -> 'resposta';
  end if;
  begin
    if auth.uid() is not null and auth.uid() <> p_usuario_id then
      perform gamificacao.falhar(403, 'SEM_PERMISSAO', 'Um técnico só pode registrar pontos para si mesmo.');
    end if;
    if p_usuario_id is null or p_acao is null or p_chamado_id is null then
      perform gamificacao.falhar(400, 'PARAMETRO_INVALIDO', 'usuario_id, acao e chamado_id são obrigatórios.');
    end if;
    return gamificacao.resposta_ok(
      gamificacao.registrar_acao(p_usuario_id, p_acao, p_chamado_id, coalesce(p_metadata, '{}'), now(), auth.uid()),
      v_admissao -> 'limite');
  exception when sqlstate 'GM000' then
    get stacked diagnostics v_codigo = message_text, v_mensagem = pg_exception_detail, v_dica = pg_exception_hint;
    return gamificacao.resposta_falha(v_codigo, v_mensagem, v_dica, v_admissao -> 'limite');
  end;
end;
$$;
comment on function public.gamificacao_registrar_acao(uuid, text, uuid, jsonb) is
  'POST /api/v1/gamification/points: scores an action for the caller (or anyone, for the service role); answers {status, data|error, limite}.';
revoke execute on function public.gamificacao_registrar_acao(uuid, text, uuid, jsonb) from public, anon;
grant execute on function public.gamificacao_registrar_acao(uuid, text, uuid, jsonb) to authenticated, service_role;

/** POST /api/v1/gamification/points/lote: scores up to 100 actions, each on its own; answers {status, data|error, limite}. */
create function public.gamificacao_registrar_acoes(p_acoes jsonb)
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
comment on function public.gamificacao_registrar_acoes(jsonb) is
  'POST /api/v1/gamification/points/lote: scores up to 100 actions, each on its own; answers {status, data|error, limite}.';
revoke execute on function public.gamificacao_registrar_acoes(jsonb) from public, anon;
grant execute on function public.gamificacao_registrar_acoes(jsonb) to authenticated, service_role;
