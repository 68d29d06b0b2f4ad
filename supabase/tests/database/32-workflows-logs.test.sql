-- Workflow service, part 4: the logs API's SQL functions (who may call them, what they answer,
-- the logs bucket they spend) and the per-model table behind the model filter.
begin;
select plan(22);

insert into auth.users (id, email, aud, role) values
  ('ac000000-0000-4000-8000-000000000001', 'owner@logs.test', 'authenticated', 'authenticated'),
  ('ac000000-0000-4000-8000-000000000002', 'stranger@logs.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create temporary table keys (label text primary key, key text);
grant select, insert on keys to authenticated;
create function pg_temp.key(p_label text) returns text language sql as $$ select key from keys where label = p_label $$;

select pg_temp.act_as('ac000000-0000-4000-8000-000000000001');
select public.create_workspace('Logs');
insert into keys select 'owner', key from public.create_api_key('Owner key');
select pg_temp.act_as('ac000000-0000-4000-8000-000000000002');
select public.create_workspace('Elsewhere');
insert into keys select 'stranger', key from public.create_api_key('Stranger key');
reset role;
create temporary table ws as select w.id, w.billing_account_id from public.workspaces w
  join public.workspace_members m on m.workspace_id = w.id and m.user_id = 'ac000000-0000-4000-8000-000000000001';
select set_config('request.jwt.claims', '{"role": "service_role"}', true);
insert into public.workflows (id, workspace_id, name, state) select 'ac100000-0000-4000-8000-000000000001', id, 'Logged',
  '{"blocks": {"hook": {"id": "hook", "type": "generic_webhook", "name": "Hook", "config": {}}, "done": {"id": "done", "type": "response", "name": "Done", "config": {"body": "ok"}}}, "edges": [{"id": "e1", "source": "hook", "target": "done"}]}'
from ws;
select public.deploy_workflow('ac100000-0000-4000-8000-000000000001');

create temporary table runs as
  select (public.admit_workflow_run('ac100000-0000-4000-8000-000000000001', 'webhook') ->> 'executionId')::uuid as id, 'models' as label
  union all
  select (public.admit_workflow_run('ac100000-0000-4000-8000-000000000001', 'webhook') ->> 'executionId')::uuid, 'plain';
create function pg_temp.run(p_label text) returns uuid language sql as $$ select id from runs where label = p_label $$;
grant select on ws, runs, keys to anon, service_role;
grant select on ws, runs to authenticated;
select public.finish_workflow_run(pg_temp.run('models'), 'completed', p_model_usage => '[{"model": "gpt-4o", "promptTokens": 10, "completionTokens": 5}, {"model": "my-own-model", "promptTokens": 1, "completionTokens": 1}]');
select public.finish_workflow_run(pg_temp.run('plain'), 'failed', p_error => '{"message": "no"}');

-- The per-model table -------------------------------------------------------------------------------

select is((select array_agg(model order by model) from workflows_private.execution_models where execution_id = pg_temp.run('models')),
  array['gpt-4o', 'my-own-model'], 'A run that ended with model usage lists each model it used');
select is((select count(*)::int from workflows_private.execution_models where execution_id = pg_temp.run('plain')), 0,
  'A run without models lists none');
select is((select started_at from workflows_private.execution_models where execution_id = pg_temp.run('models') limit 1),
  (select started_at from public.workflow_executions where id = pg_temp.run('models')), 'and keeps its start time for the keyset');
select pg_temp.act_as('ac000000-0000-4000-8000-000000000001');
select throws_ok($$select * from workflows_private.execution_models$$, '42501', null, 'No signed-in user reads the per-model table');
reset role;
set local role service_role;
select throws_ok($$select * from workflows_private.execution_models$$, '42501', null, 'nor does the service role');
reset role;

-- Who may call ---------------------------------------------------------------------------------------

select pg_temp.act_as('ac000000-0000-4000-8000-000000000001');
select throws_ok(format($$select public.workflow_logs(%L, %L)$$, pg_temp.key('owner'), (select id from ws)), '42501', null, 'Signed-in users cannot call the logs functions');
select throws_ok(format($$select public.workflow_log_detail(%L, %L)$$, pg_temp.key('owner'), pg_temp.run('plain')), '42501', null, 'nor the log detail');
select throws_ok(format($$select public.workflow_execution_detail(%L, %L)$$, pg_temp.key('owner'), pg_temp.run('plain')), '42501', null, 'nor the execution detail');
reset role;
set local role anon;
select throws_ok(format($$select public.workflow_logs(%L, %L)$$, pg_temp.key('owner'), (select id from ws)), '42501', null, 'and neither can anonymous callers');
reset role;
set local role service_role;

-- Answers --------------------------------------------------------------------------------------------

select is(public.workflow_logs(null, (select id from ws)),
  '{"status": 401, "outcome": "refused", "code": "UNAUTHORIZED", "error": "API key required: send it in the X-API-Key header"}'::jsonb,
  'Without a key the answer is 401');
select is(public.workflow_logs(pg_temp.key('stranger'), (select id from ws)) - 'rateLimit',
  jsonb_build_object('status', 403, 'outcome', 'refused', 'code', 'FORBIDDEN', 'error', format('This API key may not read the logs of workspace %s', (select id from ws))),
  'A key of someone outside the workspace gets 403');
select is(jsonb_array_length(public.workflow_logs(pg_temp.key('owner'), (select id from ws)) -> 'body' -> 'data'), 2, 'The owner''s key lists both logs');
select is((select array_agg(e ->> 'id' order by n) from jsonb_array_elements(public.workflow_logs(pg_temp.key('owner'), (select id from ws), p_model => 'my-own-model') -> 'body' -> 'data') with ordinality as x (e, n)),
  array[pg_temp.run('models')::text], 'The model filter finds the run by a model it used');
select is((public.workflow_logs(pg_temp.key('owner'), (select id from ws), p_level => 'error', p_limit => 1) -> 'body' -> 'data' -> 0 ->> 'id'),
  pg_temp.run('plain')::text, 'The level filter finds the failed run');
select is(public.workflow_log_detail(pg_temp.key('stranger'), pg_temp.run('plain')) - 'rateLimit',
  jsonb_build_object('status', 404, 'outcome', 'refused', 'code', 'NOT_FOUND', 'error', format('Log %s not found', pg_temp.run('plain'))),
  'A log the key may not read is 404');
select is(public.workflow_execution_detail(pg_temp.key('owner'), pg_temp.run('plain')) -> 'body' -> 'workflowState' -> 'blocks' -> 'done' ->> 'type',
  'response', 'The execution detail holds the deployed state the run executed');

select throws_ok(format($$select public.workflow_logs(%L, %L, p_limit => 0)$$, pg_temp.key('owner'), (select id from ws)), '22023', null,
  'A limit out of range is a caller error (the edge function answers 400 before)');
select throws_ok(format($$select public.workflow_logs(%L, %L, p_triggers => array['email'])$$, pg_temp.key('owner'), (select id from ws)), '22023', null,
  'and so is an unknown trigger');

-- The logs bucket ------------------------------------------------------------------------------------

reset role;
update workflows_private.account_meters set logs_tokens = 2, logs_at = now() where billing_account_id = (select billing_account_id from ws);
set local role service_role;
select is((public.workflow_log_detail(pg_temp.key('owner'), pg_temp.run('plain')) -> 'rateLimit' ->> 'remaining')::int, 1, 'Each request spends a token of the account''s logs bucket');
select is((public.workflow_logs(pg_temp.key('owner'), (select id from ws)) -> 'rateLimit' ->> 'remaining')::int, 0, 'whatever the endpoint');
select is(public.workflow_logs(pg_temp.key('owner'), (select id from ws)) - 'error' - 'rateLimit',
  '{"status": 429, "outcome": "refused", "code": "RATE_LIMIT_EXCEEDED", "retryAfter": 6}'::jsonb, 'An empty bucket answers 429 with the wait');
reset role;
select is((select logs_tokens from workflows_private.account_meters where billing_account_id = (select billing_account_id from ws)), 0::double precision,
  'and a refusal spends nothing');

select * from finish();
rollback;
