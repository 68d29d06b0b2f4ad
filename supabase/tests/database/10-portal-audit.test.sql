-- The audit log: readable by admins and super admins only, append-only for everyone, appended by
-- the portal's triggers with the acting user, and by the service role for password resets.
begin;
select plan(13);

select portal_tests.create_user('tech_a', '{technician}');
select portal_tests.create_user('admin_1', '{admin}');
select portal_tests.create_user('super_1', '{super_admin}');

select portal_tests.act_as('tech_a');
select is_empty($$ select * from public.audit_log $$, 'A technician cannot read the audit log');
select throws_ok($$ insert into public.audit_log (action, entity_type, entity_id) values ('proposal.approved', 'proposal', 'x') $$,
  '42501', 'permission denied for table audit_log', 'A technician cannot write to the audit log');
reset role;

select portal_tests.act_as_anon();
select throws_ok($$ select * from public.audit_log $$, '42501', 'permission denied for table audit_log', 'Anonymous callers cannot read the audit log');
reset role;

select portal_tests.act_as('admin_1');
select is((select count(*) from public.audit_log), portal_tests.count_rows('public.audit_log'), 'An admin reads the whole audit log');
select ok(exists (select 1 from public.audit_log where action = 'role.granted' and entity_id = portal_tests.uid('tech_a')::text),
  'It includes the role grants of this test''s users');
select throws_ok($$ insert into public.audit_log (action, entity_type, entity_id) values ('product.deleted', 'product', 'x') $$,
  '42501', 'permission denied for table audit_log', 'An admin cannot forge audit entries');
select throws_ok($$ delete from public.audit_log $$, '42501', 'permission denied for table audit_log', 'An admin cannot delete audit entries');
reset role;

select portal_tests.act_as('super_1');
select is((select count(*) from public.audit_log), portal_tests.count_rows('public.audit_log'), 'A super admin reads the whole audit log');
select throws_ok($$ update public.audit_log set action = 'role.revoked' $$, '42501', 'permission denied for table audit_log', 'A super admin cannot rewrite audit entries');
reset role;

set local role service_role;
select lives_ok($$ insert into public.audit_log (action, actor_id, entity_type, entity_id) values ('user.password_reset', portal_tests.uid('admin_1'), 'user', portal_tests.uid('tech_a')::text) $$,
  'The service role may append (admin-reset-password records resets this way)');
select throws_ok($$ delete from public.audit_log where action = 'user.password_reset' $$, '42501', null, 'The service role cannot delete entries');
reset role;

select throws_ok($$ update public.audit_log set details = '{}' where action = 'user.password_reset' $$,
  '42501', 'The audit log is append-only: UPDATE is not allowed', 'Even the table owner cannot change an entry');
select throws_ok($$ insert into public.audit_log (action, entity_type, entity_id) values ('Not A Verb', 'x', 'x') $$,
  '23514', null, 'Actions are <entity>.<verb> slugs');

select * from finish();
rollback;
