-- Orders and commissions: created in the activating statement (amount and payment dates),
-- cancelled with the proposal, paid by admins; read by their technician and admins only; never
-- written directly through the API.
begin;
select plan(32);

select portal_tests.create_user('tech_a', '{technician}');
select portal_tests.create_user('tech_b', '{technician}');
select portal_tests.create_user('admin_1', '{admin}');
select portal_tests.create_user('super_1', '{super_admin}');

create temporary table ids (name text primary key, id uuid) on commit drop;
grant select on ids to authenticated;
insert into ids values
  ('product', portal_tests.create_product('Commission Product', 100, 0.0333)),
  ('customer_a', portal_tests.create_customer('tech_a', 'Alfa Commissions', '11222333000181')),
  ('customer_b', portal_tests.create_customer('tech_b', 'Bravo Commissions', '33444555000181'));
insert into ids values
  ('sold', portal_tests.create_proposal('tech_a', (select id from ids where name = 'customer_a'), (select id from ids where name = 'product'), 149.90, 12)),
  ('atomic', portal_tests.create_proposal('tech_a', (select id from ids where name = 'customer_a'), (select id from ids where name = 'product'), 100, 12)),
  ('sold_b', portal_tests.create_proposal('tech_b', (select id from ids where name = 'customer_b'), (select id from ids where name = 'product'), 50, 24));
select portal_tests.set_status(id, 'approved') from ids where name in ('sold', 'atomic', 'sold_b');

-- Activation -------------------------------------------------------------------------------------

select portal_tests.act_as('admin_1');
select lives_ok($$ update public.proposals set status = 'active' where id = (select id from ids where name = 'sold') $$,
  'An admin activates an approved proposal');
reset role;
select results_eq($$ select technician_id, total_value, status::text, ordered_at from public.orders where proposal_id = (select id from ids where name = 'sold') $$,
  $$ values (portal_tests.uid('tech_a'), 1798.80::numeric, 'active', now()) $$,
  'Activation created one active order for the proposal''s technician and total');
select results_eq($$
  select c.technician_id, c.base_value, c.commission_percentage, c.amount, c.status::text
  from public.commissions c join public.orders o on o.id = c.order_id
  where o.proposal_id = (select id from ids where name = 'sold')
$$, $$ values (portal_tests.uid('tech_a'), 1798.80::numeric, 0.0333::numeric, 59.90::numeric, 'pending') $$,
  'and a pending commission of total_value × commission_percentage, rounded to cents (1798.80 × 0.0333 = 59.90)');
select results_eq($$
  select c.sale_date, c.carrier_payment_date, c.portal_payment_date
  from public.commissions c join public.orders o on o.id = c.order_id
  where o.proposal_id = (select id from ids where name = 'sold')
$$, $$
  select (now() at time zone 'America/Sao_Paulo')::date, d.carrier_payment_date, d.portal_payment_date
  from public.calculate_payment_dates((now() at time zone 'America/Sao_Paulo')::date) as d
$$, 'with the payment dates of calculate_payment_dates(activation day in São Paulo)');
select results_eq($$ select action from public.audit_log where entity_id = (select id::text from ids where name = 'sold') order by id $$,
  $$ values ('proposal.created'), ('proposal.approved'), ('proposal.activated') $$, 'The activation is audited');

alter table public.commissions add constraint commissions_test_refuse_everything check (amount < 0) not valid;
select portal_tests.act_as('admin_1');
select throws_ok($$ update public.proposals set status = 'active' where id = (select id from ids where name = 'atomic') $$,
  '23514', null, 'When the commission cannot be written, the activation fails');
reset role;
alter table public.commissions drop constraint commissions_test_refuse_everything;
select results_eq($$ select status::text from public.proposals where id = (select id from ids where name = 'atomic') $$,
  $$ values ('approved') $$, 'and the proposal is still approved');
select is_empty($$ select 1 from public.orders where proposal_id = (select id from ids where name = 'atomic') $$,
  'and no order was left behind: order, commission and status change are one transaction');

select portal_tests.set_status((select id from ids where name = 'sold_b'), 'active');
update public.products set commission_percentage = 0.5 where id = (select id from ids where name = 'product');
select is((select amount from public.commissions where technician_id = portal_tests.uid('tech_a')), 59.90::numeric,
  'Changing the product''s rate later does not change an existing commission');
select throws_ok($$ insert into public.orders (proposal_id, technician_id, total_value) values ((select id from ids where name = 'sold'), portal_tests.uid('tech_a'), 1) $$,
  '23505', null, 'A proposal has at most one order');

-- Reading ----------------------------------------------------------------------------------------

select portal_tests.act_as('tech_a');
select results_eq($$ select proposal_id from public.orders $$, $$ select id from ids where name = 'sold' $$,
  'A technician reads only their own orders');
select results_eq($$ select amount from public.commissions $$, $$ values (59.90::numeric) $$,
  'A technician reads only their own commissions');
select is_empty($$ update public.commissions set status = 'paid' returning 1 $$, 'A technician cannot mark a commission paid');
select throws_ok($$ update public.commissions set amount = 1000 $$, '42501', 'permission denied for table commissions',
  'Nobody edits commission amounts through the API');
select throws_ok($$ insert into public.orders (proposal_id, technician_id, total_value) values ((select id from ids where name = 'atomic'), portal_tests.uid('tech_a'), 1) $$,
  '42501', 'permission denied for table orders', 'A technician cannot create orders');
select throws_ok($$ delete from public.commissions $$, '42501', 'permission denied for table commissions', 'A technician cannot delete commissions');
reset role;

select portal_tests.act_as('tech_b');
select results_eq($$ select base_value from public.commissions $$, $$ values (1200.00::numeric) $$,
  'The other technician reads only theirs');
select results_eq($$ select count(*)::integer from public.orders $$, $$ values (1) $$, 'and only their own order');
reset role;

select portal_tests.act_as_anon();
select throws_ok($$ select * from public.orders $$, '42501', 'permission denied for table orders', 'Anonymous callers cannot read orders');
select throws_ok($$ select * from public.commissions $$, '42501', 'permission denied for table commissions', 'Anonymous callers cannot read commissions');
reset role;

select portal_tests.act_as('admin_1');
select is((select count(*) from public.orders), portal_tests.count_rows('public.orders'), 'An admin reads every order');
select is((select count(*) from public.commissions), portal_tests.count_rows('public.commissions'), 'An admin reads every commission');
select throws_ok($$ insert into public.commissions (order_id, technician_id, base_value, commission_percentage, amount, sale_date, carrier_payment_date, portal_payment_date)
  select id, technician_id, 1, 0.1, 0.1, now(), now(), now() from public.orders limit 1 $$,
  '42501', 'permission denied for table commissions', 'An admin cannot create commissions by hand');

-- Paying -----------------------------------------------------------------------------------------

select results_eq($$ update public.commissions set status = 'paid' where technician_id = portal_tests.uid('tech_b') returning status::text, paid_at $$,
  $$ values ('paid', now()) $$, 'An admin marks a commission paid, which stamps paid_at');
select throws_ok($$ update public.commissions set status = 'cancelled' where technician_id = portal_tests.uid('tech_b') $$,
  'P0001', 'Illegal commission status change: paid → cancelled', 'A paid commission stays paid');
reset role;
select portal_tests.act_as('super_1');
select is((select count(*) from public.commissions), portal_tests.count_rows('public.commissions'), 'A super admin reads every commission');
select is((select count(*) from public.orders), portal_tests.count_rows('public.orders'), 'A super admin reads every order');
reset role;

-- Cancelling an active proposal ------------------------------------------------------------------

select portal_tests.act_as('super_1');
select lives_ok($$ update public.proposals set status = 'cancelled' where id in (select id from ids where name in ('sold', 'sold_b')) $$,
  'A super admin cancels two active proposals');
reset role;
select results_eq($$ select o.status::text, o.cancelled_at, c.status::text from public.orders o join public.commissions c on c.order_id = o.id
  where o.proposal_id = (select id from ids where name = 'sold') $$,
  $$ values ('cancelled', now(), 'cancelled') $$, 'Cancelling cancels the order and its pending commission');
select results_eq($$ select o.status::text, c.status::text from public.orders o join public.commissions c on c.order_id = o.id
  where o.proposal_id = (select id from ids where name = 'sold_b') $$,
  $$ values ('cancelled', 'paid') $$, 'A commission already paid stays paid');
update public.orders set updated_at = now() - interval '1 day';
update public.commissions set updated_at = now() - interval '1 day' where technician_id = portal_tests.uid('tech_a');
select is((select bool_and(updated_at = now()) from public.orders), true, 'Updating an order refreshes updated_at');
select is((select updated_at from public.commissions where technician_id = portal_tests.uid('tech_a')), now(), 'Updating a commission refreshes updated_at');

select * from finish();
rollback;
