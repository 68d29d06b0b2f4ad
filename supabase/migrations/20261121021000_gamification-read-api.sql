-- Gamification: the read side of the API (rankings, history, badges).
--
-- One security-definer RPC per GET route of /api/v1/gamification/, called by the `api` edge
-- function with the caller's JWT. Rankings show every technician's public fields, so they read the
-- private totals directly; history and badges are the caller's own unless they are an
-- administrator or the service role. Each answers {status, data | error, limite} like
-- gamificacao_registrar_acao and spends one `consulta` rate-limit token (hence volatile).

-- Shared checks and pieces ---------------------------------------------------------------------

/** Fails with 400 PARAMETRO_INVALIDO unless limit is 1..100 and offset >= 0. */
create function gamificacao.validar_paginacao(p_limit integer, p_offset integer) returns void
language plpgsql stable set search_path = '' as $$
begin
  if p_limit is null or p_limit not between 1 and 100 then
    perform gamificacao.falhar(400, 'PARAMETRO_INVALIDO', 'limit deve ser um inteiro de 1 a 100.', jsonb_build_object('limit', p_limit));
  end if;
  if p_offset is null or p_offset < 0 then
    perform gamificacao.falhar(400, 'PARAMETRO_INVALIDO', 'offset deve ser um inteiro maior ou igual a 0.', jsonb_build_object('offset', p_offset));
  end if;
end;
$$;
comment on function gamificacao.validar_paginacao(integer, integer) is 'Checks limit (1..100) and offset (>= 0).';

/** Fails with 400 PARAMETRO_INVALIDO unless `p_periodo` is a ranking period kind. */
create function gamificacao.validar_periodo(p_periodo text) returns void
language plpgsql stable set search_path = '' as $$
begin
  if not exists (select 1 from gamificacao.periodos p where p.periodo = p_periodo) then
    perform gamificacao.falhar(400, 'PARAMETRO_INVALIDO', 'periodo deve ser semanal, mensal, anual ou geral.',
      jsonb_build_object('periodo', p_periodo, 'valores', (select jsonb_agg(p.periodo order by p.periodo) from gamificacao.periodos p)));
  end if;
end;
$$;
comment on function gamificacao.validar_periodo(text) is 'Checks a ranking period kind.';

/**
 * The period part of a board's meta: {periodo, periodo_inicio, periodo_fim} as local ISO instants.
 * `geral` runs from the first month anyone scored in to now.
 */
create function gamificacao.meta_periodo(p_periodo text, p_inicio date, p_momento timestamptz) returns jsonb
language sql stable set search_path = '' as $$
  select jsonb_build_object(
    'periodo', p_periodo,
    'periodo_inicio', case when p_periodo = 'geral'
      then gamificacao.meia_noite_local(coalesce(
        (select min(t.periodo_inicio) from gamificacao.totais_periodo t where t.periodo = 'mensal'),
        gamificacao.inicio_periodo('mensal', p_momento)))
      else gamificacao.meia_noite_local(p_inicio) end,
    'periodo_fim', case when p_periodo = 'geral' then p_momento
      else gamificacao.meia_noite_local(gamificacao.fim_periodo(p_periodo, p_inicio)) end)
$$;
comment on function gamificacao.meta_periodo(text, date, timestamptz) is 'periodo, periodo_inicio and periodo_fim of a board''s meta.';

/**
 * A page of a points board as ranking entries (posicao, usuario_id, nome, pontos, nivel,
 * badges_count, variacao_posicao, avatar_url). `variacao_posicao` = position in the last daily
 * snapshot of this period minus the position now (positive: moved up); 0 without a comparable
 * snapshot (new on the board, or since moved to another city or level).
 */
create function gamificacao.pagina_quadro(p_quadro text, p_periodo text, p_inicio date, p_chave text, p_limit integer, p_offset integer)
returns jsonb
language plpgsql stable set search_path = '' as $$
declare
  v_ids uuid[];
  v_pontos integer[];
begin
  if p_quadro = 'local' then
    select array_agg(t.usuario_id order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id),
      array_agg(t.pontos order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id)
    into v_ids, v_pontos
    from (select t.* from gamificacao.totais_periodo t
          where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.cidade_id = p_chave
          order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id limit p_limit offset p_offset) t;
  elsif p_quadro = 'nivel' then
    select array_agg(t.usuario_id order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id),
      array_agg(t.pontos order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id)
    into v_ids, v_pontos
    from (select t.* from gamificacao.totais_periodo t
          where t.periodo = p_periodo and t.periodo_inicio = p_inicio and t.nivel_ordem = p_chave::smallint
          order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id limit p_limit offset p_offset) t;
  else
    select array_agg(t.usuario_id order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id),
      array_agg(t.pontos order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id)
    into v_ids, v_pontos
    from (select t.* from gamificacao.totais_periodo t
          where t.periodo = p_periodo and t.periodo_inicio = p_inicio
          order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id limit p_limit offset p_offset) t;
  end if;

  return coalesce((
    select jsonb_agg(jsonb_build_object(
      'posicao', p_offset + e.n,
      'usuario_id', e.usuario_id,
      'nome', tc.nome,
      'pontos', e.pontos,
      'nivel', nv.nome,
      'badges_count', tc.badges_count,
      'variacao_posicao', coalesce(case p_quadro
        when 'local' then case when s.cidade_id = tc.cidade_id then s.posicao_local end
        when 'nivel' then case when s.nivel_ordem = nv.ordem then s.posicao_nivel end
        else s.posicao_nacional end - (p_offset + e.n), 0),
      'avatar_url', tc.avatar_url) order by e.n)
    from unnest(v_ids, v_pontos) with ordinality as e (usuario_id, pontos, n)
    join public.tecnicos tc on tc.id = e.usuario_id
    join public.niveis nv on nv.slug = tc.nivel
    left join gamificacao.ranking_snapshots s
      on s.periodo = p_periodo and s.periodo_inicio = p_inicio and s.usuario_id = e.usuario_id
  ), '[]');
end;
$$;
comment on function gamificacao.pagina_quadro(text, text, date, text, integer, integer) is
  'A page of a points board (local, nivel or nacional) as ranking entries with variacao_posicao.';

/**
 * The caller's own entry on a points board: {posicao, pontos, distancia_proximo}, or null when they
 * have no points on it (decisions.md, Gamification 6) or are not a technician.
 */
create function gamificacao.posicao_usuario(p_quadro text, p_periodo text, p_inicio date, p_chave text) returns jsonb
language plpgsql stable set search_path = '' as $$
declare
  v_total gamificacao.totais_periodo;
begin
  select * into v_total from gamificacao.totais_periodo t
  where t.usuario_id = auth.uid() and t.periodo = p_periodo and t.periodo_inicio = p_inicio;
  if not found
    or (p_quadro = 'local' and v_total.cidade_id <> p_chave)
    or (p_quadro = 'nivel' and v_total.nivel_ordem <> p_chave::smallint) then
    return null;
  end if;
  return jsonb_build_object(
    'posicao', gamificacao.posicao(p_quadro, p_periodo, p_inicio, p_chave, v_total.pontos, v_total.ultima_pontuacao_em, v_total.usuario_id),
    'pontos', v_total.pontos,
    'distancia_proximo', gamificacao.distancia_proximo(p_quadro, p_periodo, p_inicio, p_chave, v_total.pontos, v_total.ultima_pontuacao_em, v_total.usuario_id));
end;
$$;
comment on function gamificacao.posicao_usuario(text, text, date, text) is 'The caller''s position, points and distance to the next entry on a points board.';

/**
 * Resolves the `cidade` query value: a city id (sao-paulo-sp), or a city name matched without
 * regard to case (São Paulo). Without a value, the caller's home city. Fails with 404
 * CIDADE_NAO_ENCONTRADA, or 400 when a name matches cities in several states.
 */
create function gamificacao.resolver_cidade(p_cidade text) returns public.cidades
language plpgsql stable set search_path = '' as $$
declare
  v_cidade public.cidades;
  v_ids jsonb;
begin
  if p_cidade is null or btrim(p_cidade) = '' then
    select c.* into v_cidade from public.cidades c join public.tecnicos t on t.cidade_id = c.id where t.id = auth.uid();
    if not found then
      perform gamificacao.falhar(400, 'PARAMETRO_INVALIDO', 'Informe cidade (id ou nome): quem chama não é um técnico com cidade.');
    end if;
    return v_cidade;
  end if;
  select * into v_cidade from public.cidades c where c.id = p_cidade;
  if found then
    return v_cidade;
  end if;
  select jsonb_agg(c.id order by c.id) into v_ids from public.cidades c where lower(c.nome) = lower(btrim(p_cidade));
  if v_ids is null then
    perform gamificacao.falhar(404, 'CIDADE_NAO_ENCONTRADA', format('Cidade não encontrada: %s.', p_cidade), jsonb_build_object('cidade', p_cidade));
  end if;
  if jsonb_array_length(v_ids) > 1 then
    perform gamificacao.falhar(400, 'PARAMETRO_INVALIDO', format('Há mais de uma cidade chamada %s; use o id.', p_cidade), jsonb_build_object('cidades', v_ids));
  end if;
  select * into strict v_cidade from public.cidades c where c.id = v_ids ->> 0;
  return v_cidade;
end;
$$;
comment on function gamificacao.resolver_cidade(text) is 'Finds the city of a `cidade` query value (id or name), defaulting to the caller''s home city.';

/**
 * Whose data the caller may read: `p_usuario_id`, defaulting to the caller. A technician reads only
 * their own; administrators and the service role read anyone's. Fails 400/403/404.
 */
create function gamificacao.titular_autorizado(p_usuario_id uuid) returns uuid
language plpgsql stable set search_path = '' as $$
declare
  v_usuario uuid := coalesce(p_usuario_id, auth.uid());
begin
  if v_usuario is null then
    perform gamificacao.falhar(400, 'PARAMETRO_INVALIDO', 'usuario_id é obrigatório para a chave service_role.');
  end if;
  if v_usuario <> auth.uid() and not gamificacao.eh_admin() and not gamificacao.eh_servico() then
    perform gamificacao.falhar(403, 'SEM_PERMISSAO', 'Um técnico só vê o próprio histórico e os próprios badges.');
  end if;
  if not exists (select 1 from public.tecnicos t where t.id = v_usuario) then
    perform gamificacao.falhar(404, 'TECNICO_NAO_ENCONTRADO', 'Não há técnico com este usuario_id.', jsonb_build_object('usuario_id', v_usuario));
  end if;
  return v_usuario;
end;
$$;
comment on function gamificacao.titular_autorizado(uuid) is 'Resolves and authorises whose history or badges are read.';

-- Rankings -------------------------------------------------------------------------------------

/** GET /rankings/local: a city's points board, with the total from the city's buckets. */
create function public.gamificacao_ranking_local(p_cidade text default null, p_periodo text default 'mensal', p_limit integer default 20, p_offset integer default 0)
returns jsonb
language plpgsql volatile security definer set search_path = '' set timezone = 'America/Sao_Paulo' as $$
declare
  v_admissao jsonb := gamificacao.admitir('consulta');
  v_cidade public.cidades;
  v_inicio date;
  v_codigo text;
  v_mensagem text;
  v_dica text;
begin
  if v_admissao ? 'resposta' then
    return v_admissao -> 'resposta';
  end if;
  begin
    perform gamificacao.validar_periodo(p_periodo);
    perform gamificacao.validar_paginacao(p_limit, p_offset);
    v_cidade := gamificacao.resolver_cidade(p_cidade);
    v_inicio := gamificacao.inicio_periodo(p_periodo, now());
    return gamificacao.resposta_ok(jsonb_build_object(
      'ranking', gamificacao.pagina_quadro('local', p_periodo, v_inicio, v_cidade.id, p_limit, p_offset),
      'meta', gamificacao.meta_periodo(p_periodo, v_inicio, now()) || jsonb_build_object(
        'cidade', v_cidade.nome,
        'cidade_id', v_cidade.id,
        'uf', v_cidade.uf,
        'total_tecnicos', (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_cidades f
                           where f.periodo = p_periodo and f.periodo_inicio = v_inicio and f.cidade_id = v_cidade.id and f.escala = 1),
        'ultima_atualizacao', now()),
      'posicao_usuario', gamificacao.posicao_usuario('local', p_periodo, v_inicio, v_cidade.id)),
      v_admissao -> 'limite');
  exception when sqlstate 'GM000' then
    get stacked diagnostics v_codigo = message_text, v_mensagem = pg_exception_detail, v_dica = pg_exception_hint;
    return gamificacao.resposta_falha(v_codigo, v_mensagem, v_dica, v_admissao -> 'limite');
  end;
end;
$$;
comment on function public.gamificacao_ranking_local(text, text, integer, integer) is
  'GET /api/v1/gamification/rankings/local: a city''s points board; answers {status, data|error, limite}.';

/** GET /rankings/nacional: the national board for a period, optionally of one level (`p_nivel` slug). */
create function public.gamificacao_ranking_nacional(p_nivel text default null, p_periodo text default 'mensal', p_limit integer default 20, p_offset integer default 0)
returns jsonb
language plpgsql volatile security definer set search_path = '' set timezone = 'America/Sao_Paulo' as $$
declare
  v_admissao jsonb := gamificacao.admitir('consulta');
  v_nivel public.niveis;
  v_quadro text := 'nacional';
  v_chave text;
  v_inicio date;
  v_codigo text;
  v_mensagem text;
  v_dica text;
begin
  if v_admissao ? 'resposta' then
    return v_admissao -> 'resposta';
  end if;
  begin
    perform gamificacao.validar_periodo(p_periodo);
    perform gamificacao.validar_paginacao(p_limit, p_offset);
    if p_nivel is not null then
      select * into v_nivel from public.niveis n where n.slug = p_nivel;
      if not found then
        perform gamificacao.falhar(404, 'NIVEL_NAO_ENCONTRADO', format('Nível não encontrado: %s.', p_nivel),
          jsonb_build_object('categoria', p_nivel, 'valores', (select jsonb_agg(n.slug order by n.ordem) from public.niveis n)));
      end if;
      v_quadro := 'nivel';
      v_chave := v_nivel.ordem::text;
    end if;
    v_inicio := gamificacao.inicio_periodo(p_periodo, now());
    return gamificacao.resposta_ok(jsonb_build_object(
      'ranking', gamificacao.pagina_quadro(v_quadro, p_periodo, v_inicio, v_chave, p_limit, p_offset),
      'meta', gamificacao.meta_periodo(p_periodo, v_inicio, now()) || jsonb_build_object(
        'categoria', v_nivel.slug,
        'nivel', v_nivel.nome,
        'total_tecnicos', (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_ranking f
                           where f.periodo = p_periodo and f.periodo_inicio = v_inicio and f.nivel = coalesce(v_nivel.ordem, 0) and f.escala = 1),
        'ultima_atualizacao', now()),
      'posicao_usuario', gamificacao.posicao_usuario(v_quadro, p_periodo, v_inicio, v_chave)),
      v_admissao -> 'limite');
  exception when sqlstate 'GM000' then
    get stacked diagnostics v_codigo = message_text, v_mensagem = pg_exception_detail, v_dica = pg_exception_hint;
    return gamificacao.resposta_falha(v_codigo, v_mensagem, v_dica, v_admissao -> 'limite');
  end;
end;
$$;
comment on function public.gamificacao_ranking_nacional(text, text, integer, integer) is
  'GET /api/v1/gamification/rankings/nacional: the national points board, optionally of one level; answers {status, data|error, limite}.';

/**
 * GET /rankings/categoria/{categoria}: a category board of a period (as last computed by the job;
 * computed now if the period has never been), entries with the raw metric `valor` and its sample.
 */
create function public.gamificacao_ranking_categoria(p_categoria text, p_periodo text default 'mensal', p_limit integer default 20, p_offset integer default 0)
returns jsonb
language plpgsql volatile security definer set search_path = '' set timezone = 'America/Sao_Paulo' as $$
declare
  v_admissao jsonb := gamificacao.admitir('consulta');
  v_categoria gamificacao.categorias;
  v_calculo gamificacao.ranking_categorias_calculos;
  v_inicio date;
  v_coluna text;
  v_posicao integer;
  v_valor numeric;
  v_amostras integer;
  v_anterior numeric;
  v_codigo text;
  v_mensagem text;
  v_dica text;
begin
  if v_admissao ? 'resposta' then
    return v_admissao -> 'resposta';
  end if;
  begin
    select * into v_categoria from gamificacao.categorias c where c.categoria = p_categoria;
    if not found then
      perform gamificacao.falhar(404, 'CATEGORIA_NAO_ENCONTRADA', format('Categoria de ranking não encontrada: %s.', p_categoria),
        jsonb_build_object('categoria', p_categoria, 'valores', (select jsonb_agg(c.categoria order by c.categoria) from gamificacao.categorias c)));
    end if;
    perform gamificacao.validar_periodo(p_periodo);
    perform gamificacao.validar_paginacao(p_limit, p_offset);
    v_inicio := gamificacao.inicio_periodo(p_periodo, now());
    select * into v_calculo from gamificacao.ranking_categorias_calculos r where r.periodo = p_periodo and r.periodo_inicio = v_inicio;
    if not found then
      perform gamificacao.calcular_rankings_categorias(p_periodo, v_inicio, now());
      select * into strict v_calculo from gamificacao.ranking_categorias_calculos r where r.periodo = p_periodo and r.periodo_inicio = v_inicio;
    end if;

    v_posicao := gamificacao.posicao_quadro_categoria(p_categoria, p_periodo, v_inicio, auth.uid());
    if v_posicao is not null then
      -- The caller's entry and the one above it (none at position 1), from one read of their blocks.
      select max(e.valor) filter (where e.posicao = v_posicao), max(e.amostras) filter (where e.posicao = v_posicao),
        max(e.valor) filter (where e.posicao = v_posicao - 1)
      into v_valor, v_amostras, v_anterior
      from gamificacao.entradas_quadro_categoria(p_categoria, p_periodo, v_inicio, v_posicao - 1, v_posicao) e;
    end if;
    v_coluna := 'posicao_' || p_categoria;

    return gamificacao.resposta_ok(jsonb_build_object(
      'ranking', coalesce((
        select jsonb_agg(jsonb_build_object(
          'posicao', r.posicao,
          'usuario_id', r.usuario_id,
          'nome', tc.nome,
          'pontos', coalesce(t.pontos, 0),
          'nivel', nv.nome,
          'badges_count', tc.badges_count,
          'variacao_posicao', coalesce((to_jsonb(s) ->> v_coluna)::integer - r.posicao, 0),
          'avatar_url', tc.avatar_url,
          'valor', r.valor,
          'amostras', r.amostras) order by r.posicao)
        from gamificacao.entradas_quadro_categoria(p_categoria, p_periodo, v_inicio, p_offset + 1, p_offset + p_limit) r
        -- One index probe per entry of the page. The LIMITs keep each lookup a correlated
        -- subquery: as plain joins, PL/pgSQL's generic plan hashed the period's whole totals
        -- (757,034 rows, 330 ms a read at a million technicians) for a page of 20.
        cross join lateral (select tc.nome, tc.nivel, tc.badges_count, tc.avatar_url from public.tecnicos tc where tc.id = r.usuario_id limit 1) tc
        join public.niveis nv on nv.slug = tc.nivel
        left join lateral (select t.pontos from gamificacao.totais_periodo t
                           where t.usuario_id = r.usuario_id and t.periodo = p_periodo and t.periodo_inicio = v_inicio limit 1) t on true
        left join lateral (select s.* from gamificacao.ranking_snapshots s
                           where s.periodo = p_periodo and s.periodo_inicio = v_inicio and s.usuario_id = r.usuario_id limit 1) s on true), '[]'),
      'meta', gamificacao.meta_periodo(p_periodo, v_inicio, now()) || jsonb_build_object(
        'categoria', v_categoria.categoria,
        'descricao', v_categoria.descricao,
        'unidade', v_categoria.unidade,
        'ordem', v_categoria.ordem,
        'amostra_minima', v_categoria.amostra_minima,
        -- Positions run 1..N without gaps: the last block's first position plus its size, one index probe.
        'total_tecnicos', coalesce((select b.bloco * gamificacao.tamanho_bloco_quadro() + cardinality(b.usuarios)
                                    from gamificacao.quadros_categorias_blocos b
                                    where b.categoria = p_categoria and b.periodo = p_periodo and b.periodo_inicio = v_inicio
                                    order by b.bloco desc limit 1), 0),
        'ultima_atualizacao', v_calculo.calculado_em),
      'posicao_usuario', case when v_posicao is not null then jsonb_build_object(
        'posicao', v_posicao,
        'pontos', coalesce((select t.pontos from gamificacao.totais_periodo t
                            where t.usuario_id = auth.uid() and t.periodo = p_periodo and t.periodo_inicio = v_inicio), 0),
        'valor', v_valor,
        'amostras', v_amostras,
        'distancia_proximo', coalesce(abs(v_anterior - v_valor), 0)) end),
      v_admissao -> 'limite');
  exception when sqlstate 'GM000' then
    get stacked diagnostics v_codigo = message_text, v_mensagem = pg_exception_detail, v_dica = pg_exception_hint;
    return gamificacao.resposta_falha(v_codigo, v_mensagem, v_dica, v_admissao -> 'limite');
  end;
end;
$$;
comment on function public.gamificacao_ranking_categoria(text, text, integer, integer) is
  'GET /api/v1/gamification/rankings/categoria/{categoria}: a category board from call data; answers {status, data|error, limite}.';

-- History and badges ---------------------------------------------------------------------------

/**
 * GET /points/history: the technician's scored actions of the last `p_dias` days (newest first),
 * the period summary and pagination. media_pontos_dia divides by all days of the period, not only
 * the days with actions; acao_mais_frequente breaks ties alphabetically (null without actions).
 */
create function public.gamificacao_historico(p_usuario_id uuid default null, p_dias integer default 30, p_limit integer default 20, p_offset integer default 0)
returns jsonb
language plpgsql volatile security definer set search_path = '' set timezone = 'America/Sao_Paulo' as $$
declare
  v_admissao jsonb := gamificacao.admitir('consulta');
  v_usuario uuid;
  v_desde timestamptz;
  v_total integer;
  v_pontos bigint;
  v_codigo text;
  v_mensagem text;
  v_dica text;
begin
  if v_admissao ? 'resposta' then
    return v_admissao -> 'resposta';
  end if;
  begin
    if p_dias is null or p_dias not between 1 and 365 then
      perform gamificacao.falhar(400, 'PARAMETRO_INVALIDO', 'periodo deve ter a forma <N>d com N de 1 a 365 (ex.: 30d).', jsonb_build_object('dias', p_dias));
    end if;
    perform gamificacao.validar_paginacao(p_limit, p_offset);
    v_usuario := gamificacao.titular_autorizado(p_usuario_id);
    v_desde := now() - make_interval(days => p_dias);

    select count(*), coalesce(sum(h.pontos_final), 0) into v_total, v_pontos
    from public.historico_pontos h where h.usuario_id = v_usuario and h.data_acao > v_desde;

    return gamificacao.resposta_ok(jsonb_build_object(
      'historico', coalesce((
        select jsonb_agg(jsonb_build_object(
          'id', h.id,
          'acao', h.acao,
          'pontos_base', h.pontos_base,
          'pontos_final', h.pontos_final,
          'multiplicadores', jsonb_build_object('tier', h.multiplicador_tier, 'densidade', h.multiplicador_densidade, 'nivel', h.multiplicador_nivel),
          'chamado_id', h.chamado_id,
          'cidade', c.nome,
          'cidade_id', h.cidade_id,
          'data_acao', h.data_acao) order by h.data_acao desc, h.id desc)
        from (select * from public.historico_pontos h
              where h.usuario_id = v_usuario and h.data_acao > v_desde
              order by h.data_acao desc, h.id desc limit p_limit offset p_offset) h
        join public.cidades c on c.id = h.cidade_id), '[]'),
      'resumo', jsonb_build_object(
        'total_pontos_periodo', v_pontos,
        'total_acoes', v_total,
        'media_pontos_dia', round(v_pontos::numeric / p_dias, 2),
        'acao_mais_frequente', (
          select h.acao from public.historico_pontos h
          where h.usuario_id = v_usuario and h.data_acao > v_desde
          group by h.acao order by count(*) desc, h.acao limit 1)),
      'paginacao', jsonb_build_object('limit', p_limit, 'offset', p_offset, 'total', v_total, 'has_next', p_offset + p_limit < v_total),
      'periodo', jsonb_build_object('dias', p_dias, 'inicio', v_desde, 'fim', now())),
      v_admissao -> 'limite');
  exception when sqlstate 'GM000' then
    get stacked diagnostics v_codigo = message_text, v_mensagem = pg_exception_detail, v_dica = pg_exception_hint;
    return gamificacao.resposta_falha(v_codigo, v_mensagem, v_dica, v_admissao -> 'limite');
  end;
end;
$$;
comment on function public.gamificacao_historico(uuid, integer, integer, integer) is
  'GET /api/v1/gamification/points/history: history, summary and pagination; answers {status, data|error, limite}.';

/** GET /badges/user/{usuario_id}: the badges a technician holds, oldest first. */
create function public.gamificacao_badges_usuario(p_usuario_id uuid)
returns jsonb
language plpgsql volatile security definer set search_path = '' set timezone = 'America/Sao_Paulo' as $$
declare
  v_admissao jsonb := gamificacao.admitir('consulta');
  v_usuario uuid;
  v_codigo text;
  v_mensagem text;
  v_dica text;
begin
  if v_admissao ? 'resposta' then
    return v_admissao -> 'resposta';
  end if;
  begin
    v_usuario := gamificacao.titular_autorizado(p_usuario_id);
    return gamificacao.resposta_ok(jsonb_build_object(
      'usuario_id', v_usuario,
      'badges', coalesce((
        select jsonb_agg(jsonb_build_object(
          'codigo', b.codigo, 'nome', b.nome, 'categoria', b.categoria, 'descricao', b.descricao,
          'icone', b.icone, 'conquistado_em', ub.conquistado_em) order by ub.conquistado_em, b.codigo)
        from public.usuario_badges ub join public.badges b on b.codigo = ub.badge_codigo
        where ub.usuario_id = v_usuario), '[]')),
      v_admissao -> 'limite');
  exception when sqlstate 'GM000' then
    get stacked diagnostics v_codigo = message_text, v_mensagem = pg_exception_detail, v_dica = pg_exception_hint;
    return gamificacao.resposta_falha(v_codigo, v_mensagem, v_dica, v_admissao -> 'limite');
  end;
end;
$$;
comment on function public.gamificacao_badges_usuario(uuid) is
  'GET /api/v1/gamification/badges/user/{usuario_id}: badges held; answers {status, data|error, limite}.';

revoke execute on function public.gamificacao_ranking_local(text, text, integer, integer) from public, anon;
revoke execute on function public.gamificacao_ranking_nacional(text, text, integer, integer) from public, anon;
revoke execute on function public.gamificacao_ranking_categoria(text, text, integer, integer) from public, anon;
revoke execute on function public.gamificacao_historico(uuid, integer, integer, integer) from public, anon;
revoke execute on function public.gamificacao_badges_usuario(uuid) from public, anon;
grant execute on function public.gamificacao_ranking_local(text, text, integer, integer) to authenticated, service_role;
grant execute on function public.gamificacao_ranking_nacional(text, text, integer, integer) to authenticated, service_role;
grant execute on function public.gamificacao_ranking_categoria(text, text, integer, integer) to authenticated, service_role;
grant execute on function public.gamificacao_historico(uuid, integer, integer, integer) to authenticated, service_role;
grant execute on function public.gamificacao_badges_usuario(uuid) to authenticated, service_role;
