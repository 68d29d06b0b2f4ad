-- Workflow service: admit_workflow_run answers every refusal as data, in the documented order, and
-- records an admitted run with everything it needs.
begin;
select plan(67);

insert into auth.users (id, email, aud, role) values
  ('a9000000-0000-4000-8000-000000000001', 'owner@admit.test', 'authenticated', 'authenticated'),
  ('a9000000-0000-4000-8000-000000000002', 'editor@admit.test', 'authenticated', 'authenticated'),
  ('a9000000-0000-4000-8000-000000000003', 'viewer@admit.test', 'authenticated', 'authenticated'),
  ('a9000000-0000-4000-8000-000000000004', 'stranger@admit.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create function pg_temp.as_service() returns void language sql as $$
  select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true);
$$;
create temporary table keys (label text primary key, key text);
create temporary table answers (label text primary key, r jsonb);
grant select, insert on keys, answers to authenticated, service_role;
create function pg_temp.key(p_label text) returns text language sql as $$ select key from keys where label = p_label $$;
create function pg_temp.answer(p_label text) returns jsonb language sql as $$ select r from answers where label = p_label $$;
-- Admits as the service role (the edge function), records the answer under a label and returns it.
create function pg_temp.admit(p_label text, p_workflow uuid, p_trigger text, p_mode text, p_key text default null, p_user uuid default null,
  p_input jsonb default null, p_idempotency_key text default null, p_hash text default null, p_cached uuid[] default null, p_env bigint default null)
returns jsonb language plpgsql as $$
declare
  v jsonb;
begin
  perform pg_temp.as_service();
  v := public.admit_workflow_run(p_workflow, p_trigger, p_mode, p_key, p_user, p_input, p_idempotency_key, p_hash, p_cached, p_env);
  perform set_config('role', 'postgres', true), set_config('request.jwt.claims', '', true);
  insert into answers values (p_label, v) on conflict (label) do update set r = excluded.r;
  return v;
end;
$$;

-- A workspace with an editor and a viewer, a deployed workflow, an undeployed one, a variable.
select pg_temp.act_as('a9000000-0000-4000-8000-000000000001');
select public.create_workspace('Admit');
reset role;
create temporary table ws as select id, billing_account_id from public.workspaces where name = 'Admit';
grant select on ws to authenticated, service_role;
insert into public.workspace_members (workspace_id, user_id, role) select ws.id, u.id, u.role from ws,
  (values ('a9000000-0000-4000-8000-000000000002'::uuid, 'editor'), ('a9000000-0000-4000-8000-000000000003'::uuid, 'viewer')) u (id, role);
insert into public.workflows (id, workspace_id, name, state) select w.id, ws.id, w.name,
  '{"blocks": {"api": {"id": "api", "type": "api_trigger", "name": "API", "config": {}, "position": {"x": 0, "y": 0}}, "done": {"id": "done", "type": "response", "name": "Done", "config": {"body": "ok"}}}, "edges": [{"id": "e1", "source": "api", "target": "done"}]}'
from ws, (values ('a9500000-0000-4000-8000-000000000001'::uuid, 'Deployed'), ('a9500000-0000-4000-8000-000000000002'::uuid, 'Draft only')) w (id, name);
select public.deploy_workflow('a9500000-0000-4000-8000-000000000001');
create temporary table dep as select id from public.workflow_deployments where workflow_id = 'a9500000-0000-4000-8000-000000000001';
grant select on dep to authenticated, service_role;
select pg_temp.act_as('a9000000-0000-4000-8000-000000000001');
select public.set_environment_variable((select id from ws), 'GREETING', 'hello');
insert into keys select 'workspace', key from public.create_api_key('Workspace key', (select id from ws));
select pg_temp.act_as('a9000000-0000-4000-8000-000000000002');
insert into keys select 'editor', key from public.create_api_key('Editor key');
insert into keys select 'revoked', key from public.create_api_key('Old key');
select public.revoke_api_key(k.id) from public.api_keys k where k.name = 'Old key';
select pg_temp.act_as('a9000000-0000-4000-8000-000000000003');
insert into keys select 'viewer', key from public.create_api_key('Viewer key');
-- A stranger with a workspace (and deployed workflow) of their own.
select pg_temp.act_as('a9000000-0000-4000-8000-000000000004');
select public.create_workspace('Elsewhere');
insert into keys select 'stranger', key from public.create_api_key('Stranger key');
insert into keys select 'elsewhere', key from public.create_api_key('Elsewhere key', (select id from public.workspaces where name = 'Elsewhere'));
reset role;
insert into public.workflows (id, workspace_id, name, state) select 'a9500000-0000-4000-8000-000000000003', id, 'Theirs',
  '{"blocks": {"api": {"id": "api", "type": "api_trigger", "name": "API", "config": {}}}}' from public.workspaces where name = 'Elsewhere';
select public.deploy_workflow('a9500000-0000-4000-8000-000000000003');
-- Room for the many runs below on the Admit account; Elsewhere stays on Free.
-- Concurrency is 42-workflows-concurrency.test.sql's: here the runs this file leaves running never fill the account.
insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute, concurrent_runs) select billing_account_id, 1000, 1000, 1000 from ws;

-- Only the runtime admits ------------------------------------------------------------------------

select pg_temp.act_as('a9000000-0000-4000-8000-000000000002');
select throws_ok($$select public.admit_workflow_run('a9500000-0000-4000-8000-000000000001', 'manual', 'sync', p_user_id => 'a9000000-0000-4000-8000-000000000002')$$,
  '42501', null, 'A signed-in user cannot call admit (only the service role can)');
reset role;

-- Refusals, in order -----------------------------------------------------------------------------

select is(pg_temp.admit('no key', 'a9500000-0000-4000-8000-000000000001', 'api', 'sync') - 'error',
  '{"status": 401, "outcome": "refused", "code": "UNAUTHORIZED"}'::jsonb, 'An api run without a key is 401');
select is(pg_temp.answer('no key') ->> 'error', 'API key required: send it in the X-API-Key header', 'saying what is missing');
select is(pg_temp.admit('unknown key', 'a9500000-0000-4000-8000-000000000001', 'api', 'sync', 'orb_' || repeat('a', 48)) ->> 'status', '401', 'An unknown key is 401');
select is(pg_temp.admit('revoked', 'a9500000-0000-4000-8000-000000000001', 'api', 'sync', pg_temp.key('revoked')) ->> 'status', '401', 'A revoked key is 401');
select is(pg_temp.admit('auth first', 'a9500000-0000-4000-8000-00000000dead', 'api', 'sync', 'orb_' || repeat('a', 48)) ->> 'status', '401',
  'Authentication comes first: a bad key learns nothing about workflows');
select is(pg_temp.admit('unknown workflow', 'a9500000-0000-4000-8000-00000000dead', 'api', 'sync', pg_temp.key('editor')) - 'error',
  '{"status": 404, "outcome": "refused", "code": "NOT_FOUND"}'::jsonb, 'An unknown workflow is 404');
select is(pg_temp.admit('stranger', 'a9500000-0000-4000-8000-000000000001', 'api', 'sync', pg_temp.key('stranger')) ->> 'status', '404',
  'A personal key of someone outside the workspace is 404, as if the workflow did not exist');
select is(pg_temp.admit('elsewhere', 'a9500000-0000-4000-8000-000000000001', 'api', 'sync', pg_temp.key('elsewhere')) ->> 'status', '404',
  'So is another workspace''s key');
select is(pg_temp.admit('stranger undeployed', 'a9500000-0000-4000-8000-000000000002', 'api', 'sync', pg_temp.key('stranger')) ->> 'status', '404',
  'Visibility comes before the deployment: outsiders learn nothing of it');
select is(pg_temp.admit('viewer', 'a9500000-0000-4000-8000-000000000001', 'api', 'sync', pg_temp.key('viewer')) - 'error',
  '{"status": 403, "outcome": "refused", "code": "FORBIDDEN"}'::jsonb, 'A viewer''s key may not run workflows (403)');
select is(pg_temp.admit('viewer undeployed', 'a9500000-0000-4000-8000-000000000002', 'api', 'sync', pg_temp.key('viewer')) ->> 'code', 'FORBIDDEN',
  'The role is checked before the deployment');
select is(pg_temp.admit('undeployed', 'a9500000-0000-4000-8000-000000000002', 'api', 'sync', pg_temp.key('editor')) - 'error',
  '{"status": 403, "outcome": "refused", "code": "NOT_DEPLOYED"}'::jsonb, 'A workflow without an active deployment is 403 NOT_DEPLOYED');
select is(pg_temp.admit('manual nobody', 'a9500000-0000-4000-8000-000000000001', 'manual', 'sync') ->> 'status', '401', 'A manual run needs a user');
select is(pg_temp.admit('manual viewer', 'a9500000-0000-4000-8000-000000000001', 'manual', 'sync', null, 'a9000000-0000-4000-8000-000000000003') ->> 'code', 'FORBIDDEN',
  'and that user must be an editor or above');
select is((select count(*)::int from public.workflow_executions e join ws on ws.id = e.workspace_id), 0, 'No refusal so far recorded a run');
select throws_ok($$select public.admit_workflow_run('a9500000-0000-4000-8000-000000000001', 'manual', 'async', p_user_id => 'a9000000-0000-4000-8000-000000000002')$$,
  '22023', null, 'Manual runs are synchronous');
select throws_ok($$select public.admit_workflow_run('a9500000-0000-4000-8000-000000000001', 'email', 'sync')$$, '22023', null, 'Triggers are the five of the spec');

-- Admitted ----------------------------------------------------------------------------------------

select is(pg_temp.admit('editor run', 'a9500000-0000-4000-8000-000000000001', 'api', 'sync', pg_temp.key('editor'), p_input => '{"kept": true}')
    - array['executionId', 'createdAt', 'leaseExpiresAt', 'rateLimit', 'usage', 'deployment', 'trace'],
  jsonb_build_object('status', 200, 'outcome', 'admitted', 'runStatus', 'running', 'trigger', 'api', 'mode', 'sync', 'attempt', 1, 'input', '{"kept": true}'::jsonb, 'snapshot', null,
    'workflow', jsonb_build_object('id', 'a9500000-0000-4000-8000-000000000001', 'name', 'Deployed', 'workspaceId', (select id from ws),
      'billingAccountId', (select w.billing_account_id from public.workspaces w where w.id = (select id from ws))),
    'environment', '{"version": 1, "variables": {"GREETING": "hello"}}'::jsonb),
  'An editor''s key runs the workflow: the run, its workflow and the decrypted environment');
select is(pg_temp.answer('editor run') -> 'deployment', (select jsonb_build_object('id', d.id, 'version', 1, 'state', d.state) from public.workflow_deployments d where d.id = (select id from dep)),
  'with the active deployment''s state');
select is((pg_temp.answer('editor run') ->> 'leaseExpiresAt')::timestamptz, now() + interval '360 seconds', 'and a lease of 6 minutes to finish it in');
select is((pg_temp.answer('editor run') -> 'rateLimit') - 'resetAt', '{"limit": 1000, "remaining": 999, "isLimited": false, "retryAfter": 0}'::jsonb,
  'The answer carries the rate limit for the X-RateLimit headers');
select is((pg_temp.answer('editor run') -> 'usage') - 'periodEnd', '{"plan": "free", "limit": 10, "isExceeded": false, "currentPeriodCost": 0.001}'::jsonb,
  'and the account''s usage, the run''s base charge included');
select is((select (status, trigger, mode, attempt, api_key_id = (select id from public.api_keys where name = 'Editor key'), triggered_by, started_at, cost_total, input)::text
    from public.workflow_executions where id = (pg_temp.answer('editor run') ->> 'executionId')::uuid),
  format('(running,api,sync,1,t,a9000000-0000-4000-8000-000000000002,"%s",0.0010000000,"{""kept"": true}")', now()), 'The run is recorded as running, with its key, its user and its input (sync runs keep theirs too)');
select is((select (kind, amount)::text from public.usage_ledger where execution_id = (pg_temp.answer('editor run') ->> 'executionId')::uuid),
  '(execution,0.0010000000)', 'Its base charge is in the ledger');

select is(pg_temp.admit('cached', 'a9500000-0000-4000-8000-000000000001', 'api', 'sync', pg_temp.key('workspace'), p_cached => array[(select id from dep)], p_env => 1)
    -> 'deployment', jsonb_build_object('id', (select id from dep), 'version', 1), 'A caller caching the deployment gets no state');
select is(pg_temp.answer('cached') -> 'environment', '{"version": 1}'::jsonb, 'nor values for the environment version it holds');
select is((select triggered_by from public.workflow_executions where id = (pg_temp.answer('cached') ->> 'executionId')::uuid), null,
  'A workspace key runs its own workspace''s workflows, on behalf of no user');

select is(pg_temp.admit('async', 'a9500000-0000-4000-8000-000000000001', 'api', 'async', pg_temp.key('editor'), p_input => '{"order": 42}')
    - array['executionId', 'createdAt', 'rateLimit', 'usage', 'workflow'],
  '{"status": 202, "outcome": "admitted", "runStatus": "queued", "trigger": "api", "mode": "async", "waiting": false}'::jsonb, 'An async run is queued (202)');
select is(pg_temp.answer('async') -> 'rateLimit' ->> 'remaining', '999', 'from the async bucket, not the sync one');
select is((select (status, input, started_at, lease_expires_at, attempt)::text from public.workflow_executions where id = (pg_temp.answer('async') ->> 'executionId')::uuid),
  format('(queued,"{""order"": 42}",,"%s",0)', now() + interval '24 hours'), 'with its input kept and a day to start');
select is((select q.message from pgmq.q_workflow_runs q join public.workflow_executions e on e.queue_message_id = q.msg_id where e.id = (pg_temp.answer('async') ->> 'executionId')::uuid),
  jsonb_build_object('executionId', pg_temp.answer('async') ->> 'executionId'), 'and a message on the workflow_runs queue');

select is(pg_temp.admit('webhook', 'a9500000-0000-4000-8000-000000000001', 'webhook', 'async') ->> 'status', '202', 'A webhook run needs no key: the edge function vouches for it');
select is(pg_temp.admit('schedule', 'a9500000-0000-4000-8000-000000000001', 'schedule', 'sync') -> 'rateLimit', 'null'::jsonb, 'Schedule runs have no rate limit');

-- Manual runs run the draft, as a content-hashed snapshot.
select is(pg_temp.admit('manual', 'a9500000-0000-4000-8000-000000000002', 'manual', 'sync', null, 'a9000000-0000-4000-8000-000000000002') - array['executionId', 'createdAt', 'leaseExpiresAt', 'usage', 'snapshot', 'environment', 'workflow', 'rateLimit', 'trace'],
  '{"status": 200, "outcome": "admitted", "runStatus": "running", "trigger": "manual", "mode": "sync", "attempt": 1, "input": null, "deployment": null}'::jsonb,
  'An editor runs an undeployed draft manually');
select is((pg_temp.answer('manual') -> 'rateLimit' ->> 'limit')::integer,
  (select m.sync_limit from workflows_private.account_meters m join public.workspaces w on w.billing_account_id = m.billing_account_id
   join public.workflows f on f.workspace_id = w.id where f.id = 'a9500000-0000-4000-8000-000000000002'),
  'spending a token of the synchronous bucket, as every synchronous run does');
select is(pg_temp.answer('manual') -> 'workflow' ->> 'billingAccountId', (select billing_account_id::text from public.workspaces w join public.workflows f on f.workspace_id = w.id where f.id = 'a9500000-0000-4000-8000-000000000002'),
  'and the run names the billing account it is charged to, for the sandbox''s fair share');
select is(pg_temp.answer('manual') -> 'snapshot' -> 'state', (select workflows_private.state_without_layout(state) from public.workflows where id = 'a9500000-0000-4000-8000-000000000002'),
  'It gets the draft (without layout) as a snapshot');
select is(pg_temp.answer('manual') -> 'snapshot' -> 'issues', '[]'::jsonb, 'with nothing that keeps it from running');
update public.workflows set state = jsonb_set(state, '{blocks,api,position}', '{"x": 300, "y": 20}') where id = 'a9500000-0000-4000-8000-000000000002';
select is(pg_temp.admit('manual moved', 'a9500000-0000-4000-8000-000000000002', 'manual', 'sync', null, 'a9000000-0000-4000-8000-000000000002') -> 'snapshot' ->> 'id',
  pg_temp.answer('manual') -> 'snapshot' ->> 'id', 'Moving a block changes nothing that runs: the same snapshot');
update public.workflows set state = jsonb_set(state, '{blocks,done,config,body}', '"changed"') where id = 'a9500000-0000-4000-8000-000000000002';
select isnt(pg_temp.admit('manual changed', 'a9500000-0000-4000-8000-000000000002', 'manual', 'sync', null, 'a9000000-0000-4000-8000-000000000002') -> 'snapshot' ->> 'id',
  pg_temp.answer('manual') -> 'snapshot' ->> 'id', 'A real change is a new snapshot');
-- A draft saves in save mode; a run needs what a deploy needs, so admit hands over the deploy-mode
-- issues and the edge function refuses the run with them (400 INVALID_WORKFLOW).
update public.workflows set state = jsonb_set(state, '{blocks,api,enabled}', 'false') where id = 'a9500000-0000-4000-8000-000000000002';
select is(pg_temp.admit('manual untriggered', 'a9500000-0000-4000-8000-000000000002', 'manual', 'sync', null, 'a9000000-0000-4000-8000-000000000002') -> 'snapshot' -> 'issues',
  '[{"code": "no_trigger", "field": "blocks", "message": "The workflow has no enabled trigger block, so nothing can start it"}]'::jsonb,
  'A draft without an enabled trigger is admitted with the issue that keeps it from running');

-- Rate and usage limits (the Elsewhere account is on Free: 5 sync runs a minute, $10 a month) -----

select is((select count(*)::int from (select pg_temp.admit('free ' || n, 'a9500000-0000-4000-8000-000000000003', 'api', 'sync', pg_temp.key('elsewhere')) ->> 'status' as s from generate_series(1, 5) n) a where s = '200'),
  5, 'Free admits 5 sync runs in a minute');
select is(pg_temp.admit('limited', 'a9500000-0000-4000-8000-000000000003', 'api', 'sync', pg_temp.key('elsewhere')) - array['error', 'usage', 'rateLimit'],
  '{"status": 429, "outcome": "refused", "code": "RATE_LIMIT_EXCEEDED", "retryAfter": 12}'::jsonb, 'The sixth is 429, retry in 12 s');
select is((pg_temp.answer('limited') -> 'rateLimit') - 'resetAt', '{"limit": 5, "remaining": 0, "isLimited": true, "retryAfter": 12}'::jsonb, 'with the headers'' figures');
select is(pg_temp.answer('limited') ->> 'error', 'Rate limit exceeded: 5 sync runs a minute; retry in 12 s', 'and a message saying so');
select is(pg_temp.admit('async while limited', 'a9500000-0000-4000-8000-000000000003', 'api', 'async', pg_temp.key('elsewhere')) ->> 'status', '202',
  'Async runs have their own bucket');
select is((select count(*)::int from public.workflow_executions where workflow_id = 'a9500000-0000-4000-8000-000000000003'), 6, 'The refused run was not recorded');

update workflows_private.account_meters set period_cost = 10
where billing_account_id = (select billing_account_id from public.workspaces where name = 'Elsewhere');
select is(pg_temp.admit('usage', 'a9500000-0000-4000-8000-000000000003', 'api', 'async', pg_temp.key('elsewhere')) - array['status', 'error', 'usage', 'rateLimit'],
  '{"outcome": "refused", "code": "USAGE_LIMIT_EXCEEDED"}'::jsonb, 'Once the usage limit is reached a run is refused');
select is(pg_temp.answer('usage') ->> 'status', '402', 'with 402');
select is((pg_temp.answer('usage') -> 'usage') - 'periodEnd', '{"plan": "free", "limit": 10, "isExceeded": true, "currentPeriodCost": 10}'::jsonb, 'and the usage that was reached ($10 on Free)');
select is(pg_temp.admit('usage before rate', 'a9500000-0000-4000-8000-000000000003', 'api', 'sync', pg_temp.key('elsewhere')) ->> 'code', 'USAGE_LIMIT_EXCEEDED',
  'The usage limit is checked before the rate limit');
select is((select sync_tokens::numeric from workflows_private.account_meters where billing_account_id = (select billing_account_id from public.workspaces where name = 'Elsewhere')), 0::numeric,
  'A refused run spends no token');

-- Idempotency --------------------------------------------------------------------------------------

select is(pg_temp.admit('idem 1', 'a9500000-0000-4000-8000-000000000001', 'api', 'sync', pg_temp.key('editor'), p_idempotency_key => 'order-7', p_hash => 'h1') ->> 'status', '200',
  'A request with an Idempotency-Key runs');
select is(pg_temp.admit('idem running', 'a9500000-0000-4000-8000-000000000001', 'api', 'sync', pg_temp.key('editor'), p_idempotency_key => 'order-7', p_hash => 'h1') - 'error',
  jsonb_build_object('status', 409, 'outcome', 'refused', 'code', 'IDEMPOTENCY_KEY_IN_USE', 'executionId', pg_temp.answer('idem 1') ->> 'executionId'),
  'Repeated while the first is still running, it is 409 naming the first run');
select public.finish_workflow_run((pg_temp.answer('idem 1') ->> 'executionId')::uuid, 'completed', '{"done": true}',
  p_response => '{"status": 201, "headers": {"x-id": "7"}, "body": {"done": true}}');
create temporary table tokens_before as select sync_tokens from workflows_private.account_meters where billing_account_id = (select billing_account_id from ws);
select is(pg_temp.admit('idem replay', 'a9500000-0000-4000-8000-000000000001', 'api', 'sync', pg_temp.key('editor'), p_idempotency_key => 'order-7', p_hash => 'h1')
    - array['createdAt', 'output', 'error'],
  jsonb_build_object('status', 201, 'outcome', 'replay', 'executionId', pg_temp.answer('idem 1') ->> 'executionId', 'runStatus', 'completed', 'mode', 'sync',
    'response', '{"status": 201, "headers": {"x-id": "7"}, "body": {"done": true}}'::jsonb),
  'Repeated after it finished, it answers what the first answered');
select is((select sync_tokens from workflows_private.account_meters where billing_account_id = (select billing_account_id from ws)), (select sync_tokens from tokens_before),
  'A replay spends no token');
select is((select count(*)::int from public.workflow_executions where workflow_id = 'a9500000-0000-4000-8000-000000000001' and trigger = 'api' and mode = 'sync'), 3,
  'and records no run');
select is(pg_temp.admit('idem other body', 'a9500000-0000-4000-8000-000000000001', 'api', 'sync', pg_temp.key('editor'), p_idempotency_key => 'order-7', p_hash => 'h2') ->> 'code',
  'IDEMPOTENCY_KEY_REUSED', 'The same key with another body is 409');
select is(pg_temp.admit('idem async', 'a9500000-0000-4000-8000-000000000001', 'api', 'async', pg_temp.key('editor'), p_idempotency_key => 'order-8') ->> 'status', '202',
  'An async request with a key is queued');
select is(pg_temp.admit('idem async again', 'a9500000-0000-4000-8000-000000000001', 'api', 'async', pg_temp.key('editor'), p_idempotency_key => 'order-8') - array['createdAt', 'output', 'error', 'response'],
  jsonb_build_object('status', 202, 'outcome', 'replay', 'executionId', pg_temp.answer('idem async') ->> 'executionId', 'runStatus', 'queued', 'mode', 'async'),
  'and repeating it points at the same job');
select is(pg_temp.admit('idem other workflow', 'a9500000-0000-4000-8000-000000000003', 'api', 'async', pg_temp.key('stranger'), p_idempotency_key => 'order-7', p_hash => 'h1') ->> 'code',
  'USAGE_LIMIT_EXCEEDED', 'Keys are per workflow: the same key on another workflow is a new request');
select is((select count(*)::int from workflows_private.idempotency_keys where key = 'order-7'), 1, 'and a refused request leaves its key unused');
update workflows_private.idempotency_keys set created_at = now() - interval '25 hours' where key = 'order-7';
select is(pg_temp.admit('idem expired', 'a9500000-0000-4000-8000-000000000001', 'api', 'sync', pg_temp.key('editor'), p_idempotency_key => 'order-7', p_hash => 'h2') ->> 'outcome',
  'admitted', 'After 24 hours a key is forgotten');
select is(workflows_private.expire_idempotency_keys(now() + interval '25 hours'), 2, 'and the hourly job deletes keys past their day');
select is(pg_temp.admit('idem too long', 'a9500000-0000-4000-8000-000000000001', 'api', 'sync', pg_temp.key('editor'), p_idempotency_key => repeat('k', 256)) - 'error',
  '{"status": 400, "outcome": "refused", "code": "INVALID_IDEMPOTENCY_KEY"}'::jsonb, 'A key longer than 255 characters is 400');

-- Threshold billing at admission ------------------------------------------------------------------

update public.billing_accounts set plan = 'pro' where id = (select billing_account_id from ws);
update workflows_private.account_meters set period_cost = 69.9995 where billing_account_id = (select billing_account_id from ws);
select pg_temp.admit('threshold', 'a9500000-0000-4000-8000-000000000001', 'webhook', 'sync');
select is((select (kind, total)::text from public.invoices where billing_account_id = (select billing_account_id from ws)), '(threshold,50.00)',
  'The run whose base charge takes unbilled overage to $50 triggers the threshold invoice');

select * from finish();
rollback;
