-- Proposals: what a new proposal gets (code, approval token, expiry, total), what it may point
-- to, the status machine and who may drive it, frozen values, auditing, and the policies for
-- anon, two technicians, a user without role, admins and super admins.
begin;
select plan(65);

select portal_tests.create_user('tech_a', '{technician}');
select portal_tests.create_user('tech_b', '{technician}');
select portal_tests.create_user('plain');
select portal_tests.create_user('admin_1', '{admin}');
select portal_tests.create_user('super_1', '{super_admin}');

create temporary table ids (name text primary key, id uuid) on commit drop;
grant select, insert on ids to authenticated;
insert into ids values
  ('product', portal_tests.create_product('Proposals Product', 100, 0.1)),
  ('retired', portal_tests.create_product('Proposals Retired', _active => false)),
  ('customer_a', portal_tests.create_customer('tech_a', 'Alfa', '11222333000181')),
  ('customer_b', portal_tests.create_customer('tech_b', 'Bravo', '33444555000181'));
insert into ids values ('proposal_b', portal_tests.create_proposal('tech_b', (select id from ids where name = 'customer_b'), (select id from ids where name = 'product')));

-- generate_approval_token --------------------------------------------------------------------------

select matches(public.generate_approval_token(), '^[A-Za-z0-9_-]{43}$', 'generate_approval_token gives 43 URL-safe characters (256 bits, base64url, no padding)');
select is((select count(distinct public.generate_approval_token())::integer from generate_series(1, 2000)), 2000, 'It never repeats in 2,000 draws');
select ok(
  (select count(distinct c) > 60 from (select regexp_split_to_table(public.generate_approval_token(), '') as c from generate_series(1, 200)) as chars),
  'Its output spans the whole base64url alphabet'
);
select is((select provolatile from pg_proc where oid = 'public.generate_approval_token()'::regprocedure), 'v', 'It is volatile, so every call draws anew');

-- What a new proposal gets -------------------------------------------------------------------------

select portal_tests.act_as('tech_a');
with created as (
  insert into public.proposals (customer_id, product_id, monthly_value, contract_months)
  values ((select id from ids where name = 'customer_a'), (select id from ids where name = 'product'), 149.90, 12)
  returning id
)
insert into ids select 'first', id from created;
select results_eq($$ select technician_id, status::text, total_value from public.proposals where id = (select id from ids where name = 'first') $$,
  $$ values (portal_tests.uid('tech_a'), 'pending', 1798.80::numeric) $$,
  'A technician''s new proposal is theirs, pending, with total_value = monthly_value × contract_months');
select matches((select code from public.proposals where id = (select id from ids where name = 'first')), '^PROP-[0-9]{6}-[0-9]{3,}$',
  'It gets a PROP-YYYYMM-NNN code');
select is((select substr(code, 6, 6) from public.proposals where id = (select id from ids where name = 'first')),
  to_char(now() at time zone 'America/Sao_Paulo', 'YYYYMM'), 'The code carries the month of creation');
-- The token is issued when the proposal is e-mailed, not on insert (10-portal-approval-token).
reset role;
select is((select count(*)::integer from portal_private.proposal_approval_tokens where proposal_id = (select id from ids where name = 'first')), 0,
  'It gets no approval token yet: one is issued when the proposal is e-mailed');
select matches(public.issue_approval_token((select id from ids where name = 'first')), '^[A-Za-z0-9_-]{43}$',
  'The token issued for it is 43 base64url characters (256 bits)');
select portal_tests.act_as('tech_a');
select is((select approval_token_expires_at from public.proposals where id = (select id from ids where name = 'first')), now() + interval '30 days',
  'The approval token expires 30 days after creation');
select is((select approval_token_used_at from public.proposals where id = (select id from ids where name = 'first')), null,
  'The approval token starts unused');
with created as (
  insert into public.proposals (customer_id, product_id, monthly_value, contract_months, total_value)
  values ((select id from ids where name = 'customer_a'), (select id from ids where name = 'product'), 100, 24, 2400)
  returning id
)
insert into ids select 'second', id from created;
select is(
  (select substr(code, 13)::integer from public.proposals where id = (select id from ids where name = 'second')),
  (select substr(code, 13)::integer + 1 from public.proposals where id = (select id from ids where name = 'first')),
  'Codes are sequential within the month'
);
reset role;
select isnt(public.issue_approval_token((select id from ids where name = 'second')),
  public.issue_approval_token((select id from ids where name = 'first')), 'Every token issued is a fresh one');
select portal_tests.act_as('tech_a');
select is((select total_value from public.proposals where id = (select id from ids where name = 'second')), 2400.00,
  'A client-sent total_value that matches is accepted');

-- What a new proposal may not be -------------------------------------------------------------------

select throws_ok($$ insert into public.proposals (customer_id, product_id, monthly_value, contract_months, total_value)
  values ((select id from ids where name = 'customer_a'), (select id from ids where name = 'product'), 100, 12, 1000) $$,
  '23514', 'total_value 1000.00 does not equal monthly_value × contract_months (1200.00)', 'A mismatching total_value is refused');
select throws_ok($$ insert into public.proposals (customer_id, product_id, monthly_value, contract_months, status)
  values ((select id from ids where name = 'customer_a'), (select id from ids where name = 'product'), 100, 12, 'approved') $$,
  '23514', 'A new proposal must be pending, not approved', 'A proposal cannot be created approved');
select throws_ok($$ insert into public.proposals (customer_id, product_id, monthly_value, contract_months)
  values ((select id from ids where name = 'customer_a'), (select id from ids where name = 'retired'), 100, 12) $$,
  '23514', format('Product %s is inactive and cannot be proposed', (select id from ids where name = 'retired')), 'An inactive product is refused');
select throws_ok($$ insert into public.proposals (customer_id, product_id, monthly_value, contract_months)
  values ((select id from ids where name = 'customer_a'), '00000000-0000-0000-0000-000000000001', 100, 12) $$,
  '23503', 'Unknown product 00000000-0000-0000-0000-000000000001', 'An unknown product is refused');
select throws_ok($$ insert into public.proposals (customer_id, product_id, monthly_value, contract_months)
  values ('00000000-0000-0000-0000-000000000002', (select id from ids where name = 'product'), 100, 12) $$,
  '23503', 'Unknown customer 00000000-0000-0000-0000-000000000002', 'An unknown customer is refused');
select throws_ok($$ insert into public.proposals (customer_id, product_id, monthly_value, contract_months)
  values ((select id from ids where name = 'customer_b'), (select id from ids where name = 'product'), 100, 12) $$,
  '42501', format('Customer %s belongs to another technician', (select id from ids where name = 'customer_b')),
  'A technician cannot propose to another technician''s customer');
select throws_ok($$ insert into public.proposals (technician_id, customer_id, product_id, monthly_value, contract_months)
  values (portal_tests.uid('tech_b'), (select id from ids where name = 'customer_b'), (select id from ids where name = 'product'), 100, 12) $$,
  '42501', 'new row violates row-level security policy for table "proposals"', 'A technician cannot create a proposal for another technician');
select throws_ok($$ insert into public.proposals (customer_id, product_id, monthly_value, contract_months)
  values ((select id from ids where name = 'customer_a'), (select id from ids where name = 'product'), -10, 12) $$,
  '23514', null, 'A negative monthly value is refused');
select throws_ok($$ insert into public.proposals (customer_id, product_id, monthly_value, contract_months)
  values ((select id from ids where name = 'customer_a'), (select id from ids where name = 'product'), 100, 0) $$,
  '23514', null, 'Zero contract months are refused');
select throws_ok($$ insert into public.proposals (customer_id, product_id, monthly_value, contract_months, approval_token_used_at)
  values ((select id from ids where name = 'customer_a'), (select id from ids where name = 'product'), 100, 12, now()) $$,
  '42501', 'permission denied for table proposals', 'A client cannot mark the approval link used');
select throws_ok($$ update public.proposals set approval_token_expires_at = now() + interval '1 year' where id = (select id from ids where name = 'first') $$,
  '42501', 'permission denied for table proposals', 'A client cannot extend the token expiry');
select is((select count(*)::integer from public.proposals), 2, 'None of the refused inserts left a row behind');

-- Editing while pending ----------------------------------------------------------------------------

select results_eq($$ update public.proposals set monthly_value = 200 where id = (select id from ids where name = 'first') returning total_value $$,
  $$ values (2400.00::numeric) $$, 'Changing monthly_value recomputes total_value');
select results_eq($$ update public.proposals set contract_months = 6 where id = (select id from ids where name = 'first') returning total_value $$,
  $$ values (1200.00::numeric) $$, 'Changing contract_months recomputes total_value');
select throws_ok($$ update public.proposals set total_value = 1 where id = (select id from ids where name = 'first') $$,
  '23514', null, 'Setting a wrong total_value directly is refused');
select throws_ok($$ update public.proposals set product_id = (select id from ids where name = 'retired') where id = (select id from ids where name = 'first') $$,
  '23514', null, 'Switching to an inactive product is refused');

-- Status moves a technician may and may not make --------------------------------------------------

select throws_ok($$ update public.proposals set status = 'approved' where id = (select id from ids where name = 'first') $$,
  '42501', format('Only the customer can approve proposal %s, through its approval link', (select code from public.proposals where id = (select id from ids where name = 'first'))),
  'A technician cannot approve their own proposal');
select throws_ok($$ update public.proposals set status = 'rejected' where id = (select id from ids where name = 'first') $$,
  '42501', null, 'A technician cannot reject a proposal on the customer''s behalf');
select throws_ok($$ update public.proposals set status = 'active' where id = (select id from ids where name = 'first') $$,
  'P0001', format('Illegal status change for proposal %s: pending → active', (select code from public.proposals where id = (select id from ids where name = 'first'))),
  'A pending proposal cannot jump to active');
select results_eq($$ update public.proposals set status = 'cancelled' where id = (select id from ids where name = 'second') returning status::text, cancelled_at $$,
  $$ values ('cancelled', now()) $$, 'A technician can cancel their own pending proposal');
select throws_ok($$ update public.proposals set status = 'pending' where id = (select id from ids where name = 'second') $$,
  'P0001', null, 'A cancelled proposal is final');
select is_empty($$ update public.proposals set notes = 'mine now' where id = (select id from ids where name = 'proposal_b') returning 1 $$,
  'A technician cannot edit another technician''s proposal');
select is_empty($$ delete from public.proposals where id = (select id from ids where name = 'first') returning 1 $$,
  'A technician cannot delete proposals');
reset role;

-- After the customer approves ----------------------------------------------------------------------

select portal_tests.set_status((select id from ids where name = 'first'), 'approved');
select is((select approval_token_used_at from public.proposals where id = (select id from ids where name = 'first')), now(),
  'Approving stamps the token as used');
select portal_tests.act_as('tech_a');
select throws_ok($$ update public.proposals set monthly_value = 1 where id = (select id from ids where name = 'first') $$,
  'P0001', format('Proposal %s is approved and can no longer be edited', (select code from public.proposals where id = (select id from ids where name = 'first'))),
  'An approved proposal''s values are frozen');
select results_eq($$ update public.proposals set notes = 'Cliente pediu início em janeiro' where id = (select id from ids where name = 'first') returning notes $$,
  $$ values ('Cliente pediu início em janeiro') $$, 'Notes stay editable');
select throws_ok($$ update public.proposals set status = 'active' where id = (select id from ids where name = 'first') $$,
  '42501', 'Only admins can activate proposals', 'A technician cannot activate a proposal');
select throws_ok($$ update public.proposals set status = 'cancelled' where id = (select id from ids where name = 'first') $$,
  '42501', 'Only admins can cancel a proposal that is approved', 'A technician cannot cancel an approved proposal');
reset role;

select portal_tests.act_as('admin_1');
select throws_ok($$ update public.proposals set status = 'approved' where id = (select id from ids where name = 'proposal_b') $$,
  '42501', null, 'Even an admin cannot approve for the customer');
select throws_ok($$ update public.proposals set monthly_value = 1 where id = (select id from ids where name = 'first') $$,
  'P0001', null, 'Frozen values hold for admins too');
select results_eq($$ update public.proposals set status = 'active' where id = (select id from ids where name = 'first') returning status::text, activated_at $$,
  $$ values ('active', now()) $$, 'An admin can activate an approved proposal');
select throws_ok($$ update public.proposals set status = 'approved' where id = (select id from ids where name = 'first') $$,
  'P0001', null, 'An active proposal cannot go back to approved');
select results_eq($$ update public.proposals set status = 'cancelled' where id = (select id from ids where name = 'first') returning status::text $$,
  $$ values ('cancelled') $$, 'An admin can cancel an active proposal');
reset role;

select portal_tests.set_status((select id from ids where name = 'proposal_b'), 'rejected');
select portal_tests.act_as('admin_1');
select throws_ok($$ update public.proposals set status = 'active' where id = (select id from ids where name = 'proposal_b') $$,
  'P0001', null, 'A rejected proposal cannot be activated');
select throws_ok($$ update public.proposals set status = 'cancelled' where id = (select id from ids where name = 'proposal_b') $$,
  'P0001', null, 'A rejected proposal is final');
reset role;

-- Reading ----------------------------------------------------------------------------------------

select portal_tests.act_as('tech_a');
select results_eq($$ select id from public.proposals order by created_at desc, code desc $$,
  $$ select id from ids where name in ('second', 'first') order by name desc $$, 'A technician lists only their own proposals');
reset role;
select portal_tests.act_as('tech_b');
select results_eq($$ select id from public.proposals $$, $$ select id from ids where name = 'proposal_b' $$,
  'The other technician lists only theirs');
reset role;
select portal_tests.act_as('plain');
select is_empty($$ select id from public.proposals $$, 'A user without role sees no proposals');
select throws_ok($$ insert into public.proposals (customer_id, product_id, monthly_value, contract_months)
  values ((select id from ids where name = 'customer_a'), (select id from ids where name = 'product'), 100, 12) $$,
  '42501', null, 'A user without role cannot create proposals');
reset role;
select portal_tests.act_as_anon();
select throws_ok($$ select * from public.proposals $$, '42501', 'permission denied for table proposals', 'Anonymous callers cannot list proposals');
select throws_ok($$ select * from public.proposals where approval_token_expires_at is not null $$, '42501', null, 'Anonymous callers cannot filter proposals through the table');
reset role;
select portal_tests.act_as('admin_1');
select is((select count(*) from public.proposals), portal_tests.count_rows('public.proposals'), 'An admin reads every proposal');
select lives_ok($$ insert into public.proposals (technician_id, customer_id, product_id, monthly_value, contract_months)
  values (portal_tests.uid('tech_b'), (select id from ids where name = 'customer_b'), (select id from ids where name = 'product'), 80, 3) $$,
  'An admin can create a proposal for a technician');
select is_empty($$ delete from public.proposals where technician_id = portal_tests.uid('tech_b') returning 1 $$, 'An admin cannot delete proposals');
reset role;
select portal_tests.act_as('super_1');
select is((select count(*) from public.proposals), portal_tests.count_rows('public.proposals'), 'A super admin reads every proposal');
select lives_ok($$ insert into public.proposals (technician_id, customer_id, product_id, monthly_value, contract_months)
  values (portal_tests.uid('tech_a'), (select id from ids where name = 'customer_a'), (select id from ids where name = 'product'), 80, 3) $$,
  'A super admin can create a proposal for a technician');
select results_eq($$ update public.proposals set notes = 'revisado' where id = (select id from ids where name = 'proposal_b') returning notes $$,
  $$ values ('revisado') $$, 'A super admin can edit any proposal');
select results_eq($$ delete from public.proposals where technician_id = portal_tests.uid('tech_b') and status = 'pending' returning monthly_value $$,
  $$ values (80.00::numeric) $$, 'A super admin can delete a proposal');
reset role;

-- Audit and updated_at ---------------------------------------------------------------------------

select results_eq($$
  select action, actor_id, details ->> 'from', details ->> 'to' from public.audit_log
  where entity_type = 'proposal' and entity_id = (select id::text from ids where name = 'first') order by id
$$, $$ values
  ('proposal.created', portal_tests.uid('tech_a'), null, null),
  ('proposal.approved', null, 'pending', 'approved'),
  ('proposal.activated', portal_tests.uid('admin_1'), 'approved', 'active'),
  ('proposal.cancelled', portal_tests.uid('admin_1'), 'active', 'cancelled')
$$, 'Creation and every status change of a proposal are audited with their actor');
select is((select details ->> 'code' from public.audit_log where action = 'proposal.created' and entity_id = (select id::text from ids where name = 'first')),
  (select code from public.proposals where id = (select id from ids where name = 'first')), 'The creation entry carries the proposal code');
update public.proposals set updated_at = now() - interval '1 day' where id = (select id from ids where name = 'second');
select is((select updated_at from public.proposals where id = (select id from ids where name = 'second')), now(), 'Updating a proposal refreshes updated_at');

select * from finish();
rollback;
