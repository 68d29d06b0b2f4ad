-- Gamification category boards from statistics kept up to date by the change log of calls: after
-- each kind of change (new calls, late check-ins, ratings, cancellations, a call moved to another
-- period or technician, deleted calls and technicians, scorings, a technician changing city and
-- level, a period roll-over, a run with nothing changed) the boards the job ranks equal a
-- recomputation from every call, and a fold recounts only the technicians the changes name.
begin;
select plan(32);
select testes_gamificacao.limpar();

create temporary table momentos as
select gamificacao.meia_noite_local(gamificacao.inicio_periodo('semanal', now())) as semana,
  gamificacao.meia_noite_local(gamificacao.fim_periodo('semanal', gamificacao.inicio_periodo('semanal', now()))) as proxima_semana;

select testes_gamificacao.nova_cidade('incremental-a', 1500, 50), testes_gamificacao.nova_cidade('incremental-b', 1500, 50);
create temporary table tec as
select i, testes_gamificacao.novo_tecnico(case when i % 2 = 0 then 'incremental-a' else 'incremental-b' end, 'Incremental ' || i) as id
from generate_series(1, 40) i;

/**
 * 2 to 10 calls for each technician whose number is a multiple of `p_de_cada`, from `p_de` on,
 * five hours apart: punctual and late check-ins, durations from 1 minute to 5 hours (some below
 * the velocidade minimum), ratings 1–5 or none, calls still scheduled, cancellations by the
 * technician or the customer, some never accepted.
 */
create function pg_temp.novos_chamados(p_de timestamptz, p_semente integer, p_de_cada integer default 1) returns void
language sql as $$
  insert into public.chamados (tecnico_id, cidade_id, latitude, longitude, agendado_para, aceito_em, checkin_em, checkout_em,
    status, cancelado_em, cancelado_por, estrelas)
  select t.id, tc.cidade_id, -23.55, -46.63, c.agendado,
    case when h.x % 5 <> 0 then c.agendado - interval '1 day' end,
    case when c.status = 'concluido' then c.agendado + (h.x % 40 - 10) * interval '1 minute' end,
    case when c.status = 'concluido' then c.agendado + (h.x % 40 - 10) * interval '1 minute' + (1 + h.x % 300) * interval '1 minute' end,
    c.status,
    case when c.status = 'cancelado' then c.agendado end,
    case when c.status = 'cancelado' then case when h.x % 2 = 0 then 'tecnico' else 'cliente' end end,
    case when c.status = 'concluido' and h.x % 3 <> 0 then (1 + h.x % 5)::smallint end
  from tec t
  join public.tecnicos tc on tc.id = t.id
  cross join lateral generate_series(1, 2 + (t.i * p_semente) % 9) j
  cross join lateral (select t.i * 31 + j * 17 + p_semente * 7 as x) h
  cross join lateral (select p_de + (j * 5 + t.i % 5) * interval '1 hour' as agendado,
    case when h.x % 9 = 0 then 'cancelado' when h.x % 11 = 0 then 'agendado' else 'concluido' end as status) c
  where t.i % p_de_cada = 0
$$;

/** One period's boards and rating mean, as a comparable set of rows. */
create function pg_temp.quadros(p_periodo text, p_inicio date) returns table (categoria text, posicao integer, usuario_id uuid, valor numeric, amostras integer)
language sql as $$
  select r.categoria, r.posicao, r.usuario_id, r.valor, r.amostras from gamificacao.ranking_categorias r
  where r.periodo = p_periodo and r.periodo_inicio = p_inicio
  union all
  select 'media_estrelas', 0, null, c.media_estrelas, 0 from gamificacao.ranking_categorias_calculos c
  where c.periodo = p_periodo and c.periodo_inicio = p_inicio
$$;

/** Rows in which the period's boards as the job left them differ from a recomputation from every call (both ways). */
create function pg_temp.diferencas(p_periodo text, p_inicio date) returns bigint
language plpgsql as $$
declare
  v_diferencas bigint;
begin
  create temporary table quadros_do_job on commit drop as select * from pg_temp.quadros(p_periodo, p_inicio);
  perform gamificacao.recalcular_quadros_categorias(p_periodo, p_inicio, now());
  select count(*) into v_diferencas from (
    (select * from quadros_do_job except all select * from pg_temp.quadros(p_periodo, p_inicio))
    union all
    (select * from pg_temp.quadros(p_periodo, p_inicio) except all select * from quadros_do_job)) d;
  drop table quadros_do_job;
  return v_diferencas;
end;
$$;

/** Differing rows over the four current periods' boards, and how many rows those boards hold. */
create function pg_temp.diferencas_atuais() returns bigint
language sql as $$
  select sum(pg_temp.diferencas(p.periodo, gamificacao.inicio_periodo(p.periodo, now())))::bigint from gamificacao.periodos p
$$;
create function pg_temp.linhas_atuais() returns bigint
language sql as $$
  select count(*) from gamificacao.ranking_categorias r join gamificacao.periodos p on p.periodo = r.periodo
  where r.periodo_inicio = gamificacao.inicio_periodo(p.periodo, now())
$$;

-- This week, six weeks ago and next week.
select pg_temp.novos_chamados(semana, 3) from momentos;
select pg_temp.novos_chamados(semana - interval '40 days', 5) from momentos;
select pg_temp.novos_chamados(proxima_semana, 7) from momentos;

-- Building -------------------------------------------------------------------------------------
select is(gamificacao.atualizar_rankings_categorias(), 4, 'The first run builds the statistics of every current period and ranks it');
select is((select count(*)::int from gamificacao.estatisticas_periodos), 4, 'and keeps the statistics of those four periods');
select ok(pg_temp.linhas_atuais() > 100, 'The test''s boards are well filled');
select is(pg_temp.diferencas_atuais(), 0::bigint, 'Built boards equal a recomputation from every call');

-- Nothing changed ------------------------------------------------------------------------------
select is((select count(*)::int from gamificacao.chamados_alterados), 0, 'A run leaves the change log empty');
select is(gamificacao.atualizar_rankings_categorias(), 0, 'A run with nothing changed ranks nothing');
select is(gamificacao.aplicar_chamados_alterados(), 0, 'and a fold of the empty log recounts nobody');
select is(pg_temp.diferencas_atuais(), 0::bigint, 'The boards still equal a recomputation');

-- Work follows the changes ---------------------------------------------------------------------
select testes_gamificacao.novo_chamado((select id from tec where i = 20), 'concluido', now() - interval '1 hour', 5::smallint);
select is((select count(*)::int from gamificacao.chamados_alterados), 1, 'A new call is one row in the change log');
select is(gamificacao.aplicar_chamados_alterados(), 4, 'Its fold recounts one technician in each of the four periods the call counts in');
update public.chamados set latitude = -23.56 where tecnico_id = (select id from tec where i = 21);
select is((select count(*)::int from gamificacao.chamados_alterados), 0, 'A change to columns the statistics do not read is not logged');
select id as tecnico_23 from tec where i = 23 \gset
select testes_gamificacao.entrar_como_servico();
update public.chamados set estrelas = case when estrelas = 2 then 3 else 2 end
where id = (select min(ch.id::text)::uuid from public.chamados ch where ch.status = 'concluido' and ch.tecnico_id = :'tecnico_23');
reset role;
select is((select count(*)::int from gamificacao.chamados_alterados), 2, 'A call the back office (service role) changes is logged, before and after');
select is(gamificacao.atualizar_rankings_categorias(), 4, 'The job ranks the changed periods again');
select is(pg_temp.diferencas_atuais(), 0::bigint, 'and the boards equal a recomputation');

-- A mix of changes -----------------------------------------------------------------------------
select pg_temp.novos_chamados(semana + interval '2 days', 11, 3) from momentos;
update public.chamados set checkin_em = agendado_para + interval '30 minutes', checkout_em = agendado_para + interval '75 minutes'
where status = 'concluido' and tecnico_id in (select id from tec where i between 1 and 5) and agendado_para >= (select semana from momentos);
update public.chamados set estrelas = 5 where status = 'concluido' and tecnico_id in (select id from tec where i between 6 and 8);
update public.chamados set status = 'cancelado', cancelado_em = agendado_para, cancelado_por = 'tecnico', checkin_em = null, checkout_em = null, estrelas = null,
  aceito_em = agendado_para - interval '2 days'
where id = (select min(ch.id::text)::uuid from public.chamados ch where ch.status = 'concluido' and ch.tecnico_id = (select id from tec where i = 9));
update public.chamados set agendado_para = agendado_para - interval '40 days', checkin_em = checkin_em - interval '40 days', checkout_em = checkout_em - interval '40 days'
where id = (select min(ch.id::text)::uuid from public.chamados ch where ch.status = 'concluido' and ch.tecnico_id = (select id from tec where i = 10)
  and ch.agendado_para >= (select semana from momentos));
update public.chamados set tecnico_id = (select id from tec where i = 12)
where id in (select ch.id from public.chamados ch where ch.tecnico_id = (select id from tec where i = 11) and ch.agendado_para >= (select semana from momentos) limit 2);
delete from public.chamados where id = (select min(ch.id::text)::uuid from public.chamados ch where ch.tecnico_id = (select id from tec where i = 13));
delete from public.tecnicos where id = (select id from tec where i = 14);
update public.tecnicos set cidade_id = 'incremental-a', nivel = 'experiente' where id = (select id from tec where i = 15);
select testes_gamificacao.pontuar(ch.tecnico_id, 'chamado_concluido', ch.id)
from public.chamados ch where ch.status = 'concluido' and ch.tecnico_id in (select id from tec where i in (16, 17)) and ch.checkout_em < now();
select ok((select count(*) from public.historico_pontos h join tec t on t.id = h.usuario_id) > 0, 'Some of the calls were scored');
select is(gamificacao.atualizar_rankings_categorias(), 4, 'After the mix the job ranks every current period again');
select is(pg_temp.diferencas('semanal', gamificacao.inicio_periodo('semanal', now())), 0::bigint, 'The week''s boards equal a recomputation');
select is(pg_temp.diferencas('mensal', gamificacao.inicio_periodo('mensal', now())), 0::bigint, 'The month''s boards equal a recomputation');
select is(pg_temp.diferencas('anual', gamificacao.inicio_periodo('anual', now())), 0::bigint, 'The year''s boards equal a recomputation');
select is(pg_temp.diferencas('geral', '-infinity'), 0::bigint, 'The all-time boards equal a recomputation');
select is((select count(*)::int from gamificacao.ranking_categorias r where r.usuario_id = (select id from tec where i = 14)), 0,
  'A deleted technician left every board');

-- A deleted call, which chamados.atualizado_em never shows ------------------------------------
delete from public.chamados where id = (select min(ch.id::text)::uuid from public.chamados ch
  where ch.status = 'concluido' and ch.tecnico_id = (select id from tec where i = 22) and ch.agendado_para >= (select semana from momentos));
select ok(gamificacao.atualizar_rankings_categorias() >= 1, 'A deleted call makes the job rank its periods again');
select is(pg_temp.diferencas_atuais(), 0::bigint, 'and the boards equal a recomputation');

-- Period roll-over -----------------------------------------------------------------------------
select is(gamificacao.atualizar_rankings_categorias(proxima_semana + interval '2 hours', false, array['semanal']), 1,
  'Next week the 5-minute job builds the new week''s statistics and ranks it') from momentos;
select is((select array_agg(periodo_inicio) from gamificacao.estatisticas_periodos where periodo = 'semanal'),
  array[gamificacao.inicio_periodo('semanal', proxima_semana + interval '2 hours')], 'and drops the statistics of the week that ended') from momentos;
select is(pg_temp.diferencas('semanal', gamificacao.inicio_periodo('semanal', proxima_semana + interval '2 hours')), 0::bigint,
  'The new week''s boards equal a recomputation') from momentos;
update public.chamados set estrelas = 1 where status = 'concluido' and agendado_para >= (select proxima_semana from momentos)
  and tecnico_id in (select id from tec where i % 4 = 0);
select is(gamificacao.atualizar_rankings_categorias(proxima_semana + interval '2 hours', false, array['semanal']), 1,
  'A change in the new week ranks it again') from momentos;
select is(pg_temp.diferencas('semanal', gamificacao.inicio_periodo('semanal', proxima_semana + interval '2 hours')), 0::bigint,
  'and its boards equal a recomputation') from momentos;
select is(gamificacao.atualizar_rankings_categorias(proxima_semana + interval '2 hours', false, array['semanal']), 0,
  'The next run, with nothing changed, ranks nothing') from momentos;

-- Back to this week: it was dropped, so it is built again from its calls.
select is(gamificacao.atualizar_rankings_categorias(now(), false, array['semanal']), 1, 'A period whose statistics were dropped is built again');
select is(pg_temp.diferencas('semanal', gamificacao.inicio_periodo('semanal', now())), 0::bigint, 'and equals a recomputation');

-- Truncating the calls forgets the statistics --------------------------------------------------
truncate public.chamados cascade;
select is((select count(*)::int from gamificacao.estatisticas_periodos) + (select count(*)::int from gamificacao.estatisticas_categorias), 0,
  'Truncating the calls drops every period''s statistics, to be rebuilt');

select * from finish();
rollback;
