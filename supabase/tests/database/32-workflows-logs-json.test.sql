-- Workflow service, part 4: workflow_logs_json, the json text the logs endpoint calls, answers what
-- workflow_logs answers, and one entry definition serves the list and the detail endpoint.
begin;
select plan(9);

insert into auth.users (id, email, aud, role) values
  ('ad000000-0000-4000-8000-000000000001', 'owner@logs-json.test', 'authenticated', 'authenticated');
select set_config('role', 'authenticated', true),
  set_config('request.jwt.claims', '{"sub": "ad000000-0000-4000-8000-000000000001", "role": "authenticated"}', true);
select public.create_workspace('Logs as json');
create temporary table keys as select key from public.create_api_key('Owner key');
reset role;
create temporary table ws as select w.id from public.workspaces w
  join public.workspace_members m on m.workspace_id = w.id and m.user_id = 'ad000000-0000-4000-8000-000000000001';
select set_config('request.jwt.claims', '{"role": "service_role"}', true);
insert into public.workflows (id, workspace_id, name, description, state) select 'ad100000-0000-4000-8000-000000000001', id, 'Logged as json', 'Says "hi"',
  '{"blocks": {"hook": {"id": "hook", "type": "generic_webhook", "name": "Hook", "config": {}}, "done": {"id": "done", "type": "response", "name": "Done", "config": {"body": "ok"}}}, "edges": [{"id": "e1", "source": "hook", "target": "done"}]}'
from ws;
select public.deploy_workflow('ad100000-0000-4000-8000-000000000001');
create temporary table runs as
  select (public.admit_workflow_run('ad100000-0000-4000-8000-000000000001', 'webhook') ->> 'executionId')::uuid as id from generate_series(1, 3);
select public.finish_workflow_run(id, 'completed', '{"text": "line\nbreak \"quoted\""}',
  p_model_usage => '[{"model": "gpt-4o", "promptTokens": 10, "completionTokens": 5}]') from runs;
grant select on ws, runs, keys to anon, authenticated, service_role;
create function pg_temp.key() returns text language sql as $$ select key from keys $$;

select set_config('role', 'authenticated', true),
  set_config('request.jwt.claims', '{"sub": "ad000000-0000-4000-8000-000000000001", "role": "authenticated"}', true);
select throws_ok(format($$select public.workflow_logs_json(%L, %L)$$, pg_temp.key(), (select id from ws)), '42501', null,
  'Signed-in users cannot call workflow_logs_json');
reset role;
set local role anon;
select throws_ok(format($$select public.workflow_logs_json(%L, %L)$$, pg_temp.key(), (select id from ws)), '42501', null,
  'nor can anonymous callers');
reset role;
set local role service_role;

select is(public.workflow_logs_json(null, (select id from ws))::jsonb - 'rateLimit',
  public.workflow_logs(null, (select id from ws)) - 'rateLimit', 'A refusal is the same answer as json');
select is(public.workflow_logs_json(pg_temp.key(), (select id from ws))::jsonb -> 'body' -> 'data',
  public.workflow_logs(pg_temp.key(), (select id from ws)) -> 'body' -> 'data', 'A basic page is the same as json and as jsonb');
select is(public.workflow_logs_json(pg_temp.key(), (select id from ws), p_details => 'full', p_include_trace_spans => true, p_include_final_output => true)::jsonb -> 'body' -> 'data',
  public.workflow_logs(pg_temp.key(), (select id from ws), p_details => 'full', p_include_trace_spans => true, p_include_final_output => true) -> 'body' -> 'data',
  'and so is a full page with execution data (text that needs escaping included)');
select is((select array_agg(k order by k) from jsonb_object_keys(public.workflow_logs_json(pg_temp.key(), (select id from ws), p_limit => 1)::jsonb -> 'body' -> 'data' -> 0) k),
  array['cost', 'endedAt', 'error', 'executionId', 'files', 'id', 'level', 'startedAt', 'totalDurationMs', 'trigger', 'workflowId'],
  'A basic entry has the eleven fields of the list (error among them) and no more');
select is((select array_agg(k order by k) from jsonb_object_keys(public.workflow_logs_json(pg_temp.key(), (select id from ws), p_limit => 1, p_include_final_output => true)::jsonb -> 'body' -> 'data' -> 0 -> 'executionData') k),
  array['finalOutput'], 'Execution data holds only what was asked for');
select is((select public.workflow_logs_json(pg_temp.key(), (select id from ws), p_limit => 1)::jsonb -> 'body' -> 'nextCursor' ->> 'id'),
  (select id::text from public.workflow_executions where id in (select id from runs) order by started_at desc, id desc limit 1),
  'The next cursor names the last entry of the page');
select is(public.workflow_log_detail(pg_temp.key(), (select min(id::text)::uuid from runs)) -> 'body' -> 'data',
  public.workflow_logs_json(pg_temp.key(), (select id from ws), p_execution_id => (select min(id::text)::uuid from runs), p_details => 'full',
    p_include_trace_spans => true, p_include_final_output => true)::jsonb -> 'body' -> 'data' -> 0,
  'The detail endpoint''s entry is the full list entry with execution data');

select * from finish();
rollback;
