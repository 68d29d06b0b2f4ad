-- Who is who: profiles created with every auth user, has_role and has_any_role, and the policies
-- of profiles and user_roles for anon, technicians, a user without role, admins and super admins.
-- Role changes are audited, and the last super admin cannot be removed.
begin;
select plan(47);

select portal_tests.create_user('tech_a', '{technician}');
select portal_tests.create_user('tech_b', '{technician}');
select portal_tests.create_user('plain');
select portal_tests.create_user('admin_1', '{admin}');
select portal_tests.create_user('super_1', '{super_admin}');

-- Profiles follow auth.users -----------------------------------------------------------------------

select results_eq($$ select full_name, email from public.profiles where user_id = portal_tests.uid('tech_a') $$,
  $$ values ('Tech A', 'tech_a@portal.test') $$,
  'A new auth user gets a profile with the name from its sign-up metadata');
update auth.users set email = 'tech_a.new@portal.test' where id = portal_tests.uid('tech_a');
select is((select email from public.profiles where user_id = (select id from auth.users where email = 'tech_a.new@portal.test')),
  'tech_a.new@portal.test', 'Changing the auth e-mail updates the profile');
update auth.users set email = 'tech_a@portal.test' where email = 'tech_a.new@portal.test';

-- has_role ---------------------------------------------------------------------------------------

select ok(public.has_role(portal_tests.uid('tech_a'), 'technician'), 'has_role is true for a granted role');
select ok(not public.has_role(portal_tests.uid('tech_a'), 'admin'), 'has_role is false for a role not granted');
select ok(not public.has_role(null, 'admin'), 'has_role is false for no user');
select ok(not public.has_role(portal_tests.uid('super_1'), 'admin'), 'super_admin does not imply the admin row (policies name both)');
select ok(portal_private.has_any_role(portal_tests.uid('super_1'), '{admin,super_admin}'), 'has_any_role is true when the user holds one of the roles');
select ok(not portal_private.has_any_role(portal_tests.uid('tech_a'), '{admin,super_admin}'), 'has_any_role is false when the user holds none of them');

-- Anonymous callers --------------------------------------------------------------------------------

select portal_tests.act_as_anon();
select throws_ok($$ select * from public.profiles $$, '42501', 'permission denied for table profiles', 'Anonymous callers cannot read profiles');
select throws_ok($$ select * from public.user_roles $$, '42501', 'permission denied for table user_roles', 'Anonymous callers cannot read roles');
select throws_ok($$ select public.has_role(portal_tests.uid('admin_1'), 'admin') $$, '42501', null, 'Anonymous callers cannot call has_role');
reset role;

-- A technician -----------------------------------------------------------------------------------

select portal_tests.act_as('tech_a');
select results_eq($$ select user_id from public.profiles $$, $$ select portal_tests.uid('tech_a') $$,
  'A technician reads only their own profile');
select results_eq($$ select role::text from public.user_roles $$, $$ values ('technician') $$,
  'A technician reads only their own roles');
select ok(public.has_role(portal_tests.uid('tech_a'), 'technician'), 'A technician can call has_role');
select results_eq($$ update public.profiles set full_name = 'Ana Técnica' where user_id = portal_tests.uid('tech_a') returning full_name $$,
  $$ values ('Ana Técnica') $$, 'A technician can rename their own profile');
select is_empty($$ update public.profiles set full_name = 'Hacked' where user_id = portal_tests.uid('tech_b') returning 1 $$,
  'A technician cannot update another user''s profile');
select throws_ok($$ update public.profiles set email = 'x@y.com' where user_id = portal_tests.uid('tech_a') $$,
  '42501', 'permission denied for table profiles', 'Nobody edits the profile e-mail directly (it follows auth)');
select throws_ok($$ delete from public.profiles where user_id = portal_tests.uid('tech_a') $$,
  '42501', 'permission denied for table profiles', 'Profiles cannot be deleted through the API');
select throws_ok($$ insert into public.user_roles (user_id, role) values (portal_tests.uid('tech_a'), 'admin') $$,
  '42501', 'new row violates row-level security policy for table "user_roles"', 'A technician cannot promote themselves');
select throws_ok($$ insert into public.user_roles (user_id, role) values (portal_tests.uid('plain'), 'technician') $$,
  '42501', 'new row violates row-level security policy for table "user_roles"', 'A technician cannot grant roles to others');
select is_empty($$ delete from public.user_roles where user_id = portal_tests.uid('tech_b') returning 1 $$,
  'A technician cannot revoke other users'' roles');
reset role;

-- A user without role ------------------------------------------------------------------------------

select portal_tests.act_as('plain');
select results_eq($$ select user_id from public.profiles $$, $$ select portal_tests.uid('plain') $$,
  'A user without role reads only their own profile');
select is_empty($$ select * from public.user_roles $$, 'A user without role has no roles to read');
reset role;

-- An admin -----------------------------------------------------------------------------------------

select portal_tests.act_as('admin_1');
select is((select count(*) from public.profiles), portal_tests.count_rows('public.profiles'), 'An admin reads every profile');
select is((select count(*) from public.user_roles), portal_tests.count_rows('public.user_roles'), 'An admin reads every role');
select results_eq($$ update public.profiles set full_name = 'Bruno Técnico' where user_id = portal_tests.uid('tech_b') returning full_name $$,
  $$ values ('Bruno Técnico') $$, 'An admin can update any profile');
select lives_ok($$ insert into public.user_roles (user_id, role) values (portal_tests.uid('plain'), 'technician') $$,
  'An admin can grant the technician role');
select throws_ok($$ insert into public.user_roles (user_id, role) values (portal_tests.uid('plain'), 'admin') $$,
  '42501', 'new row violates row-level security policy for table "user_roles"', 'An admin cannot grant the admin role');
select throws_ok($$ insert into public.user_roles (user_id, role) values (portal_tests.uid('admin_1'), 'super_admin') $$,
  '42501', 'new row violates row-level security policy for table "user_roles"', 'An admin cannot make anyone super admin');
select throws_ok($$ insert into public.user_roles (user_id, role) values (portal_tests.uid('tech_a'), 'technician') $$,
  '23505', null, 'Granting a role twice is a uniqueness violation');
select is_empty($$ update public.user_roles set role = 'admin' where user_id = portal_tests.uid('plain') returning 1 $$,
  'An admin cannot change a role in place');
select is_empty($$ delete from public.user_roles where user_id = portal_tests.uid('super_1') returning 1 $$,
  'An admin cannot revoke a super admin role');
select results_eq($$ delete from public.user_roles where user_id = portal_tests.uid('plain') and role = 'technician' returning role::text $$,
  $$ values ('technician') $$, 'An admin can revoke the technician role');
reset role;

-- A super admin ----------------------------------------------------------------------------------

select portal_tests.act_as('super_1');
select is((select count(*) from public.profiles), portal_tests.count_rows('public.profiles'), 'A super admin reads every profile');
select is((select count(*) from public.user_roles), portal_tests.count_rows('public.user_roles'), 'A super admin reads every role');
select lives_ok($$ insert into public.user_roles (user_id, role) values (portal_tests.uid('plain'), 'admin') $$,
  'A super admin can grant the admin role');
select results_eq($$ update public.user_roles set role = 'technician' where user_id = portal_tests.uid('plain') returning role::text $$,
  $$ values ('technician') $$, 'A super admin can change a role');
select results_eq($$ delete from public.user_roles where user_id = portal_tests.uid('plain') returning role::text $$,
  $$ values ('technician') $$, 'A super admin can revoke any role');
select results_eq($$ update public.profiles set full_name = 'Admin Um' where user_id = portal_tests.uid('admin_1') returning full_name $$,
  $$ values ('Admin Um') $$, 'A super admin can update any profile');
reset role;

-- Role changes are audited -----------------------------------------------------------------------

select results_eq($$
  select action, actor_id, details ->> 'role' from public.audit_log
  where entity_type = 'user_role' and entity_id = portal_tests.uid('plain')::text order by id
$$, $$ values
  ('role.granted', portal_tests.uid('admin_1'), 'technician'),
  ('role.revoked', portal_tests.uid('admin_1'), 'technician'),
  ('role.granted', portal_tests.uid('super_1'), 'admin'),
  ('role.revoked', portal_tests.uid('super_1'), 'admin'),
  ('role.granted', portal_tests.uid('super_1'), 'technician'),
  ('role.revoked', portal_tests.uid('super_1'), 'technician')
$$, 'Every grant, change and revocation is in the audit log with its actor');

-- The last super admin stays -----------------------------------------------------------------------

delete from public.user_roles where role = 'super_admin' and user_id <> portal_tests.uid('super_1');
select throws_ok($$ delete from public.user_roles where user_id = portal_tests.uid('super_1') $$,
  '23514', 'The last super_admin role cannot be removed', 'The last super admin role cannot be revoked');
select throws_ok($$ update public.user_roles set role = 'admin' where user_id = portal_tests.uid('super_1') $$,
  '23514', 'The last super_admin role cannot be removed', 'The last super admin role cannot be changed into another');
select lives_ok($$ delete from auth.users where id = portal_tests.uid('super_1') $$,
  'Deleting the account itself is still possible (the role goes with it)');
select is((select count(*)::integer from public.profiles where user_id not in (select id from auth.users)), 0,
  'Deleting an auth user deletes its profile');
select is((select count(*)::integer from public.user_roles where user_id not in (select id from auth.users)), 0,
  'Deleting an auth user deletes its roles');

-- updated_at -------------------------------------------------------------------------------------

update public.user_roles set created_at = now() - interval '1 day', updated_at = now() - interval '1 day' where user_id = portal_tests.uid('tech_b');
update public.user_roles set role = 'technician' where user_id = portal_tests.uid('tech_b');
select is((select updated_at from public.user_roles where user_id = portal_tests.uid('tech_b')), now(),
  'Updating a role row refreshes updated_at');
update public.profiles set updated_at = now() - interval '1 day' where user_id = portal_tests.uid('tech_b');
select is((select updated_at from public.profiles where user_id = portal_tests.uid('tech_b')), now(),
  'A client cannot backdate updated_at: the trigger overwrites it');

select * from finish();
rollback;
