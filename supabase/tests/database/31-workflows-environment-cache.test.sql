-- Workflow service: environment versions let runtimes cache the decrypted environment, and values
-- are encrypted without key stretching (the key is random), so decrypting them is cheap.
begin;
select plan(12);

insert into auth.users (id, email, aud, role) values ('a7000000-0000-4000-8000-000000000001', 'admin@envcache.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create function pg_temp.version() returns bigint language sql as $$
  select coalesce((select v.version from workflows_private.environment_versions v join public.workspaces w on w.id = v.workspace_id where w.name = 'Cached'), 0);
$$;

select pg_temp.act_as('a7000000-0000-4000-8000-000000000001');
select public.create_workspace('Cached');
reset role;
create temporary table ws as select id from public.workspaces where name = 'Cached';
grant select on ws to authenticated;

select is(pg_temp.version(), 0::bigint, 'A workspace without variables is at version 0');
select pg_temp.act_as('a7000000-0000-4000-8000-000000000001');
select public.set_environment_variable((select id from ws), 'REGION', 'eu');
reset role;
select is(pg_temp.version(), 1::bigint, 'Creating a variable moves the version');
select pg_temp.act_as('a7000000-0000-4000-8000-000000000001');
select public.set_environment_variable((select id from ws), 'REGION', 'us');
reset role;
select is(pg_temp.version(), 2::bigint, 'and so does changing its value');
select pg_temp.act_as('a7000000-0000-4000-8000-000000000001');
select public.set_environment_variable((select id from ws), 'TOKEN', 't0k3n');
delete from public.environment_variables where name = 'TOKEN';
reset role;
select is(pg_temp.version(), 4::bigint, 'and deleting one');

select pg_temp.act_as('a7000000-0000-4000-8000-000000000001');
select throws_ok($$select * from workflows_private.environment_versions$$, '42501', null, 'Versions are the runtime''s business: no user reads them');
reset role;
select is(workflows_private.environment_payload((select id from ws), 4, 4), '{"version": 4}'::jsonb, 'A caller holding the current version gets no values');
select is(workflows_private.environment_payload((select id from ws), 4, 3), '{"version": 4, "variables": {"REGION": "us"}}'::jsonb, 'one holding another gets them decrypted');
select is(workflows_private.environment_payload((select id from ws), 4, null), '{"version": 4, "variables": {"REGION": "us"}}'::jsonb, 'as does one holding none');

-- Version 4 of the symmetric-key packet, AES-256 (9), S2K type 1 (salted, no iteration count).
select is((select encode(substring(e.value_encrypted from 3 for 3), 'hex') from workflows_private.environment_values e join public.environment_variables v on v.id = e.variable_id where v.workspace_id = (select id from ws)),
  '040901', 'Values are AES-256 with salted, non-iterated string-to-key');
select is((select encode(substring(e.value_encrypted from 3 for 3), 'hex') from workflows_private.environment_values e where e.variable_id = 'f7000000-0000-4000-8000-000000000001'),
  '040901', 'The seeded value too');
select workflows_private.rotate_environment_key();
select is((select encode(substring(e.value_encrypted from 3 for 3), 'hex') from workflows_private.environment_values e join public.environment_variables v on v.id = e.variable_id where v.workspace_id = (select id from ws)),
  '040901', 'Rotating the key keeps the mode');
select is(public.workspace_environment((select id from ws)), '{"REGION": "us"}'::jsonb, 'and the values');

select * from finish();
rollback;
