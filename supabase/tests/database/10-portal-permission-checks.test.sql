-- The permission checks the portal's edge functions make in one call: proposal_document (who may
-- print or send a proposal) and password_reset_refusal (who may reset whose password), for anon,
-- technicians, a user without role, admins and super admins.
begin;
select plan(22);

select portal_tests.create_user('tech_a', '{technician}');
select portal_tests.create_user('tech_b', '{technician}');
select portal_tests.create_user('plain');
select portal_tests.create_user('admin_1', '{admin}');
select portal_tests.create_user('admin_2', '{admin}');
select portal_tests.create_user('super_1', '{super_admin}');

create temporary table ids (name text primary key, id uuid) on commit drop;
grant select on ids to authenticated, anon;
insert into ids values
  ('retired', portal_tests.create_product('Permission Retired')),
  ('customer_a', portal_tests.create_customer('tech_a', 'Alfa Permissoes', '11222333000181'));
insert into ids values ('proposal_a', portal_tests.create_proposal('tech_a', (select id from ids where name = 'customer_a'), (select id from ids where name = 'retired')));
-- The document follows the proposal: its product retired since and its customer handed to another
-- technician, it still names both.
update public.products set is_active = false where id = (select id from ids where name = 'retired');
update public.customers set technician_id = portal_tests.uid('tech_b') where id = (select id from ids where name = 'customer_a');

-- proposal_document --------------------------------------------------------------------------------

select portal_tests.act_as('tech_a');
select is(public.proposal_document((select id from ids where name = 'proposal_a')) -> 'customers' ->> 'company_name', 'Alfa Permissoes',
  'The proposal''s technician gets its document, with a customer since handed to someone else');
select is(public.proposal_document((select id from ids where name = 'proposal_a')) -> 'products' ->> 'name', 'Permission Retired',
  'and a product since retired');
select is(public.proposal_document((select id from ids where name = 'proposal_a')) -> 'profiles' ->> 'email', 'tech_a@portal.test',
  'and the technician''s own name and e-mail');
select is(public.proposal_document(gen_random_uuid()), null, 'A missing proposal gives null');
reset role;

select portal_tests.act_as('tech_b');
select is(public.proposal_document((select id from ids where name = 'proposal_a')), null,
  'Another technician gets null, as for a missing proposal (even holding its customer now)');
reset role;

select portal_tests.act_as('plain');
select is(public.proposal_document((select id from ids where name = 'proposal_a')), null, 'A user without role gets null');
reset role;

select portal_tests.act_as('admin_1');
select is(public.proposal_document((select id from ids where name = 'proposal_a')) ->> 'technician_id', portal_tests.uid('tech_a')::text,
  'An admin gets any proposal''s document');
reset role;

select portal_tests.act_as('super_1');
select is(public.proposal_document((select id from ids where name = 'proposal_a')) ->> 'code',
  (select code from public.proposals where id = (select id from ids where name = 'proposal_a')),
  'A super admin gets any proposal''s document');
reset role;

select portal_tests.act_as_anon();
select throws_ok($$ select public.proposal_document(gen_random_uuid()) $$, '42501', null, 'Anonymous callers cannot call proposal_document');
reset role;

-- password_reset_refusal ---------------------------------------------------------------------------

select portal_tests.act_as('tech_a');
select is(public.password_reset_refusal(portal_tests.uid('tech_b')), 'not_an_admin', 'A technician may not reset a password');
select is(public.password_reset_refusal(portal_tests.uid('tech_a')), 'not_an_admin', 'not even their own');
select is(public.password_reset_refusal(gen_random_uuid()), 'not_an_admin', 'and learns nothing about ids that do not exist');
reset role;

select portal_tests.act_as('plain');
select is(public.password_reset_refusal(portal_tests.uid('tech_a')), 'not_an_admin', 'A user without role may not reset a password');
reset role;

select portal_tests.act_as('admin_1');
select is(public.password_reset_refusal(portal_tests.uid('tech_a')), null, 'An admin may reset a technician''s password');
select is(public.password_reset_refusal(portal_tests.uid('admin_2')), null, 'and another admin''s');
select is(public.password_reset_refusal(portal_tests.uid('plain')), null, 'and a user without role''s');
select is(public.password_reset_refusal(portal_tests.uid('super_1')), 'target_is_super_admin', 'but not a super admin''s');
reset role;

select portal_tests.act_as('super_1');
select is(public.password_reset_refusal(portal_tests.uid('super_1')), null, 'A super admin may reset a super admin''s password');
select is(public.password_reset_refusal(portal_tests.uid('admin_1')), null, 'and an admin''s');
reset role;

-- A user who is both admin and super admin is held to the higher role.
select portal_tests.create_user('both', '{admin,super_admin}');
select portal_tests.act_as('admin_2');
select is(public.password_reset_refusal(portal_tests.uid('both')), 'target_is_super_admin', 'A super admin who is also an admin is still above an admin');
reset role;

select portal_tests.act_as_anon();
select throws_ok($$ select public.password_reset_refusal(gen_random_uuid()) $$, '42501', null, 'Anonymous callers cannot call password_reset_refusal');
reset role;

select ok((select prosecdef from pg_proc where oid = 'public.password_reset_refusal(uuid)'::regprocedure)
  and (select prosecdef from pg_proc where oid = 'public.proposal_document(uuid)'::regprocedure),
  'Both are security definer, so they read roles no caller can read');

select * from finish();
rollback;
