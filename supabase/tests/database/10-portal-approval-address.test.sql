-- The address an approval link answers to cannot be redirected while the link is open: a
-- customer's e-mail is locked while one of its proposals is pending with an unexpired link (for
-- technicians, admins, super admins and server code alike), and a proposal's customer never
-- changes. Other edits go on as before.
begin;
select plan(22);

select portal_tests.create_user('tech_a', '{technician}');
select portal_tests.create_user('tech_b', '{technician}');
select portal_tests.create_user('admin_1', '{admin}');
select portal_tests.create_user('super_1', '{super_admin}');

create temporary table ids (name text primary key, id uuid) on commit drop;
grant select, insert on ids to authenticated, service_role;
insert into ids values
  ('product', portal_tests.create_product('Address Product', 100, 0.1)),
  ('waiting', portal_tests.create_customer('tech_a', 'Alfa', '11222333000181', 'compras@alfa.test')),
  ('idle', portal_tests.create_customer('tech_a', 'Bravo', '33444555000181', 'compras@bravo.test')),
  ('own_address', portal_tests.create_customer('tech_a', 'Charlie', '12ABC34501DE35', 'tech_a@portal.test'));
insert into ids values
  ('open', portal_tests.create_proposal('tech_a', (select id from ids where name = 'waiting'), (select id from ids where name = 'product'))),
  ('second', portal_tests.create_proposal('tech_a', (select id from ids where name = 'waiting'), (select id from ids where name = 'product')));

create temporary table codes on commit drop as
select string_agg(code, ', ' order by code) as open_codes,
  (select code from public.proposals where id = (select id from ids where name = 'open')) as first_code
from public.proposals where customer_id = (select id from ids where name = 'waiting');
grant select on codes to authenticated, service_role;

-- The customer's e-mail while a link is open ----------------------------------------------------

select portal_tests.act_as('tech_a');
select throws_ok($$ update public.customers set email = 'tech_a.pessoal@portal.test' where id = (select id from ids where name = 'waiting') $$,
  'P0001', format('The e-mail of customer "Alfa" cannot change while proposals await its answer (%s)', (select open_codes from codes)),
  'A technician cannot point a customer with open approval links at another address (naming every open proposal)');
select results_eq($$ select email from public.customers where id = (select id from ids where name = 'waiting') $$,
  $$ values ('compras@alfa.test') $$, 'The address on file is unchanged');
select lives_ok($$ update public.customers set email = '  COMPRAS@Alfa.test ' where id = (select id from ids where name = 'waiting') $$,
  'Re-typing the same address in another case is no change, so it passes');
select results_eq($$ update public.customers set contact_name = 'Marcos P.', phone = '(11) 3333-4444' where id = (select id from ids where name = 'waiting') returning contact_name $$,
  $$ values ('Marcos P.') $$, 'The customer''s other fields stay editable');
select results_eq($$ update public.customers set email = 'novo@bravo.test' where id = (select id from ids where name = 'idle') returning email $$,
  $$ values ('novo@bravo.test') $$, 'A customer without open proposals can change its e-mail');
reset role;

select portal_tests.act_as('admin_1');
select throws_ok($$ update public.customers set email = 'admin_1@portal.test' where id = (select id from ids where name = 'waiting') $$,
  'P0001', null, 'An admin cannot change it either');
reset role;
select portal_tests.act_as('super_1');
select throws_ok($$ update public.customers set email = 'super_1@portal.test' where id = (select id from ids where name = 'waiting') $$,
  'P0001', null, 'Nor can a super admin');
reset role;
set local role service_role;
select throws_ok($$ update public.customers set email = 'server@portal.test' where id = (select id from ids where name = 'waiting') $$,
  'P0001', null, 'Nor server code with the service role: the lock is in the table, not in a policy');
reset role;

-- The lock follows the proposals, not whoever owns the customer now -------------------------------

select portal_tests.act_as('admin_1');
select results_eq($$ update public.customers set technician_id = portal_tests.uid('tech_b') where id = (select id from ids where name = 'waiting') returning technician_id $$,
  $$ values (portal_tests.uid('tech_b')) $$, 'An admin transfers the customer to another technician (its proposals stay with the first)');
reset role;
select portal_tests.act_as('tech_b');
select is((select count(*)::integer from public.proposals where customer_id = (select id from ids where name = 'waiting')), 0,
  'The new technician cannot see the first technician''s open proposals');
select throws_ok($$ update public.customers set email = 'tech_b@portal.test' where id = (select id from ids where name = 'waiting') $$,
  'P0001', format('The e-mail of customer "Alfa" cannot change while proposals await its answer (%s)', (select open_codes from codes)),
  'Yet the new technician cannot change the address those proposals answer to');
reset role;

-- Once no link is open --------------------------------------------------------------------------

select portal_tests.act_as('tech_a');
select lives_ok($$ update public.proposals set status = 'cancelled' where id = (select id from ids where name = 'second') $$,
  'The technician cancels one open proposal');
reset role;
select portal_tests.act_as('tech_b');
select throws_ok($$ update public.customers set email = 'tech_b@portal.test' where id = (select id from ids where name = 'waiting') $$,
  'P0001', format('The e-mail of customer "Alfa" cannot change while proposals await its answer (%s)', (select first_code from codes)),
  'One open proposal is enough to keep the lock');
reset role;

update public.proposals set approval_token_expires_at = now() - interval '1 second' where id = (select id from ids where name = 'open');
select portal_tests.act_as('tech_b');
select results_eq($$ update public.customers set email = 'financeiro@alfa.test' where id = (select id from ids where name = 'waiting') returning email $$,
  $$ values ('financeiro@alfa.test') $$, 'A pending proposal whose link expired no longer holds it (the link cannot be used)');
reset role;

insert into ids values ('answered', portal_tests.create_proposal('tech_a', (select id from ids where name = 'own_address'), (select id from ids where name = 'product')));
select portal_tests.set_status((select id from ids where name = 'answered'), 'approved');
select portal_tests.act_as('tech_a');
select results_eq($$ update public.customers set email = 'compras@charlie.test' where id = (select id from ids where name = 'own_address') returning email $$,
  $$ values ('compras@charlie.test') $$, 'An answered proposal does not hold it either (its link was used)');
reset role;

-- A proposal's customer ---------------------------------------------------------------------------

insert into ids values ('fresh', portal_tests.create_proposal('tech_a', (select id from ids where name = 'idle'), (select id from ids where name = 'product')));
select portal_tests.act_as('tech_a');
select throws_ok($$ update public.proposals set customer_id = (select id from ids where name = 'own_address') where id = (select id from ids where name = 'fresh') $$,
  'P0001', format('The customer of proposal %s cannot change', (select code from public.proposals where id = (select id from ids where name = 'fresh'))),
  'A technician cannot move a pending proposal to a customer with an address they control');
select results_eq($$ select customer_id from public.proposals where id = (select id from ids where name = 'fresh') $$,
  $$ select id from ids where name = 'idle' $$, 'The proposal keeps its customer');
select results_eq($$ update public.proposals set monthly_value = 120, notes = 'Desconto' where id = (select id from ids where name = 'fresh') returning total_value $$,
  $$ values (1440.00::numeric) $$, 'A pending proposal''s values and notes stay editable');
select lives_ok($$ update public.proposals set customer_id = (select id from ids where name = 'idle') where id = (select id from ids where name = 'fresh') $$,
  'Naming the same customer again is no change, so it passes');
reset role;

select portal_tests.act_as('admin_1');
select throws_ok($$ update public.proposals set customer_id = (select id from ids where name = 'own_address') where id = (select id from ids where name = 'fresh') $$,
  'P0001', null, 'An admin cannot move it either');
reset role;
set local role service_role;
select throws_ok($$ update public.proposals set customer_id = (select id from ids where name = 'own_address') where id = (select id from ids where name = 'fresh') $$,
  'P0001', null, 'Nor server code');
reset role;

select portal_tests.act_as('tech_a');
select throws_ok($$ update public.proposals set customer_id = (select id from ids where name = 'idle') where id = (select id from ids where name = 'answered') $$,
  'P0001', format('Proposal %s is approved and can no longer be edited', (select code from public.proposals where id = (select id from ids where name = 'answered'))),
  'Outside pending the frozen-values rule still answers first');
reset role;

select * from finish();
rollback;
