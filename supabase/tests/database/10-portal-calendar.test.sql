-- The business-day calendar and calculate_payment_dates: carrier on day 20 of the second month
-- after the sale, portal on the next 15th or month end strictly after it, both moved past
-- weekends and holidays. Also who may read and maintain the holidays table.
begin;
select plan(37);

select portal_tests.create_user('tech_a', '{technician}');
select portal_tests.create_user('admin_1', '{admin}');
select portal_tests.create_user('super_1', '{super_admin}');

-- Easter and the seeded holidays ----------------------------------------------------------------

select is(portal_private.easter_sunday(2025), '2025-04-20'::date, 'Easter 2025 is 20 April');
select is(portal_private.easter_sunday(2026), '2026-04-05'::date, 'Easter 2026 is 5 April');
select is(portal_private.easter_sunday(2033), '2033-04-17'::date, 'Easter 2033 is 17 April');
select is((select count(*)::integer from public.holidays where holiday_date between '2026-01-01' and '2026-12-31'), 13,
  '2026 has 9 national holidays and 4 bank closures');
select ok(exists (select 1 from public.holidays where holiday_date = '2026-02-17' and kind = 'bank_closure'), 'Carnaval Tuesday 2026 (17 Feb) is a bank closure');
select ok(exists (select 1 from public.holidays where holiday_date = '2025-11-20' and kind = 'national'), 'Consciência Negra (20 Nov) is a national holiday');

-- next_business_day -----------------------------------------------------------------------------

select is(portal_private.next_business_day('2026-03-18'), '2026-03-18'::date, 'A Wednesday without holiday is its own next business day');
select is(portal_private.next_business_day('2026-02-28'), '2026-03-02'::date, 'A Saturday moves to Monday');
select is(portal_private.next_business_day('2026-04-03'), '2026-04-06'::date, 'Good Friday moves to Monday');
select is(portal_private.next_business_day('2026-02-14'), '2026-02-18'::date, 'A Saturday before Carnaval moves to Ash Wednesday');
select is(portal_private.next_business_day('2028-12-31'), '2029-01-02'::date, 'Sunday 31 December moves past New Year''s Day into the new year');

-- calculate_payment_dates -----------------------------------------------------------------------

select results_eq($$ select * from public.calculate_payment_dates('2025-01-10') $$,
  $$ values ('2025-03-20'::date, '2025-03-31'::date) $$,
  'A sale on 10 Jan 2025: carrier on Thu 20 Mar, portal on Mon 31 Mar (month end)');
select results_eq($$ select * from public.calculate_payment_dates('2025-01-31') $$,
  $$ values ('2025-03-20'::date, '2025-03-31'::date) $$,
  'A sale on the last day of the month counts in that month');
select results_eq($$ select * from public.calculate_payment_dates('2025-01-01') $$,
  $$ values ('2025-03-20'::date, '2025-03-31'::date) $$,
  'A sale on the first day of the month counts in that month');
select results_eq($$ select * from public.calculate_payment_dates('2025-10-15') $$,
  $$ values ('2025-12-22'::date, '2025-12-31'::date) $$,
  'Carrier day on Saturday 20 Dec 2025 moves to Monday 22; portal on Wed 31 Dec');
select results_eq($$ select * from public.calculate_payment_dates('2025-11-28') $$,
  $$ values ('2026-01-20'::date, '2026-02-02'::date) $$,
  'Across the year end: carrier on Tue 20 Jan 2026, portal month end Sat 31 Jan moves to Mon 2 Feb');
select results_eq($$ select * from public.calculate_payment_dates('2028-10-05') $$,
  $$ values ('2028-12-20'::date, '2029-01-02'::date) $$,
  'Portal month end Sun 31 Dec 2028 moves past New Year''s Day to 2 Jan 2029');
select results_eq($$ select * from public.calculate_payment_dates('2025-12-15') $$,
  $$ values ('2026-02-20'::date, '2026-03-02'::date) $$,
  'February: portal month end Sat 28 Feb 2026 moves to Mon 2 Mar');
select results_eq($$ select * from public.calculate_payment_dates('2027-12-01') $$,
  $$ values ('2028-02-21'::date, '2028-03-01'::date) $$,
  'Leap February: carrier Sun 20 Feb 2028 moves to Mon 21; portal Tue 29 Feb is Carnaval, paid Wed 1 Mar');
select results_eq($$ select * from public.calculate_payment_dates('2032-12-10') $$,
  $$ values ('2033-02-21'::date, '2033-03-02'::date) $$,
  'Portal month end Mon 28 Feb 2033 is Carnaval, as is Tue 1 Mar: paid Wed 2 Mar');
select results_eq($$ select * from public.calculate_payment_dates('2026-09-08') $$,
  $$ values ('2026-11-23'::date, '2026-11-30'::date) $$,
  'Carrier day on the Consciência Negra holiday (Fri 20 Nov 2026) moves to Mon 23');
select results_eq($$ select * from public.calculate_payment_dates('2030-02-14') $$,
  $$ values ('2030-04-22'::date, '2030-04-30'::date) $$,
  'Carrier day Sat 20 Apr 2030, then Easter Sunday and Tiradentes: paid Mon 22 Apr');
select results_eq($$ select * from public.calculate_payment_dates('2026-02-27') $$,
  $$ values ('2026-04-20'::date, '2026-04-30'::date) $$,
  'A sale in February: carrier on Mon 20 Apr, portal on Thu 30 Apr');
select ok(
  (select bool_and(p.portal_payment_date > p.carrier_payment_date)
   from generate_series('2025-01-01'::date, '2027-12-31'::date, interval '1 day') as d,
   lateral public.calculate_payment_dates(d::date) as p),
  'For every day of 2025-2027 the portal pays strictly after the carrier'
);
select ok(
  (select bool_and(extract(isodow from p.carrier_payment_date) < 6 and extract(isodow from p.portal_payment_date) < 6
     and not exists (select 1 from public.holidays h where h.holiday_date in (p.carrier_payment_date, p.portal_payment_date)))
   from generate_series('2025-01-01'::date, '2027-12-31'::date, interval '1 day') as d,
   lateral public.calculate_payment_dates(d::date) as p),
  'For every day of 2025-2027 both payment dates are business days'
);
select is((select carrier_payment_date from public.calculate_payment_dates(null)), null, 'A null sale date gives null dates');

-- The holidays table drives the dates, and who may change it -------------------------------------

select portal_tests.act_as('admin_1');
select lives_ok($$ insert into public.holidays (holiday_date, name) values ('2025-03-20', 'Feriado de teste') $$,
  'An admin can add a holiday');
select results_eq($$ select carrier_payment_date from public.calculate_payment_dates('2025-01-10') $$,
  $$ values ('2025-03-21'::date) $$,
  'A new holiday on the carrier day moves the payment to the next business day');
select results_eq($$ update public.holidays set name = 'Feriado de teste (alterado)' where holiday_date = '2025-03-20' returning name $$,
  $$ values ('Feriado de teste (alterado)') $$, 'An admin can change a holiday');
reset role;

select portal_tests.act_as('tech_a');
select ok((select count(*) > 100 from public.holidays), 'A technician can read the holidays');
select results_eq($$ select * from public.calculate_payment_dates('2025-11-28') $$,
  $$ values ('2026-01-20'::date, '2026-02-02'::date) $$,
  'A technician can call calculate_payment_dates');
select throws_ok($$ insert into public.holidays (holiday_date, name) values ('2025-03-24', 'Não') $$,
  '42501', 'new row violates row-level security policy for table "holidays"', 'A technician cannot add holidays');
select is_empty($$ delete from public.holidays where holiday_date = '2025-03-20' returning 1 $$, 'A technician cannot remove holidays');
reset role;

select portal_tests.act_as('super_1');
select results_eq($$ delete from public.holidays where holiday_date = '2025-03-20' returning name $$,
  $$ values ('Feriado de teste (alterado)') $$, 'A super admin can remove a holiday');
reset role;

select portal_tests.act_as_anon();
select throws_ok($$ select count(*) from public.holidays $$, '42501', 'permission denied for table holidays', 'Anonymous callers cannot read the holidays');
select throws_ok($$ select * from public.calculate_payment_dates('2025-01-10') $$, '42501', null, 'Anonymous callers cannot call calculate_payment_dates');
reset role;

update public.holidays set updated_at = now() - interval '1 day' where holiday_date = '2026-12-25';
select is((select updated_at from public.holidays where holiday_date = '2026-12-25'), now(), 'Updating a holiday refreshes updated_at');

select * from finish();
rollback;
