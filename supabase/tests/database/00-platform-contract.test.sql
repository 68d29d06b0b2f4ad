-- The Supabase database contract the local platform bootstraps: roles, auth helpers, extensions.
begin;
select plan(27);

select is((select rolsuper from pg_roles where rolname = 'postgres'), false, 'postgres is not a superuser, as on hosted Supabase');
select is((select rolbypassrls from pg_roles where rolname = 'postgres'), true, 'postgres bypasses RLS, as on hosted Supabase');
select is((select rolcanlogin from pg_roles where rolname = 'anon'), false, 'anon cannot log in');
select is((select rolcanlogin from pg_roles where rolname = 'authenticated'), false, 'authenticated cannot log in');
select is((select rolbypassrls from pg_roles where rolname = 'service_role'), true, 'service_role bypasses RLS');
select is((select rolinherit from pg_roles where rolname = 'authenticator'), false, 'authenticator does not inherit its roles');
select ok(pg_has_role('authenticator', 'anon', 'member'), 'authenticator can switch to anon');
select ok(pg_has_role('authenticator', 'authenticated', 'member'), 'authenticator can switch to authenticated');
select ok(pg_has_role('authenticator', 'service_role', 'member'), 'authenticator can switch to service_role');
select ok(pg_has_role('postgres', 'authenticated', 'member'), 'postgres can set role authenticated in tests');
select ok(not pg_has_role('authenticator', 'supabase_admin', 'member'), 'authenticator is not a member of supabase_admin');
select ok(pg_has_role('supabase_storage_admin', 'authenticated', 'member'), 'the storage service can act as the caller');
select is((select rolsuper from pg_roles where rolname = 'supabase_admin'), true, 'supabase_admin is the superuser');

select has_schema('auth', 'schema auth exists');
select has_schema('storage', 'schema storage exists');
select has_schema('extensions', 'schema extensions exists');
select has_schema('graphql_public', 'schema graphql_public exists');
select columns_are('auth', 'refresh_tokens',
  array['instance_id', 'id', 'token', 'user_id', 'revoked', 'created_at', 'updated_at', 'parent', 'session_id'],
  'auth.refresh_tokens has GoTrue''s columns');
select is((select extnamespace::regnamespace::text from pg_extension where extname = 'pgcrypto'), 'extensions', 'pgcrypto lives in the extensions schema');

set local role authenticated;
set local request.jwt.claims = '{"sub": "8f7ad3f4-2f4c-4a5e-9a59-6b1f9c1b2f10", "role": "authenticated", "email": "ana@example.test"}';
select is(auth.uid(), '8f7ad3f4-2f4c-4a5e-9a59-6b1f9c1b2f10'::uuid, 'auth.uid() reads sub from request.jwt.claims');
select is(auth.role(), 'authenticated', 'auth.role() reads role from request.jwt.claims');
select is(auth.email(), 'ana@example.test', 'auth.email() reads email from request.jwt.claims');
select is(auth.jwt() ->> 'sub', '8f7ad3f4-2f4c-4a5e-9a59-6b1f9c1b2f10', 'auth.jwt() returns every claim');
select throws_ok('select count(*) from auth.users', '42501', null, 'an authenticated caller cannot read auth.users');
reset role;
set local request.jwt.claims = '';
select is(auth.uid(), null, 'auth.uid() is null without claims');

select isnt((select cron.schedule('contract-probe', '*/5 * * * *', 'select 1')), null::bigint, 'pg_cron schedules jobs as postgres');
select ok((select cron.unschedule('contract-probe')), 'pg_cron unschedules them');

select * from finish();
rollback;
