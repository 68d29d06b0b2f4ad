-- Workflow service, issue 31 part 3: re-runs in SQL. Every run keeps its input; a sync run's
-- outcomes are stored in one batch with its finish (store_run_checkpoints); admit_workflow_run
-- admits a re-run (p_rerun_of) on the version its original ran, linked to it, with the original's
-- outcomes for a fromBlock re-run, and refuses with a code for each reason.
begin;
select plan(32);

insert into auth.users (id, email, aud, role) values
  ('b3000000-0000-4000-8000-000000000001', 'owner@reruns.test', 'authenticated', 'authenticated'),
  ('b3000000-0000-4000-8000-000000000002', 'viewer@reruns.test', 'authenticated', 'authenticated'),
  ('b3000000-0000-4000-8000-000000000003', 'stranger@reruns.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create temporary table keys (label text primary key, key text);
grant select, insert on keys to authenticated;
create function pg_temp.key(p_label text) returns text language sql as $$ select key from keys where label = p_label $$;

select pg_temp.act_as('b3000000-0000-4000-8000-000000000001');
select public.create_workspace('Reruns');
insert into keys select 'owner', key from public.create_api_key('Owner key');
select pg_temp.act_as('b3000000-0000-4000-8000-000000000003');
select public.create_workspace('Elsewhere');
insert into keys select 'stranger', key from public.create_api_key('Stranger key');
reset role;
create temporary table ws as select w.id, w.billing_account_id from public.workspaces w where w.name = 'Reruns';
insert into public.workspace_members (workspace_id, user_id, role) select id, 'b3000000-0000-4000-8000-000000000002', 'viewer' from ws;
select pg_temp.act_as('b3000000-0000-4000-8000-000000000002');
insert into keys select 'viewer', key from public.create_api_key('Viewer key');
reset role;
select set_config('request.jwt.claims', '{"role": "service_role"}', true);
insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute) select billing_account_id, 1000, 1000 from ws;
insert into public.workflows (id, workspace_id, name, state) select 'b3100000-0000-4000-8000-000000000001', id, 'Rerun me',
  '{"blocks": {"api": {"id": "api", "type": "api_trigger", "name": "API", "config": {}}, "done": {"id": "done", "type": "response", "name": "Done", "config": {"body": "v1"}}}, "edges": [{"id": "e1", "source": "api", "target": "done"}]}'
from ws;
select public.deploy_workflow('b3100000-0000-4000-8000-000000000001');
create temporary table v1 as select id from public.workflow_deployments where workflow_id = 'b3100000-0000-4000-8000-000000000001';

create temporary table runs (label text primary key, id uuid, answer jsonb);
create function pg_temp.run(p_label text) returns uuid language sql as $$ select id from runs where label = p_label $$;
create function pg_temp.answer(p_label text) returns jsonb language sql as $$ select answer from runs where label = p_label $$;
create function pg_temp.record(p_label text) returns public.workflow_executions language sql as $$
  select * from public.workflow_executions where id = pg_temp.run(p_label) $$;
create function pg_temp.keep(p_label text, p_answer jsonb) returns jsonb language sql as $$
  insert into runs values (p_label, (p_answer ->> 'executionId')::uuid, p_answer) returning answer $$;
create function pg_temp.rerun(p_label text, p_of text, p_key text default 'owner', p_input jsonb default null, p_from_block text default null) returns jsonb language sql as $$
  select pg_temp.keep(p_label, public.admit_workflow_run(p_trigger => 'api', p_mode => 'sync', p_api_key => pg_temp.key(p_key),
    p_input => p_input, p_rerun_of => pg_temp.run(p_of), p_rerun_from_block => p_from_block)) $$;
grant select on runs to authenticated, service_role;
create function pg_temp.code(p_label text) returns text language sql as $$
  select (pg_temp.answer(p_label) ->> 'status') || ' ' || (pg_temp.answer(p_label) ->> 'code') $$;

-- Every run keeps its input; a sync run's outcomes come with its finish ------------------------------

select pg_temp.keep('sync', public.admit_workflow_run('b3100000-0000-4000-8000-000000000001', 'api', 'sync', pg_temp.key('owner'), p_input => '{"n": 1}'));
select is((pg_temp.record('sync')).input, '{"n": 1}'::jsonb, 'A sync run keeps its input');
select public.finish_workflow_run(pg_temp.run('sync'), 'completed', '{"ok": true}', p_checkpoints => '[
  {"kind": "completed", "key": "api", "output": {"n": 1}, "failed": false, "span": {"blockId": "api"}, "variables": {}, "modelUsage": []},
  {"kind": "completed", "key": "done", "output": {"data": "v1"}, "failed": false, "span": {"blockId": "done"}, "variables": {}, "modelUsage": []}]');
select is((select array_agg(c.key || ':' || c.attempt order by c.seq) from workflows_private.run_checkpoints c where c.execution_id = pg_temp.run('sync')),
  array['api:1', 'done:1'], 'and its collected outcomes are stored with its finish, in the order given, under its attempt');
select throws_ok(format($$select public.finish_workflow_run(%L, 'completed', p_checkpoints => '{"kind": "completed"}')$$, gen_random_uuid()), '22023', null,
  'Checkpoints must be an array');
select throws_ok(format($$select workflows_private.store_run_checkpoints(%L, 1, '[{"kind": "nope", "key": "x"}]')$$, pg_temp.run('sync')), '22023', null,
  'store_run_checkpoints refuses an entry that is not a completed block or a timer');
select workflows_private.store_run_checkpoints(pg_temp.run('sync'), 2, '[{"kind": "completed", "key": "done", "output": {"data": "other"}}, {"kind": "timer", "key": "wait", "dueAt": 1}]');
select is((select (checkpoint -> 'output', attempt)::text from workflows_private.run_checkpoints where execution_id = pg_temp.run('sync') and key = 'done'), '("{""data"": ""other""}",1)',
  'and a key stored already takes the checkpoint given (a finish masks what the run recorded), keeping its place');
select is(jsonb_path_query_array(workflows_private.completed_checkpoints(pg_temp.run('sync')), '$[*].key'), '["api", "done"]'::jsonb,
  'A run''s completed outcomes, for a re-run, leave its timers out');
set local role service_role;
select throws_ok(format($$select workflows_private.store_run_checkpoints(%L, 1, '[]')$$, pg_temp.run('sync')), '42501', null,
  'Only the lifecycle functions store checkpoints in batches');
reset role;

-- A newer version is deployed; re-runs still run the version their original ran.
update public.workflows set state = jsonb_set(state, '{blocks,done,config,body}', '"v2"') where id = 'b3100000-0000-4000-8000-000000000001';
select public.deploy_workflow('b3100000-0000-4000-8000-000000000001');

-- Re-runs ---------------------------------------------------------------------------------------------

select pg_temp.rerun('whole', 'sync');
select is(pg_temp.answer('whole') ->> 'outcome', 'admitted', 'A finished run is re-run');
select is(((pg_temp.answer('whole') -> 'deployment' ->> 'id')::uuid, pg_temp.answer('whole') -> 'deployment' -> 'state' -> 'blocks' -> 'done' -> 'config' ->> 'body')::text,
  ((select id from v1), 'v1')::text, 'on the version its original ran, not the active one');
select is(((pg_temp.record('whole')).rerun_of, (pg_temp.record('whole')).rerun_from_block, (pg_temp.record('whole')).input, (pg_temp.record('whole')).deployment_version)::text,
  (pg_temp.run('sync'), null::text, '{"n": 1}'::jsonb, 1)::text, 'linked to it, with its input');
select is((pg_temp.answer('whole') ->> 'rerunOf', pg_temp.answer('whole') -> 'input', pg_temp.answer('whole') ? 'checkpoints')::text,
  (pg_temp.run('sync')::text, '{"n": 1}'::jsonb, true)::text, 'and the answer names the original and hands over the input');
select is(pg_temp.answer('whole') -> 'checkpoints', 'null'::jsonb, 'but no outcomes to replay for a whole re-run');
select is((pg_temp.answer('whole') -> 'rateLimit' ->> 'limit'), '1000', 'It spends the sync bucket');
select is((pg_temp.record('whole')).cost_total, 0.001::numeric(20, 10), 'and pays the base charge');

select pg_temp.rerun('edited', 'sync', p_input => '{"n": 2}');
select is((pg_temp.record('edited')).input, '{"n": 2}'::jsonb, 'An edited input replaces the original''s');

select pg_temp.rerun('from', 'sync', p_from_block => 'done');
select is(jsonb_path_query_array(pg_temp.answer('from') -> 'checkpoints', '$[*].key'), '["api", "done"]'::jsonb,
  'A fromBlock re-run is handed the original''s completed outcomes, in order (the engine picks what to replay)');
select is(((pg_temp.record('from')).rerun_from_block, pg_temp.answer('from') ->> 'fromBlock')::text, ('done', 'done')::text, 'and records its block');

select pg_temp.keep('hook', public.admit_trigger_run('webhook', 'b3100000-0000-4000-8000-000000000001', 'api', 'async', '{"h": 1}'));
select public.finish_workflow_run(pg_temp.run('hook'), 'completed');
select pg_temp.rerun('hooked', 'hook');
select is(((pg_temp.record('hooked')).trigger, (pg_temp.record('hooked')).trigger_block_id, (pg_temp.record('hooked')).mode)::text,
  ('webhook', 'api', 'sync')::text, 'A re-run keeps its original''s trigger and trigger block, and runs synchronously');

-- Refusals ----------------------------------------------------------------------------------------------

select pg_temp.rerun('elsewhere', 'sync', 'stranger');
select is(pg_temp.answer('elsewhere') - 'rateLimit', jsonb_build_object('status', 404, 'outcome', 'refused', 'code', 'NOT_FOUND', 'error', format('Run %s not found', pg_temp.run('sync'))),
  'Another workspace''s run is 404, as one that does not exist');
select is(public.admit_workflow_run(p_api_key => pg_temp.key('owner'), p_rerun_of => gen_random_uuid()) ->> 'code', 'NOT_FOUND', 'as is a run that does not exist');
select pg_temp.rerun('viewer', 'sync', 'viewer');
select is(pg_temp.code('viewer'), '403 FORBIDDEN', 'A viewer may not re-run');

select pg_temp.keep('running', public.admit_workflow_run('b3100000-0000-4000-8000-000000000001', 'api', 'sync', pg_temp.key('owner'), p_input => '{}'));
select pg_temp.rerun('early', 'running');
select is(pg_temp.code('early'), '409 RUN_IN_PROGRESS', 'A run that has not ended is not re-run');

select pg_temp.keep('manual', public.admit_workflow_run('b3100000-0000-4000-8000-000000000001', 'manual', 'sync', p_user_id => 'b3000000-0000-4000-8000-000000000001'));
select public.finish_workflow_run(pg_temp.run('manual'), 'completed');
select pg_temp.rerun('of manual', 'manual');
select is(pg_temp.code('of manual'), '409 RERUN_NOT_SUPPORTED', 'nor a manual run of the draft');

select pg_temp.rerun('no outcomes', 'hook', p_from_block => 'done');
select is(pg_temp.code('no outcomes'), '410 RUN_DATA_EXPIRED', 'A run without recorded outcomes is not re-run from a block');
update public.workflow_executions set input = null where id = pg_temp.run('hook');
select pg_temp.rerun('no input', 'hook');
select is(pg_temp.code('no input'), '410 RUN_DATA_EXPIRED', 'A run whose input is no longer kept is not re-run with it');
select pg_temp.rerun('new input', 'hook', p_input => '{"h": 2}');
select is(pg_temp.answer('new input') ->> 'outcome', 'admitted', 'but is with a new one');

delete from public.workflow_deployments where id = (select id from v1);
select pg_temp.rerun('gone', 'sync');
select is(pg_temp.code('gone'), '410 DEPLOYMENT_GONE', 'A run whose version no longer exists is not re-run');

select throws_ok(format($$select public.admit_workflow_run('b3100000-0000-4000-8000-000000000001', p_api_key => %L, p_rerun_of => %L)$$, pg_temp.key('owner'), pg_temp.run('sync')),
  '22023', null, 'A re-run names its run, not a workflow');
select throws_ok(format($$select public.admit_workflow_run(p_api_key => %L, p_rerun_of => %L, p_input => '{}', p_rerun_from_block => 'done')$$, pg_temp.key('owner'), pg_temp.run('sync')),
  '22023', null, 'and a fromBlock re-run takes no input');
select throws_ok(format($$select public.admit_workflow_run(p_api_key => %L, p_rerun_of => %L, p_mode => 'async')$$, pg_temp.key('owner'), pg_temp.run('sync')),
  '22023', null, 'and is sync');
select is((select count(*)::int from public.workflow_executions where rerun_of is not null and workflow_id = 'b3100000-0000-4000-8000-000000000001'),
  (select count(*)::int from runs where label in ('whole', 'edited', 'from', 'hooked', 'new input')), 'Refused re-runs record nothing');

reset role;
select pg_temp.act_as('b3000000-0000-4000-8000-000000000001');
select throws_ok(format($$select public.admit_workflow_run(p_api_key => %L, p_rerun_of => %L)$$, pg_temp.key('owner'), pg_temp.run('sync')), '42501', null,
  'Signed-in users cannot admit re-runs themselves');

select * from finish();
rollback;
