-- Gamification: one home for the per-technician call statistics behind the category boards.
--
-- The sums a category board is ranked from (check-ins, late check-ins, ratings, timed calls and
-- their minutes, concluded calls, the latest completion, accepted and cancelled calls) were written
-- three times: in the reference recomputation from every call (gamificacao.recalcular_quadros_categorias),
-- in the build of a period's statistics and in the fold of the change log. A rule changed in one
-- and not the others would make the job's boards and the reference disagree without a test
-- noticing the cause. They now all read gamificacao.estatisticas_chamados(), which states the sums
-- once; the boards, positions and values are unchanged.
--
-- The function is plain SQL without a pinned search_path (every name in it is schema-qualified) so
-- that Postgres inlines it: the fold filters it on one technician, a grouping column, and the
-- planner pushes that filter down to the (tecnico_id, agendado_para) index range, as the fold's own
-- query did; the build and the reference aggregate the whole period. It runs as its caller (no
-- security definer) in the private schema, which no API role can use.

/**
 * Per-technician call statistics of the calls scheduled in [p_de, p_ate): one row for each
 * technician with at least one such call. Filter on usuario_id to count one technician (an index
 * range once inlined).
 */
create function gamificacao.estatisticas_chamados(p_de timestamptz, p_ate timestamptz)
returns table (
  usuario_id uuid, checkins bigint, atrasos bigint, avaliacoes bigint, soma_estrelas bigint, cronometrados bigint,
  soma_minutos numeric, concluidos bigint, ultima_conclusao timestamptz, aceitos bigint, cancelados bigint
)
language sql stable as $$
  select ch.tecnico_id,
    count(ch.checkin_em),
    count(*) filter (where ch.checkin_em > ch.agendado_para + interval '15 minutes'),
    count(ch.estrelas),
    coalesce(sum(ch.estrelas), 0),
    count(*) filter (where ch.status = 'concluido' and ch.checkout_em - ch.checkin_em between interval '5 minutes' and interval '8 hours'),
    coalesce(sum(extract(epoch from ch.checkout_em - ch.checkin_em) / 60)
      filter (where ch.status = 'concluido' and ch.checkout_em - ch.checkin_em between interval '5 minutes' and interval '8 hours'), 0),
    count(*) filter (where ch.status = 'concluido'),
    max(ch.checkout_em) filter (where ch.status = 'concluido'),
    count(ch.aceito_em),
    count(*) filter (where ch.status = 'cancelado' and ch.cancelado_por = 'tecnico' and ch.aceito_em is not null)
  from public.chamados ch
  where ch.agendado_para >= p_de and ch.agendado_para < p_ate
  group by ch.tecnico_id
$$;
comment on function gamificacao.estatisticas_chamados(timestamptz, timestamptz) is
  'Per-technician call statistics of the calls scheduled in [p_de, p_ate): the one definition the category statistics, their fold and the reference recomputation share.';
revoke all on function gamificacao.estatisticas_chamados(timestamptz, timestamptz) from public, anon, authenticated, service_role;

/**
 * Recomputes the five category boards of one period (kind and first day) from every call scheduled
 * in it, without the kept statistics: the reference the tests compare the job's boards with. Call
 * it through a function that holds the period's lock (see gamificacao.calcular_rankings_categorias).
 */
create or replace function gamificacao.recalcular_quadros_categorias(p_periodo text, p_inicio date, p_momento timestamptz) returns void
language plpgsql set search_path = '' as $$
declare
  v_de timestamptz := gamificacao.meia_noite_local(p_inicio);
  v_ate timestamptz := gamificacao.meia_noite_local(gamificacao.fim_periodo(p_periodo, p_inicio));
  v_media numeric;
begin
  delete from gamificacao.ranking_categorias where periodo = p_periodo and periodo_inicio = p_inicio;

  -- The period's rating mean C is computed first: the Bayesian average of every technician needs it.
  -- It is the mean of the period's ratings, not a per-technician sum, so it stays one plain scan
  -- of the calls rather than a second grouping of them.
  select sum(ch.estrelas)::numeric / nullif(count(ch.estrelas), 0) into v_media from public.chamados ch
  where ch.agendado_para >= v_de and ch.agendado_para < v_ate;

  insert into gamificacao.ranking_categorias (categoria, periodo, periodo_inicio, posicao, usuario_id, valor, amostras)
  with estatisticas as (
    select * from gamificacao.estatisticas_chamados(v_de, v_ate)
  )
  select 'pontualidade', p_periodo, p_inicio,
    row_number() over (order by e.atrasos::numeric / e.checkins, e.checkins desc, e.usuario_id),
    e.usuario_id, round(100.0 * e.atrasos / e.checkins, 2), e.checkins
  from estatisticas e
  where e.checkins >= (select c.amostra_minima from gamificacao.categorias c where c.categoria = 'pontualidade')
  union all
  -- Bayesian average with m = 5 prior ratings at the period's mean C: a 5.0 from two calls does
  -- not beat a 4.9 from two hundred.
  select 'qualidade', p_periodo, p_inicio,
    row_number() over (order by (e.soma_estrelas + 5 * v_media) / (e.avaliacoes + 5) desc, e.avaliacoes desc, e.usuario_id),
    e.usuario_id, round((e.soma_estrelas + 5 * v_media) / (e.avaliacoes + 5), 2), e.avaliacoes
  from estatisticas e
  where e.avaliacoes >= (select c.amostra_minima from gamificacao.categorias c where c.categoria = 'qualidade')
  union all
  select 'velocidade', p_periodo, p_inicio,
    row_number() over (order by e.soma_minutos / e.cronometrados, e.cronometrados desc, e.usuario_id),
    e.usuario_id, round(e.soma_minutos / e.cronometrados, 1), e.cronometrados
  from estatisticas e
  where e.cronometrados >= (select c.amostra_minima from gamificacao.categorias c where c.categoria = 'velocidade')
  union all
  select 'atividade', p_periodo, p_inicio,
    row_number() over (order by e.concluidos desc, e.ultima_conclusao, e.usuario_id),
    e.usuario_id, e.concluidos, e.concluidos
  from estatisticas e
  where e.concluidos >= (select c.amostra_minima from gamificacao.categorias c where c.categoria = 'atividade')
  union all
  select 'confiabilidade', p_periodo, p_inicio,
    row_number() over (order by e.cancelados::numeric / e.aceitos, e.aceitos desc, e.usuario_id),
    e.usuario_id, round(100.0 * e.cancelados / e.aceitos, 2), e.aceitos
  from estatisticas e
  where e.aceitos >= (select c.amostra_minima from gamificacao.categorias c where c.categoria = 'confiabilidade');

  insert into gamificacao.ranking_categorias_calculos as r (periodo, periodo_inicio, calculado_em, chamados_ate, media_estrelas)
  values (p_periodo, p_inicio, p_momento, (select max(ch.atualizado_em) from public.chamados ch), round(v_media, 4))
  on conflict (periodo, periodo_inicio) do update set
    calculado_em = excluded.calculado_em, chamados_ate = excluded.chamados_ate, media_estrelas = excluded.media_estrelas;
end;
$$;
comment on function gamificacao.recalcular_quadros_categorias(text, date, timestamptz) is
  'Reference: recomputes one period''s five category boards from every call scheduled in it (gamificacao.estatisticas_chamados), not from the kept statistics.';

/** Builds the statistics of one period from its calls, unless they are already kept; true when it built them. */
create or replace function gamificacao.construir_estatisticas_periodo(p_periodo text, p_inicio date, p_momento timestamptz) returns boolean
language plpgsql set search_path = '' as $$
begin
  insert into gamificacao.estatisticas_periodos (periodo, periodo_inicio, construido_em) values (p_periodo, p_inicio, p_momento)
  on conflict do nothing;
  if not found then
    return false;
  end if;
  insert into gamificacao.estatisticas_categorias (periodo, periodo_inicio, usuario_id, checkins, atrasos, avaliacoes, soma_estrelas,
    cronometrados, soma_minutos, concluidos, ultima_conclusao, aceitos, cancelados)
  select p_periodo, p_inicio, e.usuario_id, e.checkins, e.atrasos, e.avaliacoes, e.soma_estrelas,
    e.cronometrados, e.soma_minutos, e.concluidos, e.ultima_conclusao, e.aceitos, e.cancelados
  from gamificacao.estatisticas_chamados(gamificacao.meia_noite_local(p_inicio),
    gamificacao.meia_noite_local(gamificacao.fim_periodo(p_periodo, p_inicio))) e
  order by e.usuario_id;
  return true;
end;
$$;
comment on function gamificacao.construir_estatisticas_periodo(text, date, timestamptz) is
  'Builds one period''s category statistics from its calls (gamificacao.estatisticas_chamados) when they are not kept yet.';

/**
 * Folds the change log into the statistics: every (period, technician) the log names, in a period
 * whose statistics are kept, is recounted from that technician's calls in the period (and its row
 * removed when none is left). Returns how many rows were recounted. Each kept period the log names
 * is recounted in one statement, for the array of its changed technicians: a filter on a parameter
 * is pushed down through gamificacao.estatisticas_chamados to the (tecnico_id, agendado_para) index,
 * where a lateral reference would not be. The calls are read after the log rows are taken, so a
 * change committed in between is counted now and, its log row still there, again by the next
 * fold. Callers hold the statistics lock (see gamificacao.bloquear_estatisticas).
 */
create or replace function gamificacao.aplicar_chamados_alterados() returns integer
language plpgsql set search_path = '' as $$
declare
  v_grupos jsonb;
  v_grupo jsonb;
  v_periodo text;
  v_inicio date;
  v_de timestamptz;
  v_ate timestamptz;
  v_tecnicos uuid[];
  v_recontados integer := 0;
begin
  with alterados as (
    delete from gamificacao.chamados_alterados a returning a.tecnico_id, a.agendado_para
  ), periodos as (
    select e.periodo, e.periodo_inicio, gamificacao.meia_noite_local(e.periodo_inicio) as de,
      gamificacao.meia_noite_local(gamificacao.fim_periodo(e.periodo, e.periodo_inicio)) as ate
    from gamificacao.estatisticas_periodos e
  )
  select jsonb_agg(g order by g.periodo, g.periodo_inicio) into v_grupos
  from (
    select p.periodo, p.periodo_inicio, p.de, p.ate, array_agg(distinct a.tecnico_id order by a.tecnico_id) as tecnicos
    from alterados a
    join periodos p on a.agendado_para >= p.de and a.agendado_para < p.ate
    group by p.periodo, p.periodo_inicio, p.de, p.ate
  ) g;

  for v_grupo in select j.value from jsonb_array_elements(coalesce(v_grupos, '[]')) j loop
    v_periodo := v_grupo ->> 'periodo';
    v_inicio := (v_grupo ->> 'periodo_inicio')::date;
    v_de := (v_grupo ->> 'de')::timestamptz;
    v_ate := (v_grupo ->> 'ate')::timestamptz;
    v_tecnicos := array(select t.value::uuid from jsonb_array_elements_text(v_grupo -> 'tecnicos') t);

    insert into gamificacao.estatisticas_categorias as e (periodo, periodo_inicio, usuario_id, checkins, atrasos, avaliacoes, soma_estrelas,
      cronometrados, soma_minutos, concluidos, ultima_conclusao, aceitos, cancelados)
    select v_periodo, v_inicio, s.usuario_id, s.checkins, s.atrasos, s.avaliacoes, s.soma_estrelas,
      s.cronometrados, s.soma_minutos, s.concluidos, s.ultima_conclusao, s.aceitos, s.cancelados
    from gamificacao.estatisticas_chamados(v_de, v_ate) s
    where s.usuario_id = any (v_tecnicos)
    order by s.usuario_id
    on conflict (periodo, periodo_inicio, usuario_id) do update set
      checkins = excluded.checkins, atrasos = excluded.atrasos, avaliacoes = excluded.avaliacoes, soma_estrelas = excluded.soma_estrelas,
      cronometrados = excluded.cronometrados, soma_minutos = excluded.soma_minutos, concluidos = excluded.concluidos,
      ultima_conclusao = excluded.ultima_conclusao, aceitos = excluded.aceitos, cancelados = excluded.cancelados;

    -- A technician with no call left in the period leaves its statistics.
    delete from gamificacao.estatisticas_categorias e
    where e.periodo = v_periodo and e.periodo_inicio = v_inicio and e.usuario_id = any (v_tecnicos)
      and not exists (select 1 from public.chamados ch where ch.tecnico_id = e.usuario_id and ch.agendado_para >= v_de and ch.agendado_para < v_ate);

    update gamificacao.estatisticas_periodos e set versao = e.versao + 1 where e.periodo = v_periodo and e.periodo_inicio = v_inicio;
    v_recontados := v_recontados + cardinality(v_tecnicos);
  end loop;
  return v_recontados;
end;
$$;
comment on function gamificacao.aplicar_chamados_alterados() is
  'Folds the change log of calls into the category statistics of the periods that keep them; returns the (period, technician) rows recounted.';
