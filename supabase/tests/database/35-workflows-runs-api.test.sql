-- Workflow service, issue 31 part 1: the runs API's SQL functions (workflow_runs,
-- workflow_run_detail): who may call them, whose runs a key reads (another workspace's answers 404,
-- never 403), Sim's status names, the filters and the keyset, what one run shows, and the logs
-- bucket they spend.
begin;
select plan(35);

insert into auth.users (id, email, aud, role) values
  ('af000000-0000-4000-8000-000000000001', 'owner@runs.test', 'authenticated', 'authenticated'),
  ('af000000-0000-4000-8000-000000000002', 'stranger@runs.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create temporary table keys (label text primary key, key text);
grant select, insert on keys to authenticated;
create function pg_temp.key(p_label text) returns text language sql as $$ select key from keys where label = p_label $$;

select pg_temp.act_as('af000000-0000-4000-8000-000000000001');
select public.create_workspace('Runs');
insert into keys select 'owner', key from public.create_api_key('Owner key');
select pg_temp.act_as('af000000-0000-4000-8000-000000000002');
select public.create_workspace('Elsewhere');
insert into keys select 'stranger', key from public.create_api_key('Stranger key');
reset role;
create temporary table ws as select w.id, w.billing_account_id from public.workspaces w
  join public.workspace_members m on m.workspace_id = w.id and m.user_id = 'af000000-0000-4000-8000-000000000001';
select pg_temp.act_as('af000000-0000-4000-8000-000000000002');
insert into keys select 'elsewhere', key from public.create_api_key('Elsewhere''s workspace key',
  (select w.id from public.workspaces w join public.workspace_members m on m.workspace_id = w.id and m.user_id = 'af000000-0000-4000-8000-000000000002'));
reset role;
select set_config('request.jwt.claims', '{"role": "service_role"}', true);
insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute, logs_per_minute) select billing_account_id, 1000, 1000, 1000 from ws;
insert into public.workflows (id, workspace_id, name, state) select 'af100000-0000-4000-8000-000000000001', id, 'Watched',
  '{"blocks": {"hook": {"id": "hook", "type": "generic_webhook", "name": "Hook", "config": {}}, "done": {"id": "done", "type": "response", "name": "Done", "config": {"body": "ok"}}}, "edges": [{"id": "e1", "source": "hook", "target": "done"}]}'
from ws;
select public.deploy_workflow('af100000-0000-4000-8000-000000000001');

create temporary table runs (label text primary key, id uuid);
create function pg_temp.run(p_label text) returns uuid language sql as $$ select id from runs where label = p_label $$;
create function pg_temp.admit(p_label text, p_trigger text, p_mode text, p_user uuid default null) returns uuid language sql as $$
  insert into runs values (p_label, (public.admit_workflow_run('af100000-0000-4000-8000-000000000001', p_trigger, p_mode, null, p_user,
    p_input => '{"order": 7}') ->> 'executionId')::uuid)
  returning id;
$$;
grant select on ws, runs, keys to anon, service_role;
grant select on ws, runs to authenticated;

-- An async run parked at a long Wait, taken by a worker first (whatever else is queued is claimed
-- too, and given back when the test rolls back).
select pg_temp.admit('parked', 'webhook', 'async');
select public.claim_workflow_runs(10, 60);
select public.record_workflow_checkpoint(pg_temp.run('parked'), 1, '{"kind": "completed", "key": "hook", "output": {}, "span": {"blockId": "hook", "name": "Hook"}}');
select public.record_workflow_checkpoint(pg_temp.run('parked'), 1, '{"kind": "timer", "key": "pause", "dueAt": 1}');
select public.park_workflow_run(pg_temp.run('parked'), 1, now() + interval '1 hour');
select pg_temp.admit('queued', 'webhook', 'async');
select pg_temp.admit('running', 'manual', 'sync', 'af000000-0000-4000-8000-000000000001');
select pg_temp.admit('done', 'webhook', 'sync');
select pg_temp.admit('broke', 'webhook', 'sync');
select public.finish_workflow_run(pg_temp.run('done'), 'completed', '{"answer": 42}', p_trace_spans => '[{"blockId": "done", "name": "Done", "status": "success"}]');
select public.finish_workflow_run(pg_temp.run('broke'), 'failed', '{"partial": true}', '{"message": "It broke", "code": "BLOCK_FAILED", "failedBlock": {"id": "done", "name": "Done", "type": "response"}}');

create function pg_temp.list(p_key text, p_workspace uuid default null, p_workflow uuid default null, p_status text default null, p_trigger text default null,
  p_start timestamptz default null, p_end timestamptz default null, p_limit integer default 50, p_at timestamptz default null, p_id uuid default null) returns jsonb language sql as $$
  select public.workflow_runs(p_key, p_workspace, p_workflow, p_status, p_trigger, p_start, p_end, p_limit, p_at, p_id);
$$;
create function pg_temp.ids(p_answer jsonb) returns text[] language sql as $$
  select coalesce(array_agg(e ->> 'runId' order by n), '{}') from jsonb_array_elements(p_answer -> 'body' -> 'data') with ordinality as x (e, n);
$$;
create function pg_temp.detail(p_label text) returns jsonb language sql as $$
  select public.workflow_run_detail(pg_temp.key('owner'), pg_temp.run(p_label)) -> 'body' -> 'data';
$$;

-- Who may call ---------------------------------------------------------------------------------------

select pg_temp.act_as('af000000-0000-4000-8000-000000000001');
select throws_ok(format($$select public.workflow_runs(%L, %L)$$, pg_temp.key('owner'), (select id from ws)), '42501', null, 'Signed-in users cannot call the runs functions');
select throws_ok(format($$select public.workflow_run_detail(%L, %L)$$, pg_temp.key('owner'), pg_temp.run('done')), '42501', null, 'nor the run detail');
reset role;
set local role anon;
select throws_ok(format($$select public.workflow_run_detail(%L, %L)$$, pg_temp.key('owner'), pg_temp.run('done')), '42501', null, 'and neither can anonymous callers');
reset role;
set local role service_role;

-- Whose runs a key reads -----------------------------------------------------------------------------

select is(public.workflow_runs(null, (select id from ws)),
  '{"status": 401, "outcome": "refused", "code": "UNAUTHORIZED", "error": "API key required: send it in the X-API-Key header"}'::jsonb,
  'Without a key the answer is 401');
select is(pg_temp.list(pg_temp.key('stranger'), (select id from ws)) - 'rateLimit',
  jsonb_build_object('status', 404, 'outcome', 'refused', 'code', 'NOT_FOUND', 'error', format('Workspace %s not found', (select id from ws))),
  'A key of someone outside the workspace is told it does not exist (404, not 403)');
select is(pg_temp.list(pg_temp.key('stranger'), p_workflow => 'af100000-0000-4000-8000-000000000001') - 'rateLimit',
  jsonb_build_object('status', 404, 'outcome', 'refused', 'code', 'NOT_FOUND', 'error', 'Workflow af100000-0000-4000-8000-000000000001 not found'),
  'and so is one asking for a workflow of the workspace');
select is(public.workflow_run_detail(pg_temp.key('stranger'), pg_temp.run('done')) - 'rateLimit',
  jsonb_build_object('status', 404, 'outcome', 'refused', 'code', 'NOT_FOUND', 'error', format('Run %s not found', pg_temp.run('done'))),
  'Another workspace''s run is 404 for a personal key');
select is(public.workflow_run_detail(pg_temp.key('elsewhere'), pg_temp.run('done')) ->> 'status', '404', 'and for a workspace key of another workspace');
select is(public.workflow_run_detail(pg_temp.key('owner'), pg_temp.run('done'), '00000000-0000-4000-8000-000000000000') ->> 'status', '404',
  'A run asked for under another workflow is 404');
select is(public.workflow_run_detail(pg_temp.key('owner'), '00000000-0000-4000-8000-000000000000') ->> 'status', '404', 'as is a run that does not exist');

-- The list -------------------------------------------------------------------------------------------

-- Every run here was admitted in this one transaction, so at one instant: the keyset orders them by id.
select is(pg_temp.ids(pg_temp.list(pg_temp.key('owner'), (select id from ws))), (select array_agg(id::text order by id desc) from runs),
  'The list holds every run of the workspace, queued and parked ones included, newest (then highest id) first');
select is((select jsonb_object_agg(r.label, e ->> 'status') from jsonb_array_elements(pg_temp.list(pg_temp.key('owner'), (select id from ws)) -> 'body' -> 'data') e join runs r on r.id = (e ->> 'runId')::uuid),
  '{"parked": "paused", "queued": "queued", "running": "running", "done": "completed", "broke": "failed"}'::jsonb,
  'Statuses are Sim''s: a parked run is paused');
select is((pg_temp.list(pg_temp.key('owner'), (select id from ws)) -> 'body' -> 'data' -> 0) - 'runId' - 'createdAt' - 'startedAt' - 'endedAt' - 'status' - 'trigger' - 'durationMs' - 'cost',
  '{"workflowId": "af100000-0000-4000-8000-000000000001", "rerunOf": null}'::jsonb, 'An entry has runId, workflowId, status, trigger, createdAt, startedAt, endedAt, durationMs, rerunOf and cost');
select is(pg_temp.ids(pg_temp.list(pg_temp.key('owner'), (select id from ws), p_status => 'paused')), array[pg_temp.run('parked')::text], 'The status filter tells paused');
select is(pg_temp.ids(pg_temp.list(pg_temp.key('owner'), (select id from ws), p_status => 'running')), array[pg_temp.run('running')::text], 'from running');
select is(pg_temp.ids(pg_temp.list(pg_temp.key('owner'), (select id from ws), p_status => 'queued')), array[pg_temp.run('queued')::text], 'and finds the queued run');
select is(pg_temp.ids(pg_temp.list(pg_temp.key('owner'), (select id from ws), p_trigger => 'manual')), array[pg_temp.run('running')::text], 'The trigger filter finds the manual run');
select is(cardinality(pg_temp.ids(pg_temp.list(pg_temp.key('owner'), p_workflow => 'af100000-0000-4000-8000-000000000001'))), 5,
  'A workflow alone names its workspace');
select is(cardinality(pg_temp.ids(pg_temp.list(pg_temp.key('owner'), (select id from ws), p_start => now(), p_end => now()))), 5, 'The time range includes both ends');
select is(cardinality(pg_temp.ids(pg_temp.list(pg_temp.key('owner'), (select id from ws), p_start => now() + interval '1 microsecond'))), 0, 'and bounds the admission time');

create temporary table pages as select pg_temp.list(pg_temp.key('owner'), (select id from ws), p_limit => 2) as first;
select is(pg_temp.ids((select first from pages)), (select (array_agg(id::text order by id desc))[1:2] from runs), 'A page holds `limit` runs');
select is((select first -> 'body' -> 'nextCursor' ->> 'id' from pages), (select (array_agg(id::text order by id desc))[2] from runs),
  'and a cursor at its last run');
select is(pg_temp.ids(pg_temp.list(pg_temp.key('owner'), (select id from ws), p_limit => 4,
    p_at => (select (first -> 'body' -> 'nextCursor' ->> 'createdAt')::timestamptz from pages), p_id => (select (first -> 'body' -> 'nextCursor' ->> 'id')::uuid from pages))),
  (select (array_agg(id::text order by id desc))[3:5] from runs), 'The next page goes on after it, however many share its instant');

select throws_ok(format($$select pg_temp.list(%L, %L, p_limit => 101)$$, pg_temp.key('owner'), (select id from ws)), '22023', null,
  'A limit over 100 is a caller error (the edge function answers 400 before)');
select throws_ok(format($$select pg_temp.list(%L, %L, p_status => 'pending')$$, pg_temp.key('owner'), (select id from ws)), '22023', null, 'and so is an unknown status');
select throws_ok(format($$select pg_temp.list(%L, %L, p_start => now(), p_end => now() - interval '1 second')$$, pg_temp.key('owner'), (select id from ws)), '22023', null,
  'and a range that ends before it starts');

-- One run --------------------------------------------------------------------------------------------

select is(pg_temp.detail('broke') -> 'error', '{"code": "BLOCK_FAILED", "message": "It broke", "blockId": "done", "blockName": "Done"}'::jsonb,
  'A failed run''s error names its code, message and block');
select is(pg_temp.detail('broke') -> 'output', 'null'::jsonb, 'and its output is null');
select is(pg_temp.detail('done') - 'runId' - 'createdAt' - 'startedAt' - 'endedAt' - 'durationMs' - 'cost' - 'trace',
  '{"workflowId": "af100000-0000-4000-8000-000000000001", "status": "completed", "trigger": "webhook", "mode": "sync", "deploymentVersion": 1,
    "input": {"order": 7}, "rerunOf": null, "rerunFromBlock": null, "attempt": 1, "error": null, "output": {"answer": 42}, "paused": null, "concurrency": {"waiting": false, "waitingSince": null, "waited": false, "waitedMs": 0, "key": null, "keyLimit": null, "priority": 0}, "cancellation": null,
    "blocks": [{"blockId": "done", "name": "Done", "status": "success"}]}'::jsonb,
  'A completed run shows its deployment version, input (sync runs keep theirs too), output and the blocks that ran');
select is((pg_temp.detail('parked') -> 'paused') - 'pausedAt',
  jsonb_build_object('pauseKind', 'time', 'resumeAt', (select parked_until from public.workflow_executions where id = pg_temp.run('parked'))),
  'A paused run says it waits for time, and until when');
select is(pg_temp.detail('parked') -> 'blocks', '[{"blockId": "hook", "name": "Hook"}]'::jsonb,
  'and shows the blocks it completed before it parked');
select is(pg_temp.detail('queued') - 'runId' - 'createdAt' - 'cost' - 'trace',
  '{"workflowId": "af100000-0000-4000-8000-000000000001", "status": "queued", "trigger": "webhook", "mode": "async", "deploymentVersion": 1,
    "input": {"order": 7}, "rerunOf": null, "rerunFromBlock": null, "startedAt": null, "endedAt": null, "durationMs": null, "attempt": 0, "error": null, "output": null, "paused": null, "concurrency": {"waiting": false, "waitingSince": null, "waited": false, "waitedMs": 0, "key": null, "keyLimit": null, "priority": 0}, "cancellation": null, "blocks": []}'::jsonb,
  'A queued run shows the input it will run with');
select is(pg_temp.detail('running') -> 'deploymentVersion', 'null'::jsonb, 'A manual run ran the draft: no deployment version');

-- The logs bucket ------------------------------------------------------------------------------------

reset role;
update workflows_private.account_meters set logs_tokens = 1, logs_at = now() where billing_account_id = (select billing_account_id from ws);
set local role service_role;
select is((public.workflow_run_detail(pg_temp.key('owner'), pg_temp.run('done')) -> 'rateLimit' ->> 'remaining')::int, 0, 'Each request spends a token of the account''s logs bucket');
select is(pg_temp.list(pg_temp.key('owner'), (select id from ws)) ->> 'code', 'RATE_LIMIT_EXCEEDED', 'and an empty bucket answers 429');

select * from finish();
rollback;
