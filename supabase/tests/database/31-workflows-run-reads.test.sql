-- Workflow service: the job status, usage limits and deployment status an API key may ask for.
begin;
select plan(25);

insert into auth.users (id, email, aud, role) values
  ('ac000000-0000-4000-8000-000000000001', 'owner@reads.test', 'authenticated', 'authenticated'),
  ('ac000000-0000-4000-8000-000000000002', 'viewer@reads.test', 'authenticated', 'authenticated'),
  ('ac000000-0000-4000-8000-000000000003', 'stranger@reads.test', 'authenticated', 'authenticated'),
  ('ac000000-0000-4000-8000-000000000004', 'loner@reads.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create temporary table keys (label text primary key, key text);
create temporary table runs (label text primary key, id uuid);
grant select, insert on keys, runs to authenticated;
create function pg_temp.key(p_label text) returns text language sql as $$ select key from keys where label = p_label $$;
create function pg_temp.run(p_label text) returns uuid language sql as $$ select id from runs where label = p_label $$;

select pg_temp.act_as('ac000000-0000-4000-8000-000000000001');
select public.create_workspace('Reads');
insert into keys select 'workspace', key from public.create_api_key('Reads key', (select id from public.workspaces where name = 'Reads'));
select pg_temp.act_as('ac000000-0000-4000-8000-000000000002');
insert into keys select 'viewer', key from public.create_api_key('Viewer key');
select pg_temp.act_as('ac000000-0000-4000-8000-000000000003');
select public.create_workspace('Team space');
insert into keys select 'stranger', key from public.create_api_key('Stranger key');
select pg_temp.act_as('ac000000-0000-4000-8000-000000000004');
insert into keys select 'loner', key from public.create_api_key('Loner key');
reset role;
select set_config('request.jwt.claims', '{"role": "service_role"}', true);
create temporary table ws as select id, billing_account_id from public.workspaces where name = 'Reads';
insert into public.workspace_members (workspace_id, user_id, role) select id, 'ac000000-0000-4000-8000-000000000002', 'viewer' from ws;
insert into public.workflows (id, workspace_id, name, state) select 'ad000000-0000-4000-8000-000000000001', id, 'Read me',
  '{"blocks": {"api": {"id": "api", "type": "api_trigger", "name": "API", "config": {}, "position": {"x": 0, "y": 0}}, "done": {"id": "done", "type": "response", "name": "Done", "config": {"body": "ok"}}}, "edges": [{"id": "e1", "source": "api", "target": "done"}]}'
from ws;
select public.deploy_workflow('ad000000-0000-4000-8000-000000000001');
insert into runs values
  ('done', (public.admit_workflow_run('ad000000-0000-4000-8000-000000000001', 'api', 'sync', pg_temp.key('workspace')) ->> 'executionId')::uuid),
  ('broken', (public.admit_workflow_run('ad000000-0000-4000-8000-000000000001', 'api', 'sync', pg_temp.key('workspace')) ->> 'executionId')::uuid),
  ('queued', (public.admit_workflow_run('ad000000-0000-4000-8000-000000000001', 'api', 'async', pg_temp.key('workspace'), p_input => '{"x": 1}') ->> 'executionId')::uuid);
select public.finish_workflow_run(pg_temp.run('done'), 'completed', '{"result": 7}', p_duration_ms => 12);
select public.finish_workflow_run(pg_temp.run('broken'), 'failed', null, '{"message": "boom", "code": "BLOCK_FAILED", "failedBlock": {"id": "done", "name": "Done", "type": "response"}}');

-- Job status -------------------------------------------------------------------------------------

select is(public.workflow_job_status(pg_temp.run('done'), pg_temp.key('workspace')) - 'body', '{"status": 200}'::jsonb, 'The workspace''s key reads a job');
select is(public.workflow_job_status(pg_temp.run('done'), pg_temp.key('workspace')) -> 'body',
  jsonb_build_object('success', true, 'executionId', pg_temp.run('done'), 'workflowId', 'ad000000-0000-4000-8000-000000000001', 'status', 'completed', 'output', '{"result": 7}'::jsonb,
    'metadata', jsonb_build_object('trigger', 'api', 'mode', 'sync', 'createdAt', now(), 'startedAt', now(), 'endedAt', now(), 'duration', 12, 'attempt', 1, 'cost', 0.001)),
  'A completed job: its output and metadata');
select is(public.workflow_job_status(pg_temp.run('broken'), pg_temp.key('viewer')) -> 'body' -> 'error',
  '{"message": "boom", "code": "BLOCK_FAILED", "failedBlock": {"id": "done", "name": "Done", "type": "response"}}'::jsonb, 'A failed job: its error (read by a viewer''s key: members read jobs)');
select ok(not (public.workflow_job_status(pg_temp.run('broken'), pg_temp.key('viewer')) -> 'body' ? 'output'), 'and no output');
select is((public.workflow_job_status(pg_temp.run('queued'), pg_temp.key('workspace')) -> 'body') - 'metadata',
  jsonb_build_object('success', true, 'executionId', pg_temp.run('queued'), 'workflowId', 'ad000000-0000-4000-8000-000000000001', 'status', 'queued'), 'A queued job is queued');
select is(public.workflow_job_status(pg_temp.run('done'), pg_temp.key('stranger')) - 'error', '{"status": 404, "outcome": "refused", "code": "NOT_FOUND"}'::jsonb,
  'Another workspace''s member gets 404');
select is(public.workflow_job_status(gen_random_uuid(), pg_temp.key('workspace')) ->> 'status', '404', 'as does anyone for an unknown job');
select is(public.workflow_job_status(pg_temp.run('done'), 'orb_' || repeat('c', 48)) ->> 'status', '401', 'An unknown key is 401');
select is(public.workflow_job_status(pg_temp.run('done')) ->> 'code', 'UNAUTHORIZED', 'and no key at all too');
select is(public.workflow_job_status(pg_temp.run('done'), p_user_id => 'ac000000-0000-4000-8000-000000000002') ->> 'status', '200', 'A member the edge function verified reads it too');

-- Usage limits -----------------------------------------------------------------------------------

select is((public.workflow_usage_limits(pg_temp.key('workspace')) -> 'body') - 'rateLimit',
  '{"success": true, "usage": {"currentPeriodCost": 0.003, "limit": 10, "plan": "free"}}'::jsonb, 'A workspace key sees its account''s usage and plan');
select is((public.workflow_usage_limits(pg_temp.key('workspace')) -> 'body' -> 'rateLimit') #- '{sync,resetAt}' #- '{async,resetAt}',
  '{"sync": {"isLimited": false, "limit": 5, "remaining": 3}, "async": {"isLimited": false, "limit": 10, "remaining": 9}, "authType": "api"}'::jsonb,
  'and its sync and async buckets');
select is(public.workflow_usage_limits(pg_temp.key('workspace')) -> 'body' -> 'rateLimit' -> 'sync' ->> 'remaining', '3', 'Asking spends nothing');
select is((public.workflow_usage_limits(pg_temp.key('workspace')) -> 'body' -> 'rateLimit' -> 'sync' ->> 'resetAt')::timestamptz, now() + interval '24 seconds',
  'resetAt is when the bucket is full again');
select is(public.workflow_usage_limits(pg_temp.key('viewer')) -> 'body' -> 'usage', '{"currentPeriodCost": 0.003, "limit": 10, "plan": "free"}'::jsonb,
  'A personal key sees the account of the workspaces its user belongs to');
update public.billing_accounts set plan = 'team' where id = (select billing_account_id from public.workspaces where name = 'Team space');
insert into public.workspace_members (workspace_id, user_id, role) select id, 'ac000000-0000-4000-8000-000000000002', 'viewer' from public.workspaces where name = 'Team space';
select is(public.workflow_usage_limits(pg_temp.key('viewer')) -> 'body' -> 'usage', '{"currentPeriodCost": 0, "limit": 500, "plan": "team"}'::jsonb,
  'or, in several, the one with the highest-priority plan (Team, pooled)');
select is(public.workflow_usage_limits(pg_temp.key('loner')) -> 'body' -> 'usage', '{"currentPeriodCost": 0, "limit": 10, "plan": "free"}'::jsonb,
  'A user with no account yet sees the Free plan');
select is(public.workflow_usage_limits(pg_temp.key('loner')) -> 'body' -> 'rateLimit' -> 'sync' -> 'remaining', '5', 'with full buckets');
select is(public.workflow_usage_limits(null, 'ac000000-0000-4000-8000-000000000001') -> 'body' -> 'rateLimit' ->> 'authType', 'manual', 'A verified user (no key) is authType manual');
select is(public.workflow_usage_limits('orb_' || repeat('d', 48)) ->> 'status', '401', 'An unknown key is 401');

-- Deployment status ------------------------------------------------------------------------------

select is(public.workflow_deployment_status('ad000000-0000-4000-8000-000000000001', pg_temp.key('viewer')),
  jsonb_build_object('status', 200, 'body', jsonb_build_object('isDeployed', true, 'deployedAt', now(), 'deployedVersion', 1, 'needsRedeployment', false)),
  'A deployed workflow whose draft has not changed');
update public.workflows set state = jsonb_set(state, '{blocks,api,position}', '{"x": 50, "y": 50}') where id = 'ad000000-0000-4000-8000-000000000001';
select is(public.workflow_deployment_status('ad000000-0000-4000-8000-000000000001', pg_temp.key('workspace')) -> 'body' -> 'needsRedeployment', 'false'::jsonb,
  'Moving blocks around needs no redeployment');
update public.workflows set state = jsonb_set(state, '{blocks,done,config,body}', '"changed"') where id = 'ad000000-0000-4000-8000-000000000001';
select is(public.workflow_deployment_status('ad000000-0000-4000-8000-000000000001', pg_temp.key('workspace')) -> 'body' -> 'needsRedeployment', 'true'::jsonb,
  'Changing a block does');
select public.undeploy_workflow('ad000000-0000-4000-8000-000000000001');
select is(public.workflow_deployment_status('ad000000-0000-4000-8000-000000000001', pg_temp.key('workspace')) -> 'body',
  '{"isDeployed": false, "deployedAt": null, "deployedVersion": null, "needsRedeployment": false}'::jsonb, 'An undeployed workflow');
select is(public.workflow_deployment_status('ad000000-0000-4000-8000-000000000001', pg_temp.key('stranger')) ->> 'status', '404', 'Outsiders get 404');

select * from finish();
rollback;
