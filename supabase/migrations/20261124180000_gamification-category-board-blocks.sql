-- Gamification: category boards stored in blocks of positions, not one row per position.
--
-- Ranking a period's boards from its statistics takes about 3 s at 1,000,000 technicians; storing
-- them as one row per (category, technician) took ten times that. Measured on the bench's million
-- (EXPLAIN ANALYZE, the month: 1,111,313 board rows), a rewrite of the month's rows cost 0.9 s to
-- delete and 30.7 s to insert: two foreign-key checks a row (one of them a FOR KEY SHARE lock,
-- which dirties every technician's row), two b-tree entries a row, one of them at a random place,
-- and unique checks against the rows just deleted. The 5-minute job spent 44 s on the week and
-- the month with nothing changed.
--
-- A board is now stored as
-- - gamificacao.quadros_categorias_blocos: its entries in order, 256 positions a row (technicians,
--   values and samples as arrays), so a page of at most 100 entries reads one or two rows; and
-- - gamificacao.quadros_categorias_usuarios: the same entries in technician order, 256 a row, so a
--   technician's own position is one index probe and a search of one array.
-- The month's million rows become about 9,000, written in about 4 s beside the 3 s of ranking.
-- Both belong to the period's gamificacao.ranking_categorias_calculos row (deleted with it).
--
-- gamificacao.ranking_categorias is now a view with the columns of the table it replaces (and the
-- block number), so the daily snapshot and the tests read the boards row by row as before. Boards
-- no longer reference public.tecnicos: a deleted technician's entry stays until the next ranking
-- (every read joins the technicians, so it shows as a gap in the positions, as the cascade left
-- one before). The stored boards are dropped here; the next job run, or the first read of a
-- period, ranks them again.

drop table gamificacao.ranking_categorias;
delete from gamificacao.ranking_categorias_calculos;

/** Positions in one row of gamificacao.quadros_categorias_blocos and of gamificacao.quadros_categorias_usuarios. */
create function gamificacao.tamanho_bloco_quadro() returns integer
language sql immutable parallel safe set search_path = '' as $$
  select 256
$$;
comment on function gamificacao.tamanho_bloco_quadro() is 'Positions per stored row of a category board (a page of up to 100 entries spans at most two).';

create table gamificacao.quadros_categorias_blocos (
  categoria text not null references gamificacao.categorias (categoria),
  periodo text not null,
  periodo_inicio date not null,
  bloco integer not null check (bloco >= 0),
  usuarios uuid[] not null,
  valores numeric[] not null,
  amostras integer[] not null,
  primary key (categoria, periodo, periodo_inicio, bloco),
  foreign key (periodo, periodo_inicio) references gamificacao.ranking_categorias_calculos (periodo, periodo_inicio) on delete cascade,
  check (cardinality(usuarios) between 1 and gamificacao.tamanho_bloco_quadro() and cardinality(valores) = cardinality(usuarios) and cardinality(amostras) = cardinality(usuarios))
);
comment on table gamificacao.quadros_categorias_blocos is
  'Category boards in position order: row `bloco` holds positions bloco × 256 + 1 onwards, in order.';
comment on column gamificacao.quadros_categorias_blocos.usuarios is 'Technicians, in position order.';
comment on column gamificacao.quadros_categorias_blocos.valores is 'Their raw metric, rounded for display (see gamificacao.categorias).';
comment on column gamificacao.quadros_categorias_blocos.amostras is 'Their sample behind the metric.';
alter table gamificacao.quadros_categorias_blocos enable row level security;
revoke all on gamificacao.quadros_categorias_blocos from anon, authenticated, service_role;

create table gamificacao.quadros_categorias_usuarios (
  categoria text not null references gamificacao.categorias (categoria),
  periodo text not null,
  periodo_inicio date not null,
  primeiro uuid not null,
  usuarios uuid[] not null,
  posicoes integer[] not null,
  primary key (categoria, periodo, periodo_inicio, primeiro),
  foreign key (periodo, periodo_inicio) references gamificacao.ranking_categorias_calculos (periodo, periodo_inicio) on delete cascade,
  check (usuarios[1] = primeiro and cardinality(usuarios) between 1 and gamificacao.tamanho_bloco_quadro() and cardinality(posicoes) = cardinality(usuarios))
);
comment on table gamificacao.quadros_categorias_usuarios is
  'The category boards'' entries in technician order, 256 a row: where each technician stands, without a row per technician.';
comment on column gamificacao.quadros_categorias_usuarios.primeiro is 'The row''s first (smallest) technician id.';
comment on column gamificacao.quadros_categorias_usuarios.posicoes is 'Position of each technician of `usuarios`, in the same order.';
alter table gamificacao.quadros_categorias_usuarios enable row level security;
revoke all on gamificacao.quadros_categorias_usuarios from anon, authenticated, service_role;

create view gamificacao.ranking_categorias with (security_invoker = true) as
select b.categoria, b.periodo, b.periodo_inicio, b.bloco, (b.bloco * gamificacao.tamanho_bloco_quadro() + e.ordem)::integer as posicao,
  e.usuario_id, e.valor, e.amostras
from gamificacao.quadros_categorias_blocos b
cross join lateral unnest(b.usuarios, b.valores, b.amostras) with ordinality e (usuario_id, valor, amostras, ordem);
comment on view gamificacao.ranking_categorias is
  'Category boards of the current periods as last computed, one row per position (from gamificacao.quadros_categorias_blocos); filter on bloco to read a few positions.';
revoke all on gamificacao.ranking_categorias from anon, authenticated, service_role;

/**
 * The five category boards of one period ranked from every call scheduled in it, not from the
 * kept statistics (`p_media`, the period's rating mean C, computed from the calls): the reference
 * gamificacao.recalcular_quadros_categorias stores, with its own statement of the orderings.
 */
create function gamificacao.quadros_das_chamadas(p_periodo text, p_inicio date, p_media numeric)
returns table (categoria text, posicao bigint, usuario_id uuid, valor numeric, amostras bigint)
language sql stable set search_path = '' as $$
  with estatisticas as (
    select * from gamificacao.estatisticas_chamados(gamificacao.meia_noite_local(p_inicio),
      gamificacao.meia_noite_local(gamificacao.fim_periodo(p_periodo, p_inicio)))
  )
  select 'pontualidade',
    row_number() over (order by e.atrasos::numeric / e.checkins, e.checkins desc, e.usuario_id),
    e.usuario_id, round(100.0 * e.atrasos / e.checkins, 2), e.checkins
  from estatisticas e
  where e.checkins >= (select c.amostra_minima from gamificacao.categorias c where c.categoria = 'pontualidade')
  union all
  -- Bayesian average with m = 5 prior ratings at the period's mean C: a 5.0 from two calls does
  -- not beat a 4.9 from two hundred.
  select 'qualidade',
    row_number() over (order by (e.soma_estrelas + 5 * p_media) / (e.avaliacoes + 5) desc, e.avaliacoes desc, e.usuario_id),
    e.usuario_id, round((e.soma_estrelas + 5 * p_media) / (e.avaliacoes + 5), 2), e.avaliacoes
  from estatisticas e
  where e.avaliacoes >= (select c.amostra_minima from gamificacao.categorias c where c.categoria = 'qualidade')
  union all
  select 'velocidade',
    row_number() over (order by e.soma_minutos / e.cronometrados, e.cronometrados desc, e.usuario_id),
    e.usuario_id, round(e.soma_minutos / e.cronometrados, 1), e.cronometrados
  from estatisticas e
  where e.cronometrados >= (select c.amostra_minima from gamificacao.categorias c where c.categoria = 'velocidade')
  union all
  select 'atividade',
    row_number() over (order by e.concluidos desc, e.ultima_conclusao, e.usuario_id),
    e.usuario_id, e.concluidos, e.concluidos
  from estatisticas e
  where e.concluidos >= (select c.amostra_minima from gamificacao.categorias c where c.categoria = 'atividade')
  union all
  select 'confiabilidade',
    row_number() over (order by e.cancelados::numeric / e.aceitos, e.aceitos desc, e.usuario_id),
    e.usuario_id, round(100.0 * e.cancelados / e.aceitos, 2), e.aceitos
  from estatisticas e
  where e.aceitos >= (select c.amostra_minima from gamificacao.categorias c where c.categoria = 'confiabilidade')
$$;
comment on function gamificacao.quadros_das_chamadas(text, date, numeric) is
  'Reference: one period''s five category boards ranked from every call scheduled in it (gamificacao.estatisticas_chamados).';
revoke all on function gamificacao.quadros_das_chamadas(text, date, numeric) from public, anon, authenticated, service_role;

/**
 * Stores one period's five category boards in place of its blocks: ranked from the kept
 * statistics, or from every call when `p_das_chamadas` (the reference); `p_media` is the period's
 * rating mean C. The period's gamificacao.ranking_categorias_calculos row must exist. The boards
 * are ranked once and written twice, in position order and in technician order.
 */
create function gamificacao.gravar_quadros_categorias(p_periodo text, p_inicio date, p_media numeric, p_das_chamadas boolean) returns void
language plpgsql set search_path = '' as $$
begin
  delete from gamificacao.quadros_categorias_blocos b where b.periodo = p_periodo and b.periodo_inicio = p_inicio;
  delete from gamificacao.quadros_categorias_usuarios u where u.periodo = p_periodo and u.periodo_inicio = p_inicio;
  -- One statement, two sources: the branch whose flag is false is never run.
  with quadros as materialized (
    select q.* from gamificacao.quadros_das_estatisticas(p_periodo, p_inicio, p_media) q where not p_das_chamadas
    union all
    select q.* from gamificacao.quadros_das_chamadas(p_periodo, p_inicio, p_media) q where p_das_chamadas
  ), blocos as (
    insert into gamificacao.quadros_categorias_blocos (categoria, periodo, periodo_inicio, bloco, usuarios, valores, amostras)
    select q.categoria, p_periodo, p_inicio, (q.posicao - 1) / gamificacao.tamanho_bloco_quadro(),
      array_agg(q.usuario_id order by q.posicao), array_agg(q.valor order by q.posicao), array_agg(q.amostras::integer order by q.posicao)
    from quadros q
    group by q.categoria, (q.posicao - 1) / gamificacao.tamanho_bloco_quadro()
  )
  insert into gamificacao.quadros_categorias_usuarios (categoria, periodo, periodo_inicio, primeiro, usuarios, posicoes)
  select s.categoria, p_periodo, p_inicio, (array_agg(s.usuario_id order by s.usuario_id))[1],
    array_agg(s.usuario_id order by s.usuario_id), array_agg(s.posicao::integer order by s.usuario_id)
  from (
    select q.categoria, q.usuario_id, q.posicao,
      (row_number() over (partition by q.categoria order by q.usuario_id) - 1) / gamificacao.tamanho_bloco_quadro() as grupo
    from quadros q
  ) s
  group by s.categoria, s.grupo;
end;
$$;
comment on function gamificacao.gravar_quadros_categorias(text, date, numeric, boolean) is
  'Ranks one period''s five category boards (from the statistics, or from every call) and stores them in blocks, in position and in technician order.';

/** The entries at positions p_de to p_ate of a stored category board (the rows of one or two blocks; a page holds at most 100). */
create function gamificacao.entradas_quadro_categoria(p_categoria text, p_periodo text, p_inicio date, p_de integer, p_ate integer)
returns table (posicao integer, usuario_id uuid, valor numeric, amostras integer)
language sql stable rows 100 set search_path = '' as $$
  select r.posicao, r.usuario_id, r.valor, r.amostras
  from gamificacao.ranking_categorias r
  where r.categoria = p_categoria and r.periodo = p_periodo and r.periodo_inicio = p_inicio
    and r.bloco between (greatest(p_de, 1) - 1) / gamificacao.tamanho_bloco_quadro() and (greatest(p_ate, 1) - 1) / gamificacao.tamanho_bloco_quadro()
    and r.posicao between p_de and p_ate
$$;
comment on function gamificacao.entradas_quadro_categoria(text, text, date, integer, integer) is
  'Entries at positions p_de..p_ate of one stored category board, read from the blocks that hold them.';

/** A technician's position on a stored category board, or null when they are not on it. */
create function gamificacao.posicao_quadro_categoria(p_categoria text, p_periodo text, p_inicio date, p_usuario uuid) returns integer
language sql stable set search_path = '' as $$
  select u.posicoes[array_position(u.usuarios, p_usuario)]
  from gamificacao.quadros_categorias_usuarios u
  where u.categoria = p_categoria and u.periodo = p_periodo and u.periodo_inicio = p_inicio and u.primeiro <= p_usuario
  order by u.primeiro desc
  limit 1
$$;
comment on function gamificacao.posicao_quadro_categoria(text, text, date, uuid) is
  'A technician''s position on one stored category board (null when not ranked): one index probe and one array search.';

/**
 * Recomputes the five category boards of one period (kind and first day) from every call scheduled
 * in it, without the kept statistics: the reference the tests compare the job's boards with. Call
 * it through a function that holds the period's lock (see gamificacao.calcular_rankings_categorias).
 */
create or replace function gamificacao.recalcular_quadros_categorias(p_periodo text, p_inicio date, p_momento timestamptz) returns void
language plpgsql set search_path = '' as $$
declare
  v_media numeric;
begin
  -- The period's rating mean C first: the Bayesian average of every technician needs it. It is the
  -- mean of the period's ratings, one plain scan of the calls.
  select sum(ch.estrelas)::numeric / nullif(count(ch.estrelas), 0) into v_media from public.chamados ch
  where ch.agendado_para >= gamificacao.meia_noite_local(p_inicio)
    and ch.agendado_para < gamificacao.meia_noite_local(gamificacao.fim_periodo(p_periodo, p_inicio));

  insert into gamificacao.ranking_categorias_calculos as r (periodo, periodo_inicio, calculado_em, chamados_ate, media_estrelas)
  values (p_periodo, p_inicio, p_momento, (select max(ch.atualizado_em) from public.chamados ch), round(v_media, 4))
  on conflict (periodo, periodo_inicio) do update set
    calculado_em = excluded.calculado_em, chamados_ate = excluded.chamados_ate, media_estrelas = excluded.media_estrelas;
  perform gamificacao.gravar_quadros_categorias(p_periodo, p_inicio, v_media, true);
end;
$$;

/**
 * Ranks the five category boards of one period from its statistics and stores them in place of
 * the period's blocks (gamificacao.gravar_quadros_categorias). Callers hold the statistics lock and
 * have built and folded the period's statistics.
 */
create or replace function gamificacao.ordenar_quadros_categorias(p_periodo text, p_inicio date, p_momento timestamptz) returns void
language plpgsql set search_path = '' as $$
declare
  v_media numeric;
begin
  select sum(e.soma_estrelas)::numeric / nullif(sum(e.avaliacoes), 0) into v_media from gamificacao.estatisticas_categorias e
  where e.periodo = p_periodo and e.periodo_inicio = p_inicio;

  insert into gamificacao.ranking_categorias_calculos as r (periodo, periodo_inicio, calculado_em, chamados_ate, media_estrelas, versao_estatisticas)
  values (p_periodo, p_inicio, p_momento, (select max(ch.atualizado_em) from public.chamados ch), round(v_media, 4),
    (select e.versao from gamificacao.estatisticas_periodos e where e.periodo = p_periodo and e.periodo_inicio = p_inicio))
  on conflict (periodo, periodo_inicio) do update set
    calculado_em = excluded.calculado_em, chamados_ate = excluded.chamados_ate, media_estrelas = excluded.media_estrelas,
    versao_estatisticas = excluded.versao_estatisticas;
  perform gamificacao.gravar_quadros_categorias(p_periodo, p_inicio, v_media, false);
end;
$$;

/**
 * GET /rankings/categoria/{categoria}: a category board of a period (as last computed by the job;
 * computed now if the period has never been), entries with the raw metric `valor` and its sample.
 */
create or replace function public.gamificacao_ranking_categoria(p_categoria text, p_periodo text default 'mensal', p_limit integer default 20, p_offset integer default 0)
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
