-- The clock sweep: every rule that depends on the date, at the instants where dates go wrong. Each
-- function here takes its clock as an argument (the moment of a scoring, a schedule's "after", a
-- bucket's "now", a sale date), so the test sets the clock rather than waiting for a date:
-- - the first and last second of a day, week, month and year in America/Sao_Paulo (gamification
--   periods and tie slots) and in UTC (billing periods);
-- - São Paulo's last two DST changes: 2018-11-04, whose local midnight never happened (the day
--   began at 01:00 -02), and 2019-02-16, a 25-hour day (23:00–00:00 happened twice);
-- - 29 February 2028 and New Year 2031;
-- - scorings on both sides of a month boundary, whose answers must agree with the boards;
-- - commission payment dates from a sale on 29 February and across New Year;
-- - token-bucket rate windows at their refill boundary and with a clock that steps back.
begin;
select plan(44);
select testes_gamificacao.limpar();
set local timezone = 'UTC';

-- Gamification periods ---------------------------------------------------------------------------
select is(gamificacao.inicio_periodo('mensal', '2030-12-01 02:59:59+00'), '2030-11-01'::date,
  'The last second of November in São Paulo (02:59:59 UTC on 1 December) is still November');
select is(gamificacao.inicio_periodo('mensal', '2030-12-01 03:00:00+00'), '2030-12-01'::date,
  'and the next second starts December');
select is(gamificacao.inicio_periodo('anual', '2031-01-01 02:59:59+00'), '2030-01-01'::date,
  'The last second of 2030 in São Paulo is still 2030');
select is(gamificacao.inicio_periodo('anual', '2031-01-01 03:00:00+00'), '2031-01-01'::date,
  'and New Year starts 2031 at 03:00 UTC');
select is(gamificacao.inicio_periodo('semanal', '2030-12-30 02:59:59+00'), '2030-12-23'::date,
  'The last second of Sunday 29 December belongs to the week that began on Monday the 23rd');
select is(gamificacao.inicio_periodo('semanal', '2030-12-30 03:00:00+00'), '2030-12-30'::date,
  'and Monday''s first second starts the week that spans New Year');
select is(gamificacao.inicio_periodo('semanal', '2031-01-01 12:00:00+00'), '2030-12-30'::date,
  'New Year''s Day is in that week, not in a week of its own');
select is(gamificacao.inicio_periodo('mensal', '2028-03-01 02:59:59+00'), '2028-02-01'::date,
  'The last second of 29 February 2028 is in February');
select is(gamificacao.inicio_periodo('mensal', '2028-03-01 03:00:00+00'), '2028-03-01'::date,
  'and the next second is March');
select is(gamificacao.inicio_periodo('semanal', '2028-02-29 15:00:00+00'), '2028-02-28'::date,
  'Tuesday 29 February 2028 is in the week that began on Monday the 28th');
select is(gamificacao.hora_local('2018-11-04 02:59:59+00')::date, '2018-11-03'::date,
  'On 2018-11-04 São Paulo skipped midnight: 02:59:59 UTC is still the 3rd');
select is(gamificacao.hora_local('2018-11-04 03:00:00+00'), '2018-11-04 01:00:00'::timestamp,
  'and the 4th began at 01:00 local');
select is(gamificacao.meia_noite_local('2018-11-04'), '2018-11-04 03:00:00+00'::timestamptz,
  'so the first instant of that day is 01:00 -02');
select is(gamificacao.meia_noite_local('2019-02-17') - gamificacao.meia_noite_local('2019-02-16'), interval '25 hours',
  'On 2019-02-16 São Paulo repeated an hour: the day lasted 25 hours');
select is(gamificacao.hora_local('2019-02-17 02:59:59+00')::date, '2019-02-16'::date,
  'and the second 23:59:59 of the 16th is still the 16th');

-- Tie slots --------------------------------------------------------------------------------------
-- Every 5 minutes of the weeks and months around both DST changes and 29 February: the slot never
-- moves backwards, stays within the 64 a key holds, and lies inside the bounds inicio_fatia_empate
-- gives it (the national position counts from those bounds).
create temporary table varredura as
select p.periodo, gamificacao.inicio_periodo(p.periodo, m) as inicio, m as momento,
  gamificacao.fatia_empate(p.periodo, gamificacao.inicio_periodo(p.periodo, m), m) as fatia
from (values ('semanal'), ('mensal'), ('anual')) p (periodo)
cross join (
  select generate_series(a::timestamptz, b::timestamptz, interval '5 minutes') as m
  from (values ('2018-10-28 00:00+00', '2018-11-12 00:00+00'), ('2019-02-01 03:00+00', '2019-03-04 03:00+00'),
    ('2028-02-01 03:00+00', '2028-03-06 03:00+00'), ('2030-12-20 00:00+00', '2031-01-10 00:00+00')) r (a, b)
) s;
select is((select count(*)::int from varredura v where v.fatia not between 0 and 63), 0,
  'Every tie slot of the sweep is between 0 and 63');
select is((select count(*)::int from (
    select v.fatia < lag(v.fatia) over (partition by v.periodo, v.inicio order by v.momento) as recua from varredura v) x where x.recua), 0,
  'and never moves backwards as the clock moves forward inside a period');
select is((select count(*)::int from varredura v
    where v.momento < gamificacao.inicio_fatia_empate(v.periodo, v.inicio, v.fatia)
       or (v.fatia < 63 and v.momento >= gamificacao.inicio_fatia_empate(v.periodo, v.inicio, v.fatia + 1))), 0,
  'and every moment lies inside the bounds of its own slot');
select is(gamificacao.fatia_empate('semanal', '2019-02-11', '2019-02-18 02:59:59+00'), 63,
  'The last second of the week with the 25-hour day is in the last slot a key holds');
select is((select max(v.fatia) from varredura v where v.periodo = 'mensal'), 61,
  'A month''s slots stay inside the key: the last 12 hours of a 31-day December are slot 61');

-- Scoring across a month boundary ---------------------------------------------------------------
select testes_gamificacao.nova_cidade('relogio-sp');
create temporary table relogio as
select testes_gamificacao.novo_tecnico('relogio-sp', 'Ana') as ana, testes_gamificacao.novo_tecnico('relogio-sp', 'Bia') as bia;
create temporary table respostas as
select 'ana-nov' as quem, testes_gamificacao.pontuar(ana, 'chamado_concluido', testes_gamificacao.novo_chamado(ana, p_agendado => '2030-11-30 20:00+00'), '{}',
  '2030-12-01 02:59:59+00') as r from relogio;
insert into respostas select 'bia-dez', testes_gamificacao.pontuar(bia, 'chamado_concluido', testes_gamificacao.novo_chamado(bia, p_agendado => '2030-11-30 20:00+00'), '{}',
  '2030-12-01 03:00:00+00') from relogio;
insert into respostas select 'ana-dez', testes_gamificacao.pontuar(ana, 'avaliacao_4_estrelas',
  testes_gamificacao.novo_chamado(ana, p_agendado => '2030-11-30 20:00+00', p_estrelas => 4::smallint), '{}', '2030-12-01 03:00:01+00') from relogio;
select results_eq(
  $$ select t.periodo, t.periodo_inicio, t.pontos from gamificacao.totais_periodo t, relogio r where t.usuario_id = r.ana and t.periodo <> 'geral' order by 1, 2 $$,
  $$ values ('anual', '2030-01-01'::date, 60), ('mensal', '2030-11-01'::date, 50), ('mensal', '2030-12-01'::date, 10), ('semanal', '2030-11-25'::date, 60) $$,
  'A scoring at the last second of November counts for November, the next one for December; the week and the year hold both');
select is((select (r ->> 'posicao_ranking_nacional')::int from respostas where quem = 'ana-nov'), 1,
  'The month''s first scorer answers position 1, never 0');
select is((select (r ->> 'posicao_ranking_nacional')::int from respostas where quem = 'bia-dez'), 1,
  'December''s first scorer leads December, whatever November held');
select is((select (r ->> 'posicao_ranking_nacional')::int from respostas where quem = 'ana-dez'), 2,
  'and the next December scorer with fewer points answers 2');
select is(
  (select (r ->> 'posicao_ranking_nacional')::int from respostas where quem = 'ana-dez'),
  (select (e ->> 'posicao')::int from jsonb_array_elements(gamificacao.pagina_quadro('nacional', 'mensal', '2030-12-01', null, 20, 0)) e, relogio
   where (e ->> 'usuario_id')::uuid = relogio.ana),
  'which is the position December''s board shows for her');
select is(
  (select (r ->> 'posicao_ranking_local')::int from respostas where quem = 'ana-dez'), 2,
  'and the same on her city''s board');

-- Schedules in São Paulo -------------------------------------------------------------------------
select is(workflows_private.cron_next('0 0 * * *', 'America/Sao_Paulo', '2018-11-03 15:00+00'), '2018-11-04 03:00+00'::timestamptz,
  'A midnight schedule on the day São Paulo skipped midnight runs at the first instant of the day (01:00 -02)');
select is(workflows_private.cron_next('0 0 * * *', 'America/Sao_Paulo', '2018-11-04 03:00+00'), '2018-11-05 02:00+00'::timestamptz,
  'and the next midnight is 00:00 -02 again');
select is(workflows_private.cron_next('30 23 * * *', 'America/Sao_Paulo', '2019-02-16 15:00+00'), '2019-02-17 01:30+00'::timestamptz,
  'On the 25-hour day a 23:30 schedule runs at the first 23:30 (-02)');
select is(workflows_private.cron_next('30 23 * * *', 'America/Sao_Paulo', '2019-02-17 01:30+00'), '2019-02-18 02:30+00'::timestamptz,
  'and not again at the repeated 23:30 (-03): once a day');
select is(workflows_private.cron_next('0 0 29 2 *', 'America/Sao_Paulo', '2026-12-02 00:00+00'), '2028-02-29 03:00+00'::timestamptz,
  'A 29 February schedule waits for 2028, at São Paulo''s midnight');
select is(workflows_private.cron_next('59 23 31 12 *', 'America/Sao_Paulo', '2030-12-31 12:00+00'), '2031-01-01 02:59+00'::timestamptz,
  'A schedule at the last minute of the year runs at 02:59 UTC on New Year''s Day');
select is(workflows_private.cron_next('0 0 1 1 *', 'America/Sao_Paulo', '2031-01-01 02:59:59+00'), '2031-01-01 03:00+00'::timestamptz,
  'and one at New Year a second before it, in the same year');

-- Billing periods (UTC calendar months) ----------------------------------------------------------
select is(workflows_private.period_start_of('2030-11-30 23:59:59.999999+00'), '2030-11-01 00:00+00'::timestamptz,
  'The last microsecond of November (UTC) bills to November');
select is(workflows_private.period_start_of('2030-12-01 00:00:00+00'), '2030-12-01 00:00+00'::timestamptz,
  'and the first of December to December, though it is still 30 November in São Paulo');
select is(workflows_private.period_start_of('2028-02-29 23:59:59+00'), '2028-02-01 00:00+00'::timestamptz,
  '29 February bills to February');
select is(workflows_private.period_start_of('2031-01-01 00:00:00+00'), '2031-01-01 00:00+00'::timestamptz,
  'New Year starts a new billing period');

-- Rate windows (token buckets refilled continuously) --------------------------------------------
select is(workflows_private.bucket_tokens(0, '2030-12-31 23:59:00+00', 60, '2030-12-31 23:59:59+00'), 59::double precision,
  'An emptied bucket of 60 a minute holds 59 tokens a second before its minute is up');
select is(workflows_private.bucket_tokens(0, '2030-12-31 23:59:00+00', 60, '2031-01-01 00:00:00+00'), 60::double precision,
  'and is full at the minute, across New Year');
select is(workflows_private.bucket_tokens(10, '2028-02-28 00:00:00+00', 60, '2028-03-01 00:00:00+00'), 60::double precision,
  'and never fills past its capacity, however long it waits');
select is(workflows_private.bucket_tokens(5, '2030-12-01 00:00:10+00', 60, '2030-12-01 00:00:00+00'), 5::double precision,
  'A clock that steps back neither refills nor drains a bucket');

-- Commission payment dates -----------------------------------------------------------------------
select results_eq($$ select * from public.calculate_payment_dates('2028-02-29') $$,
  $$ values ('2028-04-20'::date, '2028-05-02'::date) $$,
  'A sale on 29 February 2028 pays the carrier on 20 April and the portal after Sunday 30 April and Labour Day, on 2 May');
select results_eq($$ select * from public.calculate_payment_dates('2030-12-31') $$,
  $$ select * from public.calculate_payment_dates('2030-12-01') $$,
  'A sale on the last day of a year is paid as one on its first day of December');
select ok((select carrier_payment_date >= '2031-03-01' from public.calculate_payment_dates('2031-01-01')),
  'and one on New Year''s Day moves to the next year''s schedule (carrier paid in March 2031)');

select * from finish();
rollback;
