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
alter table gamificacao.categorias enable row level security;

insert into gamificacao.categorias (categoria, descricao, unidade, ordem, amostra_minima) values
  ('pontualidade', 'Percentual de check-ins mais de 15 min depois do horário agendado.', 'percentual', 'asc', 5),
  ('qualidade', 'Média bayesiana das estrelas: (v·R + 5·C) / (v + 5), C = média de todas as avaliações do período.', 'estrelas', 'desc', 3),
  ('velocidade', 'Tempo médio do check-in ao check-out nos chamados concluídos (durações fora de 5 min a 8 h são descartadas).', 'minutos', 'asc', 5),
  ('atividade', 'Chamados concluídos.', 'chamados', 'desc', 1),
  ('confiabilidade', 'Percentual dos chamados aceitos que o próprio técnico cancelou (cancelamentos do cliente não contam).', 'percentual', 'asc', 5);

create table gamificacao.ranking_categorias_calculos (
  periodo text not null,
  periodo_inicio date not null,
  calculado_em timestamptz not null,
  chamados_ate timestamptz,
  media_estrelas numeric,
  primary key (periodo, periodo_inicio),
  versao_estatisticas bigint
);
comment on table gamificacao.ranking_categorias_calculos is 'When each period''s category boards were last computed.';
comment on column gamificacao.ranking_categorias_calculos.chamados_ate is 'Latest chamados.atualizado_em seen by that computation (the job skips work until a call changes).';
comment on column gamificacao.ranking_categorias_calculos.media_estrelas is 'C of the Bayesian average: mean of all ratings in the period.';
alter table gamificacao.ranking_categorias_calculos enable row level security;
comment on column gamificacao.ranking_categorias_calculos.versao_estatisticas is
  'estatisticas_periodos.versao the boards were ranked from (the job skips the period until it moves).';

/**
 * Recomputes the five category boards of one period (kind and first day) from every call scheduled
 * in it, without the kept statistics: the reference the tests compare the job's boards with. Call
 * it through a function that holds the period's lock (see gamificacao.calcular_rankings_categorias).
 */
create function gamificacao.recalcular_quadros_categorias(p_periodo text, p_inicio date, p_momento timestamptz) returns void
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
comment on function gamificacao.recalcular_quadros_categorias(text, date, timestamptz) is
  'Reference: recomputes one period''s five category boards from every call scheduled in it (gamificacao.estatisticas_chamados), not from the kept statistics.';

/**
 * Computes the category boards of the current period of each kind in `p_periodos` (null: every
 * kind) when a call changed since they were last ranked (the latest chamados.atualizado_em moved,
 * or the fold recounted one of the period's technicians: a deleted call), or every one
 * when `p_forcar`. Returns how many periods it ranked. The statistics of earlier periods of those
 * kinds are dropped.
 */
create function gamificacao.atualizar_rankings_categorias(
  p_momento timestamptz default now(), p_forcar boolean default false, p_periodos text[] default null
) returns integer
language plpgsql set search_path = '' as $$
declare
  v_marca timestamptz;
  v_periodo text;
  v_inicio date;
  v_calculados integer := 0;
begin
  perform gamificacao.bloquear_estatisticas();
  perform gamificacao.aplicar_chamados_alterados();
  v_marca := (select max(ch.atualizado_em) from public.chamados ch);
  for v_periodo in select p.periodo from gamificacao.periodos p where p_periodos is null or p.periodo = any (p_periodos) order by p.periodo loop
    v_inicio := gamificacao.inicio_periodo(v_periodo, p_momento);
    delete from gamificacao.estatisticas_periodos e where e.periodo = v_periodo and e.periodo_inicio < v_inicio;
    if gamificacao.construir_estatisticas_periodo(v_periodo, v_inicio, p_momento) or p_forcar or not exists (
      select 1 from gamificacao.ranking_categorias_calculos r
      join gamificacao.estatisticas_periodos e on e.periodo = r.periodo and e.periodo_inicio = r.periodo_inicio
      where r.periodo = v_periodo and r.periodo_inicio = v_inicio and r.versao_estatisticas = e.versao
        and r.chamados_ate is not distinct from v_marca
    ) then
      perform gamificacao.calcular_rankings_categorias(v_periodo, v_inicio, p_momento);
      v_calculados := v_calculados + 1;
    end if;
  end loop;
  return v_calculados;
end;
$$;
comment on function gamificacao.atualizar_rankings_categorias(timestamptz, boolean, text[]) is
  'Ranks the current periods'' category boards when their statistics changed since the last run (or always, when forced).';

-- The week and month boards follow the calls closely; the year and all-time boards read every call
-- of the period, so they are refreshed hourly (meta.ultima_atualizacao tells the client).
select cron.schedule('gamificacao-rankings-categorias', '*/5 * * * *',
  $$select gamificacao.atualizar_rankings_categorias(now(), false, array['semanal', 'mensal'])$$);
select cron.schedule('gamificacao-rankings-categorias-longos', '20 * * * *',
  $$select gamificacao.atualizar_rankings_categorias(now(), false, array['anual', 'geral'])$$);
/**
 * Computes the five category boards of one period (kind and first day): folds the change log,
 * builds the period's statistics if they are not kept yet, and ranks the boards. Runs for the
 * same statistics wait for each other.
 */
create function gamificacao.calcular_rankings_categorias(p_periodo text, p_inicio date, p_momento timestamptz) returns void
language plpgsql set search_path = '' as $$
begin
  perform gamificacao.bloquear_estatisticas();
  perform pg_advisory_xact_lock(hashtextextended(format('gamificacao.ranking_categorias/%s/%s', p_periodo, p_inicio), 0));
  perform gamificacao.aplicar_chamados_alterados();
  perform gamificacao.construir_estatisticas_periodo(p_periodo, p_inicio, p_momento);
  perform gamificacao.ordenar_quadros_categorias(p_periodo, p_inicio, p_momento);
end;
$$;
comment on function gamificacao.calcular_rankings_categorias(text, date, timestamptz) is
  'Computes one period''s five category boards from its statistics (kept up to date from the change log of calls); concurrent runs wait for each other.';
-- Statistics kept up to date -----------------------------------------------------------------------
-- The per-technician sums behind the category boards live in gamificacao.estatisticas_categorias,
-- one row per (period, technician), and move with the calls:
--
-- - A statement trigger on public.chamados writes each changed call's technician and scheduled
--   time (before and after the change) to gamificacao.chamados_alterados, the change log. It adds
--   one small insert per changed call to the back office's writes; scoring never writes calls.
-- - Each run first folds the log into the statistics (gamificacao.aplicar_chamados_alterados):
--   every (period, technician) the log names is recounted from that technician's calls in the
--   period through the (tecnico_id, agendado_para) index, so the work follows the changes, and a
--   deleted or reassigned call is counted too.
-- - A period's statistics are built from its calls the first time it is computed (a new week
--   starts nearly empty; the year and all time once), and dropped once its period is over.
-- - The boards are then ranked from the statistics (one row per technician instead of their calls),
--   only for a period whose calls changed since its boards were last ranked (or when forced).
--
-- gamificacao.recalcular_quadros_categorias, the recomputation from the calls, is the reference the
-- tests compare against. Concurrency: folding and ranking take one transaction-level advisory lock
-- first (then the period's own lock), so two folds never recount the same technician from
-- different snapshots, and the upserts cannot write an older count over a newer one.

create table gamificacao.chamados_alterados (
  tecnico_id uuid not null,
  agendado_para timestamptz not null
);
comment on table gamificacao.chamados_alterados is
  'Change log of public.chamados for the category statistics: one row per changed call and side of the change; emptied by gamificacao.aplicar_chamados_alterados().';
comment on column gamificacao.chamados_alterados.tecnico_id is 'Technician of the call (before or after the change).';
comment on column gamificacao.chamados_alterados.agendado_para is 'Scheduled time of the call (before or after the change): which periods it counts in.';
alter table gamificacao.chamados_alterados enable row level security;
revoke all on gamificacao.chamados_alterados from anon, authenticated, service_role;
create table gamificacao.estatisticas_periodos (
  periodo text not null,
  periodo_inicio date not null,
  versao bigint not null default 1,
  construido_em timestamptz not null,
  primary key (periodo, periodo_inicio)
);
comment on table gamificacao.estatisticas_periodos is
  'Periods whose category statistics gamificacao.estatisticas_categorias keeps up to date.';
comment on column gamificacao.estatisticas_periodos.versao is 'Incremented whenever a fold of the change log recounts a technician of the period.';
comment on column gamificacao.estatisticas_periodos.construido_em is 'When the statistics were built from the period''s calls.';
alter table gamificacao.estatisticas_periodos enable row level security;
revoke all on gamificacao.estatisticas_periodos from anon, authenticated, service_role;
create table gamificacao.estatisticas_categorias (
  periodo text not null,
  periodo_inicio date not null,
  usuario_id uuid not null,
  checkins bigint not null,
  atrasos bigint not null,
  avaliacoes bigint not null,
  soma_estrelas bigint not null,
  cronometrados bigint not null,
  soma_minutos numeric not null,
  concluidos bigint not null,
  ultima_conclusao timestamptz,
  aceitos bigint not null,
  cancelados bigint not null,
  primary key (periodo, periodo_inicio, usuario_id),
  foreign key (periodo, periodo_inicio) references gamificacao.estatisticas_periodos (periodo, periodo_inicio) on delete cascade
);
comment on table gamificacao.estatisticas_categorias is
  'Per-technician call statistics of a period (a row for each technician with calls scheduled in it), from which the category boards are ranked.';
comment on column gamificacao.estatisticas_categorias.checkins is 'Calls with a check-in.';
comment on column gamificacao.estatisticas_categorias.atrasos is 'Check-ins more than 15 minutes after the scheduled time.';
comment on column gamificacao.estatisticas_categorias.avaliacoes is 'Rated calls.';
comment on column gamificacao.estatisticas_categorias.soma_estrelas is 'Sum of the ratings.';
comment on column gamificacao.estatisticas_categorias.cronometrados is 'Concluded calls lasting 5 minutes to 8 hours from check-in to check-out.';
comment on column gamificacao.estatisticas_categorias.soma_minutos is 'Their summed duration in minutes.';
comment on column gamificacao.estatisticas_categorias.concluidos is 'Concluded calls.';
comment on column gamificacao.estatisticas_categorias.ultima_conclusao is 'Latest check-out of a concluded call.';
comment on column gamificacao.estatisticas_categorias.aceitos is 'Accepted calls.';
comment on column gamificacao.estatisticas_categorias.cancelados is 'Accepted calls the technician cancelled.';
alter table gamificacao.estatisticas_categorias enable row level security;
revoke all on gamificacao.estatisticas_categorias from anon, authenticated, service_role;
/**
 * Takes the locks every fold, build and ranking of the category statistics holds until commit: a
 * ROW SHARE lock on public.tecnicos first, the table a truncation of the technicians' data starts
 * with (truncate public.tecnicos ... cascade, as the tests' cleanup does), so a run that meets one
 * waits before it holds anything the truncation also needs; then the advisory lock that lets one
 * run at a time fold the change log.
 */
create function gamificacao.bloquear_estatisticas() returns void
language plpgsql set search_path = '' as $$
begin
  lock table public.tecnicos in row share mode;
  perform pg_advisory_xact_lock(hashtextextended('gamificacao.estatisticas_categorias', 0));
end;
$$;
comment on function gamificacao.bloquear_estatisticas() is 'Serialises folds, builds and rankings of the category statistics (ROW SHARE on public.tecnicos, then an advisory lock).';
-- The change log -------------------------------------------------------------------------------

/**
 * Trigger (per statement, on insert, update and delete of public.chamados): logs the technician
 * and scheduled time of every changed call, before and after. An update that leaves every column
 * the statistics read unchanged is not logged. Security definer: the back office and
 * administrators who change calls have no access to the private log.
 */
create function gamificacao.registrar_chamados_alterados() returns trigger
language plpgsql security definer set search_path = '' as $$
begin
  if tg_op = 'INSERT' then
    insert into gamificacao.chamados_alterados (tecnico_id, agendado_para) select n.tecnico_id, n.agendado_para from novos n;
  elsif tg_op = 'DELETE' then
    insert into gamificacao.chamados_alterados (tecnico_id, agendado_para) select a.tecnico_id, a.agendado_para from antigos a;
  else
    insert into gamificacao.chamados_alterados (tecnico_id, agendado_para)
    select l.tecnico_id, l.agendado_para
    from novos n
    join antigos a on a.id = n.id
    cross join lateral (values (a.tecnico_id, a.agendado_para), (n.tecnico_id, n.agendado_para)) l (tecnico_id, agendado_para)
    where (a.tecnico_id, a.agendado_para, a.aceito_em, a.checkin_em, a.checkout_em, a.status, a.cancelado_por, a.estrelas)
      is distinct from (n.tecnico_id, n.agendado_para, n.aceito_em, n.checkin_em, n.checkout_em, n.status, n.cancelado_por, n.estrelas);
  end if;
  return null;
end;
$$;
comment on function gamificacao.registrar_chamados_alterados() is
  'Statement trigger: logs changed calls (technician and scheduled time, old and new) to gamificacao.chamados_alterados.';
create trigger chamados_alterados_insert after insert on public.chamados
  referencing new table as novos for each statement execute function gamificacao.registrar_chamados_alterados();
create trigger chamados_alterados_update after update on public.chamados
  referencing old table as antigos new table as novos for each statement execute function gamificacao.registrar_chamados_alterados();
create trigger chamados_alterados_delete after delete on public.chamados
  referencing old table as antigos for each statement execute function gamificacao.registrar_chamados_alterados();
/**
 * Forgets every period's category statistics and the change log; each period is rebuilt from its
 * calls the next time it is computed. Needed after a bulk load of calls that bypassed the log (the
 * bench disables the trigger) or a truncation of public.chamados. It takes no lock of its own: a
 * truncation already holds public.chamados, which every fold reads.
 */
create function gamificacao.reconstruir_estatisticas_categorias() returns void
language plpgsql set search_path = '' as $$
begin
  delete from gamificacao.estatisticas_periodos;
  delete from gamificacao.chamados_alterados;
end;
$$;
comment on function gamificacao.reconstruir_estatisticas_categorias() is
  'Drops all category statistics and the change log, so each period is rebuilt from its calls when next computed.';
/** Trigger (on truncate of public.chamados): the statistics match no call any more. Security definer, as the change log's trigger. */
create function gamificacao.esquecer_estatisticas_categorias() returns trigger
language plpgsql security definer set search_path = '' as $$
begin
  perform gamificacao.reconstruir_estatisticas_categorias();
  return null;
end;
$$;
comment on function gamificacao.esquecer_estatisticas_categorias() is 'Truncate trigger: drops the category statistics (see reconstruir_estatisticas_categorias).';
create trigger chamados_truncate_estatisticas after truncate on public.chamados
  for each statement execute function gamificacao.esquecer_estatisticas_categorias();
-- Statistics -----------------------------------------------------------------------------------

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
create function gamificacao.aplicar_chamados_alterados() returns integer
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
/** Builds the statistics of one period from its calls, unless they are already kept; true when it built them. */
create function gamificacao.construir_estatisticas_periodo(p_periodo text, p_inicio date, p_momento timestamptz) returns boolean
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
-- Ranking --------------------------------------------------------------------------------------

/**
 * The five category boards of one period ranked from its statistics: the ordering, rounding and
 * Bayesian mean (`p_media`, the period's rating mean C) of gamificacao.recalcular_quadros_categorias,
 * over one row per technician.
 */
create function gamificacao.quadros_das_estatisticas(p_periodo text, p_inicio date, p_media numeric)
returns table (categoria text, posicao bigint, usuario_id uuid, valor numeric, amostras bigint)
language sql stable set search_path = '' as $$
  with estatisticas as (
    select * from gamificacao.estatisticas_categorias e where e.periodo = p_periodo and e.periodo_inicio = p_inicio
  )
  select 'pontualidade',
    row_number() over (order by e.atrasos::numeric / e.checkins, e.checkins desc, e.usuario_id),
    e.usuario_id, round(100.0 * e.atrasos / e.checkins, 2), e.checkins
  from estatisticas e
  where e.checkins >= (select c.amostra_minima from gamificacao.categorias c where c.categoria = 'pontualidade')
  union all
  -- Bayesian average with m = 5 prior ratings at the period's mean C.
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
comment on function gamificacao.quadros_das_estatisticas(text, date, numeric) is
  'One period''s five category boards ranked from its statistics (positions, values and samples as recalcular_quadros_categorias computes them).';
/**
 * Ranks the five category boards of one period from its statistics and stores them in place of
 * the period's blocks (gamificacao.gravar_quadros_categorias). Callers hold the statistics lock and
 * have built and folded the period's statistics.
 */
create function gamificacao.ordenar_quadros_categorias(p_periodo text, p_inicio date, p_momento timestamptz) returns void
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
comment on function gamificacao.ordenar_quadros_categorias(text, date, timestamptz) is
  'Ranks one period''s five category boards from its statistics (gamificacao.estatisticas_categorias).';
-- gamificacao.estatisticas_chamados() states the sums a category board is ranked from once; the
-- reference recomputation, the build of a period's statistics and the fold of the change log all
-- read it. It is plain SQL without a pinned search_path (every name in it is schema-qualified) so
-- that Postgres inlines it: the fold filters it on one technician, and the planner pushes that
-- filter down to the (tecnico_id, agendado_para) index range. It runs as its caller (no security
-- definer) in the private schema, which no API role can use.

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
