-- Gamification: category boards from statistics kept up to date, not from every call each run.
--
-- The 5-minute job recomputed a period's five category boards by aggregating every call scheduled
-- in it (at 1,000,000 technicians the week and the month hold 1.6 million calls; issue 18 measured
-- the job's work at 52.7 s against a goal of 30 s), and the hourly job and the daily snapshot did
-- the same for the year and all time (every call). The per-technician sums behind the boards now
-- live in gamificacao.estatisticas_categorias, one row per (period, technician), and move with the
-- calls:
--
-- - A statement trigger on public.chamados writes each changed call's technician and scheduled
--   time (before and after the change) to gamificacao.chamados_alterados, the change log. It adds
--   one small insert per changed call to the back office's writes; scoring never writes calls.
-- - Each run first folds the log into the statistics (gamificacao.aplicar_chamados_alterados):
--   every (period, technician) the log names is recounted from that technician's calls in the
--   period through the (tecnico_id, agendado_para) index, so the work follows the changes, and a
--   deleted or reassigned call (which chamados.atualizado_em never showed) is counted too.
-- - A period's statistics are built from its calls the first time it is computed (a new week
--   starts nearly empty; the year and all time once), and dropped once its period is over.
-- - The boards are then ranked from the statistics (one row per technician instead of their calls),
--   with the same ordering, the same rounding and the same Bayesian mean as before, and only for
--   a period whose calls changed since its boards were last ranked (or when forced).
--
-- Ranking still writes every position of the board: a position is stored, and one technician
-- moving up shifts everyone they pass, so that part still grows with the board; at 1,000,000
-- technicians it is most of the job's work (see docs/gamification.md, "Scale", and what is open
-- there). gamificacao.recalcular_quadros_categorias, the recomputation from the calls, stays as the
-- reference the tests compare against.
--
-- Concurrency: folding and ranking take one transaction-level advisory lock first (then the
-- period's own lock, as before), so two folds never recount the same technician from different
-- snapshots, and the upserts cannot write an older count over a newer one.

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

alter table gamificacao.ranking_categorias_calculos add column versao_estatisticas bigint;
comment on column gamificacao.ranking_categorias_calculos.versao_estatisticas is
  'estatisticas_periodos.versao the boards were ranked from (the job skips the period until it moves).';

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

/** Trigger (on truncate of public.chamados): the statistics no longer match any call. Security definer, as the change log's trigger. */
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
 * removed when none is left). Returns how many rows were recounted. The log rows it deletes and
 * the calls it reads come from one snapshot, so a change committed later stays in the log for the
 * next fold. Callers hold the statistics lock (see gamificacao.bloquear_estatisticas).
 */
create function gamificacao.aplicar_chamados_alterados() returns integer
language plpgsql set search_path = '' as $$
declare
  v_recontados integer;
begin
  with alterados as (
    delete from gamificacao.chamados_alterados a returning a.tecnico_id, a.agendado_para
  ), periodos as (
    select e.periodo, e.periodo_inicio, gamificacao.meia_noite_local(e.periodo_inicio) as de,
      gamificacao.meia_noite_local(gamificacao.fim_periodo(e.periodo, e.periodo_inicio)) as ate
    from gamificacao.estatisticas_periodos e
  ), pares as (
    select distinct p.periodo, p.periodo_inicio, p.de, p.ate, a.tecnico_id as usuario_id
    from alterados a
    join periodos p on a.agendado_para >= p.de and a.agendado_para < p.ate
  ), contados as (
    select p.periodo, p.periodo_inicio, p.usuario_id, s.*
    from pares p
    cross join lateral (
      select count(*) as chamados,
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
      where ch.tecnico_id = p.usuario_id and ch.agendado_para >= p.de and ch.agendado_para < p.ate
    ) s
  ), gravados as (
    insert into gamificacao.estatisticas_categorias as e (periodo, periodo_inicio, usuario_id, checkins, atrasos, avaliacoes, soma_estrelas,
      cronometrados, soma_minutos, concluidos, ultima_conclusao, aceitos, cancelados)
    select c.periodo, c.periodo_inicio, c.usuario_id, c.checkins, c.atrasos, c.avaliacoes, c.soma_estrelas,
      c.cronometrados, c.soma_minutos, c.concluidos, c.ultima_conclusao, c.aceitos, c.cancelados
    from contados c
    where c.chamados > 0
    order by 1, 2, 3
    on conflict (periodo, periodo_inicio, usuario_id) do update set
      checkins = excluded.checkins, atrasos = excluded.atrasos, avaliacoes = excluded.avaliacoes, soma_estrelas = excluded.soma_estrelas,
      cronometrados = excluded.cronometrados, soma_minutos = excluded.soma_minutos, concluidos = excluded.concluidos,
      ultima_conclusao = excluded.ultima_conclusao, aceitos = excluded.aceitos, cancelados = excluded.cancelados
  ), apagados as (
    delete from gamificacao.estatisticas_categorias e
    using contados c
    where c.chamados = 0 and e.periodo = c.periodo and e.periodo_inicio = c.periodo_inicio and e.usuario_id = c.usuario_id
  ), versoes as (
    update gamificacao.estatisticas_periodos e set versao = e.versao + 1
    from (select distinct p.periodo, p.periodo_inicio from pares p) m
    where e.periodo = m.periodo and e.periodo_inicio = m.periodo_inicio
  )
  select count(*) into v_recontados from contados;
  return v_recontados;
end;
$$;
comment on function gamificacao.aplicar_chamados_alterados() is
  'Folds the change log of calls into the category statistics of the periods that keep them; returns the (period, technician) rows recounted.';

/** Builds the statistics of one period from its calls, unless they are already kept; true when it built them. */
create function gamificacao.construir_estatisticas_periodo(p_periodo text, p_inicio date, p_momento timestamptz) returns boolean
language plpgsql set search_path = '' as $$
declare
  v_de timestamptz := gamificacao.meia_noite_local(p_inicio);
  v_ate timestamptz := gamificacao.meia_noite_local(gamificacao.fim_periodo(p_periodo, p_inicio));
begin
  insert into gamificacao.estatisticas_periodos (periodo, periodo_inicio, construido_em) values (p_periodo, p_inicio, p_momento)
  on conflict do nothing;
  if not found then
    return false;
  end if;
  insert into gamificacao.estatisticas_categorias (periodo, periodo_inicio, usuario_id, checkins, atrasos, avaliacoes, soma_estrelas,
    cronometrados, soma_minutos, concluidos, ultima_conclusao, aceitos, cancelados)
  select p_periodo, p_inicio, ch.tecnico_id,
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
  where ch.agendado_para >= v_de and ch.agendado_para < v_ate
  group by ch.tecnico_id
  order by ch.tecnico_id;
  return true;
end;
$$;
comment on function gamificacao.construir_estatisticas_periodo(text, date, timestamptz) is
  'Builds one period''s category statistics from its calls when they are not kept yet.';

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
 * Ranks the five category boards of one period from its statistics
 * (gamificacao.quadros_das_estatisticas) and stores them in place of the period's rows. Every row
 * is written again: a technician who moves shifts the stored position of everyone they pass, so
 * after a few thousand changed technicians a third of a million-row board differs, and comparing
 * the old and new boards to write only the differences cost more than rewriting them (measured at
 * 1,000,000 technicians). Callers hold the statistics lock and have built and folded the period's
 * statistics.
 */
create function gamificacao.ordenar_quadros_categorias(p_periodo text, p_inicio date, p_momento timestamptz) returns void
language plpgsql set search_path = '' as $$
declare
  v_media numeric;
begin
  select sum(e.soma_estrelas)::numeric / nullif(sum(e.avaliacoes), 0) into v_media from gamificacao.estatisticas_categorias e
  where e.periodo = p_periodo and e.periodo_inicio = p_inicio;

  delete from gamificacao.ranking_categorias where periodo = p_periodo and periodo_inicio = p_inicio;
  insert into gamificacao.ranking_categorias (categoria, periodo, periodo_inicio, posicao, usuario_id, valor, amostras)
  select q.categoria, p_periodo, p_inicio, q.posicao, q.usuario_id, q.valor, q.amostras
  from gamificacao.quadros_das_estatisticas(p_periodo, p_inicio, v_media) q;

  insert into gamificacao.ranking_categorias_calculos as r (periodo, periodo_inicio, calculado_em, chamados_ate, media_estrelas, versao_estatisticas)
  values (p_periodo, p_inicio, p_momento, (select max(ch.atualizado_em) from public.chamados ch), round(v_media, 4),
    (select e.versao from gamificacao.estatisticas_periodos e where e.periodo = p_periodo and e.periodo_inicio = p_inicio))
  on conflict (periodo, periodo_inicio) do update set
    calculado_em = excluded.calculado_em, chamados_ate = excluded.chamados_ate, media_estrelas = excluded.media_estrelas,
    versao_estatisticas = excluded.versao_estatisticas;
end;
$$;
comment on function gamificacao.ordenar_quadros_categorias(text, date, timestamptz) is
  'Ranks one period''s five category boards from its statistics (gamificacao.estatisticas_categorias).';

/**
 * Computes the five category boards of one period (kind and first day): folds the change log,
 * builds the period's statistics if they are not kept yet, and ranks the boards. Runs for the
 * same statistics wait for each other.
 */
create or replace function gamificacao.calcular_rankings_categorias(p_periodo text, p_inicio date, p_momento timestamptz) returns void
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

/**
 * Computes the category boards of the current period of each kind in `p_periodos` (null: every
 * kind) when a call changed since they were last ranked (the latest chamados.atualizado_em moved,
 * as before, or the fold recounted one of the period's technicians: a deleted call), or every one
 * when `p_forcar`. Returns how many periods it ranked. The statistics of earlier periods of those
 * kinds are dropped.
 */
create or replace function gamificacao.atualizar_rankings_categorias(
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
