-- Gamification: the five category rankings, computed from call data.
--
-- pontualidade, qualidade, velocidade, atividade and confiabilidade rank technicians by what the
-- back office recorded on their calls (scheduled time, check-in/out, status, cancellations, stars)
-- in a calendar period, with a minimum sample so one lucky call cannot win a board. Sorting every
-- technician's call statistics on each request would not fit a 20 ms budget at 100k technicians,
-- so pg_cron recomputes the boards of the current periods into gamificacao.ranking_categorias,
-- only when calls changed: week and month every 5 minutes, year and all time hourly;
-- `meta.ultima_atualizacao` says when.

create table gamificacao.categorias (
  categoria text primary key,
  descricao text not null,
  unidade text not null,
  ordem text not null check (ordem in ('asc', 'desc')),
  amostra_minima integer not null check (amostra_minima >= 1)
);
comment on table gamificacao.categorias is 'The category rankings: what each measures and its minimum sample.';
comment on column gamificacao.categorias.descricao is 'What the metric (valor) is.';
comment on column gamificacao.categorias.unidade is 'Unit of valor.';
comment on column gamificacao.categorias.ordem is 'asc: lower valor ranks higher; desc: higher valor ranks higher.';
comment on column gamificacao.categorias.amostra_minima is 'Least sample (amostras) a technician needs in the period to be ranked.';

insert into gamificacao.categorias (categoria, descricao, unidade, ordem, amostra_minima) values
  ('pontualidade', 'Percentual de check-ins mais de 15 min depois do horário agendado.', 'percentual', 'asc', 5),
  ('qualidade', 'Média bayesiana das estrelas: (v·R + 5·C) / (v + 5), C = média de todas as avaliações do período.', 'estrelas', 'desc', 3),
  ('velocidade', 'Tempo médio do check-in ao check-out nos chamados concluídos (durações fora de 5 min a 8 h são descartadas).', 'minutos', 'asc', 5),
  ('atividade', 'Chamados concluídos.', 'chamados', 'desc', 1),
  ('confiabilidade', 'Percentual dos chamados aceitos que o próprio técnico cancelou (cancelamentos do cliente não contam).', 'percentual', 'asc', 5);

create table gamificacao.ranking_categorias (
  categoria text not null references gamificacao.categorias (categoria),
  periodo text not null,
  periodo_inicio date not null,
  posicao integer not null,
  usuario_id uuid not null references public.tecnicos (id) on delete cascade,
  valor numeric not null,
  amostras integer not null,
  primary key (categoria, periodo, periodo_inicio, posicao),
  unique (categoria, periodo, periodo_inicio, usuario_id)
);
comment on table gamificacao.ranking_categorias is 'Category boards of the current periods, as last computed by the job.';
comment on column gamificacao.ranking_categorias.posicao is 'Position: the metric, then the larger sample, then (atividade) the earlier last completion, then usuario_id.';
comment on column gamificacao.ranking_categorias.valor is 'The raw metric, rounded for display (see gamificacao.categorias).';
comment on column gamificacao.ranking_categorias.amostras is 'Sample behind the metric: check-ins, ratings, timed calls, concluded calls or accepted calls.';

create table gamificacao.ranking_categorias_calculos (
  periodo text not null,
  periodo_inicio date not null,
  calculado_em timestamptz not null,
  chamados_ate timestamptz,
  media_estrelas numeric,
  primary key (periodo, periodo_inicio)
);
comment on table gamificacao.ranking_categorias_calculos is 'When each period''s category boards were last computed.';
comment on column gamificacao.ranking_categorias_calculos.chamados_ate is 'Latest chamados.atualizado_em seen by that computation (the job skips work until a call changes).';
comment on column gamificacao.ranking_categorias_calculos.media_estrelas is 'C of the Bayesian average: mean of all ratings in the period.';

/** Recomputes the five category boards of one period (kind and first day) from the calls scheduled in it. */
create function gamificacao.calcular_rankings_categorias(p_periodo text, p_inicio date, p_momento timestamptz) returns void
language plpgsql set search_path = '' as $$
declare
  v_de timestamptz := gamificacao.meia_noite_local(p_inicio);
  v_ate timestamptz := gamificacao.meia_noite_local(gamificacao.fim_periodo(p_periodo, p_inicio));
  v_media numeric;
begin
  delete from gamificacao.ranking_categorias where periodo = p_periodo and periodo_inicio = p_inicio;

  -- The period's rating mean C is computed first: the Bayesian average of every technician needs it.
  select sum(ch.estrelas)::numeric / nullif(count(ch.estrelas), 0) into v_media from public.chamados ch
  where ch.agendado_para >= v_de and ch.agendado_para < v_ate;

  insert into gamificacao.ranking_categorias (categoria, periodo, periodo_inicio, posicao, usuario_id, valor, amostras)
  with estatisticas as (
    select ch.tecnico_id as usuario_id,
      count(ch.checkin_em) as checkins,
      count(*) filter (where ch.checkin_em > ch.agendado_para + interval '15 minutes') as atrasos,
      count(ch.estrelas) as avaliacoes,
      coalesce(sum(ch.estrelas), 0) as soma_estrelas,
      count(*) filter (where ch.status = 'concluido' and ch.checkout_em - ch.checkin_em between interval '5 minutes' and interval '8 hours') as cronometrados,
      coalesce(sum(extract(epoch from ch.checkout_em - ch.checkin_em) / 60)
        filter (where ch.status = 'concluido' and ch.checkout_em - ch.checkin_em between interval '5 minutes' and interval '8 hours'), 0) as soma_minutos,
      count(*) filter (where ch.status = 'concluido') as concluidos,
      max(ch.checkout_em) filter (where ch.status = 'concluido') as ultima_conclusao,
      count(ch.aceito_em) as aceitos,
      count(*) filter (where ch.status = 'cancelado' and ch.cancelado_por = 'tecnico' and ch.aceito_em is not null) as cancelados
    from public.chamados ch
    where ch.agendado_para >= v_de and ch.agendado_para < v_ate
    group by ch.tecnico_id
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
comment on function gamificacao.calcular_rankings_categorias(text, date, timestamptz) is
  'Recomputes the five category boards of one period from the calls scheduled in it.';

/**
 * Recomputes the category boards of the current period of each kind in `p_periodos` (null: every
 * kind), skipping a period whose last computation already saw the latest call change unless
 * `p_forcar`. Returns how many periods it computed. A deleted call does not move
 * chamados.atualizado_em; the daily snapshot forces a run.
 */
create function gamificacao.atualizar_rankings_categorias(
  p_momento timestamptz default now(), p_forcar boolean default false, p_periodos text[] default null
) returns integer
language plpgsql set search_path = '' as $$
declare
  v_marca timestamptz := (select max(ch.atualizado_em) from public.chamados ch);
  v_periodo text;
  v_inicio date;
  v_calculados integer := 0;
begin
  for v_periodo in select p.periodo from gamificacao.periodos p where p_periodos is null or p.periodo = any (p_periodos) order by p.periodo loop
    v_inicio := gamificacao.inicio_periodo(v_periodo, p_momento);
    if p_forcar or not exists (
      select 1 from gamificacao.ranking_categorias_calculos r
      where r.periodo = v_periodo and r.periodo_inicio = v_inicio and r.chamados_ate is not distinct from v_marca
    ) then
      perform gamificacao.calcular_rankings_categorias(v_periodo, v_inicio, p_momento);
      v_calculados := v_calculados + 1;
    end if;
  end loop;
  return v_calculados;
end;
$$;
comment on function gamificacao.atualizar_rankings_categorias(timestamptz, boolean, text[]) is
  'Recomputes the current periods'' category boards when calls changed since the last run (or always, when forced).';

-- The week and month boards follow the calls closely; the year and all-time boards read every call
-- of the period, so they are refreshed hourly (meta.ultima_atualizacao tells the client).
select cron.schedule('gamificacao-rankings-categorias', '*/5 * * * *',
  $$select gamificacao.atualizar_rankings_categorias(now(), false, array['semanal', 'mensal'])$$);
select cron.schedule('gamificacao-rankings-categorias-longos', '20 * * * *',
  $$select gamificacao.atualizar_rankings_categorias(now(), false, array['anual', 'geral'])$$);
