-- Workflow service: workspace environment variables are encrypted at rest and never readable by clients.
begin;
select plan(20);

insert into auth.users (id, email, aud, role) values
  ('a3000000-0000-4000-8000-000000000001', 'admin@env.test', 'authenticated', 'authenticated'),
  ('a3000000-0000-4000-8000-000000000002', 'editor@env.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;

select pg_temp.act_as('a3000000-0000-4000-8000-000000000001');
select public.create_workspace('Secrets');
reset role;
create temporary table ws as select id from public.workspaces where name = 'Secrets';
grant select on ws to authenticated, service_role;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'a3000000-0000-4000-8000-000000000002', 'editor' from ws;

select pg_temp.act_as('a3000000-0000-4000-8000-000000000001');
select is((select name from public.set_environment_variable((select id from ws), 'API_KEY', 'sk-live-123')), 'API_KEY', 'The owner sets a variable');
select lives_ok($$select public.set_environment_variable((select id from ws), 'REGION', 'eu')$$, 'and another');
select is((select array_agg(name order by name) from public.environment_variables), array['API_KEY', 'REGION'], 'Members see which variables exist');
select throws_ok($$select * from workflows_private.environment_values$$, '42501', null, 'A user cannot read the stored values');
select throws_ok($$select * from workflows_private.secrets$$, '42501', null, 'nor the encryption key');
select throws_ok($$select workflows_private.environment_key()$$, '42501', null, 'nor call the function that reads the key');
select throws_ok($$select public.workspace_environment((select id from ws))$$, '42501', null, 'nor ask for the decrypted environment');
select throws_ok($$select public.set_environment_variable((select id from ws), '1BAD', 'x')$$, '23514', null, 'Names must be usable as {{NAME}}');
select throws_ok($$select public.set_environment_variable((select id from ws), 'EMPTY', null)$$, '22004', null, 'A variable needs a value');
reset role;

select ok(
  (select bool_and(position('sk-live-123' in encode(value_encrypted, 'escape')) = 0) from workflows_private.environment_values),
  'Values are not stored in clear text'
);
select is(
  (select extensions.pgp_sym_decrypt(e.value_encrypted, workflows_private.environment_key()) from workflows_private.environment_values e join public.environment_variables v on v.id = e.variable_id where v.name = 'API_KEY'),
  'sk-live-123', 'They decrypt with the key kept apart from them'
);

select pg_temp.act_as('a3000000-0000-4000-8000-000000000002');
select throws_ok($$select public.set_environment_variable((select id from ws), 'API_KEY', 'stolen')$$, '42501', 'Only a workspace admin or above may set environment variables', 'An editor cannot change variables');
delete from public.environment_variables;
select is((select count(*) from public.environment_variables), 2::bigint, 'nor delete them');
reset role;

select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true);
select is(public.workspace_environment((select id from ws)), '{"API_KEY": "sk-live-123", "REGION": "eu"}'::jsonb, 'The service role (the workflow runtime) gets the decrypted environment');
reset role;

select pg_temp.act_as('a3000000-0000-4000-8000-000000000001');
select lives_ok($$select public.set_environment_variable((select id from ws), 'API_KEY', 'sk-live-456')$$, 'Setting a variable again replaces its value');
select is((select count(*) from public.environment_variables), 2::bigint, 'without a second row');
delete from public.environment_variables where name = 'REGION';
select is((select array_agg(name) from public.environment_variables), array['API_KEY'], 'An admin deletes variables');
reset role;

select is(
  (select count(*) from workflows_private.environment_values e join public.environment_variables v on v.id = e.variable_id where v.workspace_id = (select id from ws)),
  1::bigint, 'A deleted variable''s value goes with it'
);
select is(workflows_private.rotate_environment_key(), (select count(*)::integer from workflows_private.environment_values), 'Rotating the key re-encrypts every value');
select is(public.workspace_environment((select id from ws)), '{"API_KEY": "sk-live-456"}'::jsonb, 'Values still decrypt after rotation');

select * from finish();
rollback;
