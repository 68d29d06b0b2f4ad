-- Workflow service: run records are read by the workspace's members and written by nobody but the
-- lifecycle functions; the async queue and the files bucket are set up as documented.
begin;
select plan(22);

insert into auth.users (id, email, aud, role) values
  ('a8000000-0000-4000-8000-000000000001', 'owner@runs.test', 'authenticated', 'authenticated'),
  ('a8000000-0000-4000-8000-000000000002', 'viewer@runs.test', 'authenticated', 'authenticated'),
  ('a8000000-0000-4000-8000-000000000003', 'stranger@runs.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;

select pg_temp.act_as('a8000000-0000-4000-8000-000000000001');
select public.create_workspace('Runs');
reset role;
create temporary table ws as select id from public.workspaces where name = 'Runs';
grant select on ws to authenticated, service_role;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'a8000000-0000-4000-8000-000000000002', 'viewer' from ws;
insert into public.workflows (id, workspace_id, name, state)
select 'a8500000-0000-4000-8000-000000000001', id, 'Recorded',
  '{"blocks": {"api": {"id": "api", "type": "api_trigger", "name": "API", "config": {}, "position": {"x": 0, "y": 0}}, "done": {"id": "done", "type": "response", "name": "Done", "config": {"body": "ok"}}}, "edges": [{"id": "e1", "source": "api", "target": "done"}]}'
from ws;
select public.deploy_workflow('a8500000-0000-4000-8000-000000000001');
select public.admit_workflow_run('a8500000-0000-4000-8000-000000000001', 'webhook', 'sync');
select public.admit_workflow_run('a8500000-0000-4000-8000-000000000001', 'manual', 'sync', p_user_id => 'a8000000-0000-4000-8000-000000000001');

-- Reading ----------------------------------------------------------------------------------------

select pg_temp.act_as('a8000000-0000-4000-8000-000000000002');
select is((select array_agg(trigger::text order by trigger) from public.workflow_executions), array['manual', 'webhook'], 'A member (even a viewer) reads the workspace''s runs');
select is((select count(*)::int from public.workflow_execution_snapshots), 1, 'and the drafts manual runs executed');
select is((select state -> 'blocks' -> 'api' ? 'position' from public.workflow_execution_snapshots), false, 'stored without layout');
select pg_temp.act_as('a8000000-0000-4000-8000-000000000003');
select is((select count(*)::int from public.workflow_executions), 0, 'A stranger reads no runs');
select is((select count(*)::int from public.workflow_execution_snapshots), 0, 'and no snapshots');
reset role;
set local role anon;
set local request.jwt.claims = '{"role": "anon"}';
select throws_ok($$select * from public.workflow_executions$$, '42501', null, 'Signed-out visitors read no runs');
reset role;

-- Writing ----------------------------------------------------------------------------------------

select pg_temp.act_as('a8000000-0000-4000-8000-000000000001');
select throws_ok($$insert into public.workflow_executions (workspace_id, workflow_id, billing_account_id, trigger, mode, status, started_at)
  select id, 'a8500000-0000-4000-8000-000000000001', gen_random_uuid(), 'api', 'sync', 'running', now() from ws$$, '42501', null, 'Even an owner cannot record a run directly');
select throws_ok($$update public.workflow_executions set status = 'completed'$$, '42501', null, 'nor change one');
select throws_ok($$delete from public.workflow_executions$$, '42501', null, 'nor delete one');
select throws_ok($$insert into public.workflow_execution_snapshots (workflow_id, workspace_id, state_hash, state) select 'a8500000-0000-4000-8000-000000000001', id, '\x00', '{}' from ws$$,
  '42501', null, 'nor store a snapshot');
select throws_ok($$select * from workflows_private.idempotency_keys$$, '42501', null, 'Idempotency keys are not readable');
reset role;
set local role service_role;
set local request.jwt.claims = '{"role": "service_role"}';
select is((select count(*)::int from public.workflow_executions where workflow_id = 'a8500000-0000-4000-8000-000000000001'), 2, 'The service role reads runs');
select throws_ok($$update public.workflow_executions set status = 'completed'$$, '42501', null, 'but writes them only through the lifecycle functions');
select throws_ok($$select * from workflows_private.idempotency_keys$$, '42501', null, 'and has no access to the idempotency keys');
reset role;

select throws_ok($$update public.workflow_executions set ended_at = now() where trigger = 'webhook'$$, '23514', null, 'A run in flight has no end time');

delete from public.workflows where id = 'a8500000-0000-4000-8000-000000000001';
select is((select count(*)::int from public.workflow_executions where workflow_id = 'a8500000-0000-4000-8000-000000000001'), 0, 'A deleted workflow takes its runs along');
select is((select count(*)::int from public.usage_ledger where workflow_id = 'a8500000-0000-4000-8000-000000000001'), 2, 'but not their charges');

-- The queue and the bucket -----------------------------------------------------------------------

select is((select (function_name, enabled, visibility_timeout)::text from platform.queue_workers where queue_name = 'workflow_runs'), '(workflow-worker,t,120)',
  'Async runs go to the workflow_runs queue, whose worker function is registered and enabled');
select is((select (public, file_size_limit)::text from storage.buckets where id = 'workflow-files'), '(f,20971520)', 'Run files live in a private bucket of files up to 20 MB');
insert into storage.objects (bucket_id, name) select 'workflow-files', id || '/some-workflow/some-run/report.pdf' from ws;
select pg_temp.act_as('a8000000-0000-4000-8000-000000000001');
select is((select count(*)::int from storage.objects where bucket_id = 'workflow-files'), 0, 'Not even the workspace''s owner reads run files directly (only signed URLs)');
select throws_ok($$insert into storage.objects (bucket_id, name) select 'workflow-files', id || '/x/y/z.txt' from ws$$, '42501', null, 'nor writes them');
reset role;
set local role anon;
set local request.jwt.claims = '{"role": "anon"}';
select is((select count(*)::int from storage.objects where bucket_id = 'workflow-files'), 0, 'nor does anyone signed out');
reset role;

select * from finish();
rollback;
