-- Workflow service: deleting a workspace deletes what it owns in one transaction and queues the sweep of its files.
begin;
select plan(12);

insert into auth.users (id, email, aud, role) values
  ('a6000000-0000-4000-8000-000000000001', 'owner@delete.test', 'authenticated', 'authenticated'),
  ('a6000000-0000-4000-8000-000000000002', 'admin@delete.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create function pg_temp.act_as_service() returns void language sql as $$
  select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true);
$$;

select pg_temp.act_as('a6000000-0000-4000-8000-000000000001');
select public.create_workspace('Doomed');
reset role;
create temporary table ws as select id from public.workspaces where name = 'Doomed';
grant select on ws to authenticated, service_role;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'a6000000-0000-4000-8000-000000000002', 'admin' from ws;
insert into storage.objects (bucket_id, name) select 'workflow-files', id || '/wf/run/report.txt' from ws;
insert into storage.objects (bucket_id, name) values ('workflow-files', 'a6000000-0000-4000-8000-00000000ffff/wf/run/other.txt');

select pg_temp.act_as('a6000000-0000-4000-8000-000000000002');
select lives_ok($$select public.set_environment_variable((select id from ws), 'TOKEN', 's3cret')$$, 'An admin sets an environment variable');
reset role;

select pg_temp.act_as_service();
select is(public.deleted_workspace_file_names((select id from ws)), '{}'::text[], 'The sweeper is shown no file of a workspace that still exists');
reset role;

select pg_temp.act_as('a6000000-0000-4000-8000-000000000001');
select lives_ok($$delete from public.workspaces where id = (select id from ws)$$, 'The owner deletes a workspace that has environment variables');
reset role;

select is((select count(*) from public.workspaces where id = (select id from ws)), 0::bigint, 'The workspace is gone');
select is((select count(*) from public.environment_variables where workspace_id = (select id from ws)), 0::bigint, 'with its environment variables');
select is((select count(*) from workflows_private.environment_versions where workspace_id = (select id from ws)), 0::bigint, 'and its environment version');
select is((select count(*) from public.workspace_members where workspace_id = (select id from ws)), 0::bigint, 'and its members');
select is(
  (select count(*) from pgmq.q_workspace_file_sweeps q where q.message ->> 'workspaceId' = (select id::text from ws)),
  1::bigint, 'The deletion queued one sweep of its files');

select pg_temp.act_as_service();
select is(
  public.deleted_workspace_file_names((select id from ws)),
  array[(select id || '/wf/run/report.txt' from ws)], 'The sweeper is shown the deleted workspace''s files, and no other workspace''s');
select is(
  (select count(*) from jsonb_array_elements(public.claim_workspace_file_sweeps(10, 30)) c where c ->> 'workspaceId' = (select id::text from ws)),
  1::bigint, 'The sweeper claims the sweep');
reset role;

select pg_temp.act_as('a6000000-0000-4000-8000-000000000001');
select throws_ok($$select public.deleted_workspace_file_names((select id from ws))$$, '42501', null, 'A user cannot list a deleted workspace''s files');
select throws_ok($$select public.claim_workspace_file_sweeps(10, 30)$$, '42501', null, 'nor claim sweeps');
reset role;

select * from finish();
rollback;
