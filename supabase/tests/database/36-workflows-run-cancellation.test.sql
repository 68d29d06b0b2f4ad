-- Workflow service, issue 31: cancelling runs through the runs API (workflow_run_cancel,
-- workflow_runs_cancel, and cancel_run behind them): who may cancel (a viewer's key is 403, another
-- workspace's run 404), a queued, a parked and a running run, idempotency, who and why on the
-- record, and the bulk cancel's filters and cap. That a running run's instance hears the signal is
-- tested over HTTP (test/workflows/runs-cancel.test.ts): a NOTIFY is delivered only on commit.
begin;
select plan(33);

insert into auth.users (id, email, aud, role) values
  ('ac000000-0000-4000-8000-000000000001', 'owner@cancel.test', 'authenticated', 'authenticated'),
  ('ac000000-0000-4000-8000-000000000002', 'viewer@cancel.test', 'authenticated', 'authenticated'),
  ('ac000000-0000-4000-8000-000000000003', 'stranger@cancel.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create temporary table keys (label text primary key, key text);
grant select, insert on keys to authenticated;
create function pg_temp.key(p_label text) returns text language sql as $$ select key from keys where label = p_label $$;

select pg_temp.act_as('ac000000-0000-4000-8000-000000000001');
select public.create_workspace('Cancelling');
insert into keys select 'owner', key from public.create_api_key('Owner key');
select pg_temp.act_as('ac000000-0000-4000-8000-000000000003');
select public.create_workspace('Elsewhere');
insert into keys select 'stranger', key from public.create_api_key('Stranger key');
reset role;
create temporary table ws as select w.id, w.billing_account_id from public.workspaces w where w.name = 'Cancelling'
  and exists (select from public.workspace_members m where m.workspace_id = w.id and m.user_id = 'ac000000-0000-4000-8000-000000000001');
grant select on ws to authenticated;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'ac000000-0000-4000-8000-000000000002', 'viewer' from ws;
select pg_temp.act_as('ac000000-0000-4000-8000-000000000002');
insert into keys select 'viewer', key from public.create_api_key('Viewer key');
select pg_temp.act_as('ac000000-0000-4000-8000-000000000001');
insert into keys select 'workspace', key from public.create_api_key('Ops key', (select id from ws));
reset role;
select set_config('request.jwt.claims', '{"role": "service_role"}', true);
insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute, logs_per_minute) select billing_account_id, 1000, 1000, 1000 from ws;
insert into public.workflows (id, workspace_id, name, state)
select w.id, ws.id, w.name,
  '{"blocks": {"hook": {"id": "hook", "type": "generic_webhook", "name": "Hook", "config": {}}, "done": {"id": "done", "type": "response", "name": "Done", "config": {"body": "ok"}}}, "edges": [{"id": "e1", "source": "hook", "target": "done"}]}'
from ws, (values ('ac100000-0000-4000-8000-000000000001'::uuid, 'First'), ('ac100000-0000-4000-8000-000000000002'::uuid, 'Second')) as w (id, name);
select public.deploy_workflow('ac100000-0000-4000-8000-000000000001');
select public.deploy_workflow('ac100000-0000-4000-8000-000000000002');

create temporary table runs (label text primary key, id uuid);
create function pg_temp.run(p_label text) returns uuid language sql as $$ select id from runs where label = p_label $$;
create function pg_temp.row(p_label text) returns public.workflow_executions language sql as $$ select * from public.workflow_executions where id = pg_temp.run(p_label) $$;
create function pg_temp.admit(p_label text, p_mode text, p_workflow uuid default 'ac100000-0000-4000-8000-000000000001', p_trigger text default 'webhook') returns uuid language sql as $$
  insert into runs values (p_label, (public.admit_workflow_run(p_workflow, p_trigger, p_mode) ->> 'executionId')::uuid)
  returning id;
$$;
create function pg_temp.messages(p_label text) returns bigint language sql as $$
  select count(*) from pgmq.q_workflow_runs q where q.message ->> 'executionId' = pg_temp.run(p_label)::text;
$$;
create function pg_temp.cancel(p_key text, p_label text, p_reason text default null, p_workflow uuid default null) returns jsonb language sql as $$
  select public.workflow_run_cancel(pg_temp.key(p_key), pg_temp.run(p_label), p_workflow, p_reason);
$$;
grant select on ws, runs, keys to anon, service_role;
grant select on runs to authenticated;

-- An async run parked at a long Wait (taken by a worker first), a queued one, a running sync one
-- and an ended one.
select pg_temp.admit('parked', 'async');
select public.claim_workflow_runs(10, 60);
select public.record_workflow_checkpoint(pg_temp.run('parked'), 1, '{"kind": "timer", "key": "pause", "dueAt": 1}');
select public.park_workflow_run(pg_temp.run('parked'), 1, now() + interval '1 hour');
select pg_temp.admit('queued', 'async');
select pg_temp.admit('running', 'sync');
select pg_temp.admit('done', 'sync');
select public.finish_workflow_run(pg_temp.run('done'), 'completed', '{"answer": 42}');

-- Who may call, who may cancel -------------------------------------------------------------------------

select pg_temp.act_as('ac000000-0000-4000-8000-000000000001');
select throws_ok(format($$select public.workflow_run_cancel(%L, %L)$$, pg_temp.key('owner'), pg_temp.run('queued')), '42501', null, 'Signed-in users cannot call the cancel functions');
select throws_ok(format($$select public.workflow_runs_cancel(%L, %L)$$, pg_temp.key('owner'), (select id from ws)), '42501', null, 'nor the bulk cancel');
reset role;
set local role anon;
select throws_ok(format($$select public.workflow_run_cancel(%L, %L)$$, pg_temp.key('owner'), pg_temp.run('queued')), '42501', null, 'and neither can anonymous callers');
reset role;
set local role service_role;

select is(pg_temp.cancel('stranger', 'queued') - 'rateLimit',
  jsonb_build_object('status', 404, 'outcome', 'refused', 'code', 'NOT_FOUND', 'error', format('Run %s not found', pg_temp.run('queued'))),
  'Another workspace''s run is 404 to a key outside it, never 403');
select is(public.workflow_run_cancel(pg_temp.key('owner'), '00000000-0000-4000-8000-000000000000') ->> 'status', '404', 'as is a run that does not exist');
select is(pg_temp.cancel('owner', 'queued', p_workflow => 'ac100000-0000-4000-8000-000000000002') ->> 'status', '404', 'and one asked for under another workflow');
select is(pg_temp.cancel('viewer', 'queued') - 'rateLimit' - 'error', '{"status": 403, "outcome": "refused", "code": "FORBIDDEN"}'::jsonb,
  'A viewer''s key, which reads the run, may not cancel it: 403');
select is((pg_temp.row('queued')).status, 'queued'::public.workflow_run_status, 'and the run is left as it was');
select is(public.workflow_run_cancel('orb_' || repeat('b', 48), pg_temp.run('queued')) ->> 'status', '401', 'An unknown key is 401');

-- One run ----------------------------------------------------------------------------------------------

select is((pg_temp.cancel('owner', 'queued', 'Wrong input') -> 'body' -> 'data') - 'cancellation',
  jsonb_build_object('success', true, 'runId', pg_temp.run('queued'), 'status', 'cancelled', 'durablyRecorded', true, 'pausedCancelled', false, 'reason', 'recorded'),
  'A queued run is cancelled at once');
reset role;
select is(((pg_temp.row('queued')).ended_at, pg_temp.messages('queued'))::text, format('("%s",0)', now()), 'it ends now and leaves the queue');
set local role service_role;
select is(public.workflow_run_detail(pg_temp.key('viewer'), pg_temp.run('queued')) -> 'body' -> 'data' -> 'cancellation',
  jsonb_build_object('at', now(), 'by', jsonb_build_object('apiKeyId', (select id from public.api_keys where name = 'Owner key'), 'apiKeyName', 'Owner key',
    'userId', 'ac000000-0000-4000-8000-000000000001'), 'reason', 'Wrong input'),
  'The run shows who cancelled it (the key, its name, its user), when and why');
select is((pg_temp.cancel('workspace', 'queued', 'Again') -> 'body' -> 'data') - 'cancellation',
  jsonb_build_object('success', true, 'runId', pg_temp.run('queued'), 'status', 'cancelled', 'durablyRecorded', false, 'pausedCancelled', false, 'reason', 'already_cancelled'),
  'Cancelling it again answers its state: already cancelled, nothing recorded');
select is(pg_temp.cancel('workspace', 'queued') -> 'body' -> 'data' -> 'cancellation' ->> 'reason', 'Wrong input', 'and the first who and why stay');
select is((pg_temp.cancel('owner', 'done') -> 'body' -> 'data') - 'runId',
  '{"success": true, "status": "completed", "durablyRecorded": false, "pausedCancelled": false, "reason": "already_completed", "cancellation": null}'::jsonb,
  'An ended run is left as it ended');

select is((pg_temp.cancel('workspace', 'parked') -> 'body' -> 'data') - 'runId' - 'cancellation',
  '{"success": true, "status": "cancelled", "durablyRecorded": true, "pausedCancelled": true, "reason": "recorded"}'::jsonb,
  'A parked run is cancelled at once');
reset role;
select is(((pg_temp.row('parked')).parked_until, (pg_temp.row('parked')).lease_expires_at, pg_temp.messages('parked'))::text, '(,,0)',
  'and holds nothing any more: no parking, no lease, no queue message');
set local role service_role;
select is(pg_temp.cancel('workspace', 'parked') -> 'body' -> 'data' -> 'cancellation' -> 'by',
  jsonb_build_object('apiKeyId', (select id from public.api_keys where name = 'Ops key'), 'apiKeyName', 'Ops key', 'userId', null),
  'A workspace key is recorded as itself, with no user');

select is((pg_temp.cancel('owner', 'running', 'Too slow') -> 'body' -> 'data') - 'runId' - 'cancellation',
  '{"success": true, "status": "running", "durablyRecorded": true, "pausedCancelled": false, "reason": "recorded"}'::jsonb,
  'A running run is asked to stop: it is still running when the call answers');
select is(public.heartbeat_workflow_run(pg_temp.run('running')) ->> 'cancelRequested', 'true', 'and its heartbeat says so too, the safety net');
select is(pg_temp.cancel('owner', 'running', 'Changed my mind') -> 'body' -> 'data' ->> 'durablyRecorded', 'false', 'Asking again while it stops records nothing new');
select is(public.workflow_run_detail(pg_temp.key('owner'), pg_temp.run('running')) -> 'body' -> 'data' -> 'cancellation' ->> 'reason', 'Too slow', 'the first reason stays');
select throws_ok(format($$select pg_temp.cancel('owner', 'done', %L)$$, repeat('x', 501)), '22023', null,
  'A reason over 500 characters is a caller error (the edge function answers 400 before)');

-- Bulk -------------------------------------------------------------------------------------------------

create function pg_temp.bulk(p_key text, p_workspace uuid default null, p_workflow uuid default null, p_status text default null, p_trigger text default null,
  p_start timestamptz default null, p_end timestamptz default null, p_limit integer default 1000, p_reason text default null) returns jsonb language sql as $$
  select public.workflow_runs_cancel(pg_temp.key(p_key), p_workspace, p_workflow, p_status, p_trigger, p_start, p_end, p_limit, p_reason);
$$;
reset role;
select pg_temp.admit('q1', 'async');
select pg_temp.admit('q2', 'async');
select pg_temp.admit('q3', 'async', 'ac100000-0000-4000-8000-000000000002');
select pg_temp.admit('s1', 'sync', p_trigger => 'chat');
select pg_temp.admit('s2', 'sync', 'ac100000-0000-4000-8000-000000000002');
set local role service_role;

select is(pg_temp.bulk('stranger', (select id from ws)) - 'rateLimit',
  jsonb_build_object('status', 404, 'outcome', 'refused', 'code', 'NOT_FOUND', 'error', format('Workspace %s not found', (select id from ws))),
  'Bulk cancel in another workspace is 404');
select is(pg_temp.bulk('viewer', p_workflow => 'ac100000-0000-4000-8000-000000000001') ->> 'status', '403', 'and a viewer''s key is 403');
select is(pg_temp.bulk('owner', (select id from ws), p_status => 'queued', p_workflow => 'ac100000-0000-4000-8000-000000000002') -> 'body' -> 'data',
  jsonb_build_object('cancelled', 1, 'runIds', jsonb_build_array(pg_temp.run('q3')), 'hasMore', false), 'The filters combine: queued runs of one workflow');
select is(pg_temp.bulk('owner', (select id from ws), p_status => 'running', p_trigger => 'chat', p_reason => 'Outage') -> 'body' -> 'data',
  jsonb_build_object('cancelled', 1, 'runIds', jsonb_build_array(pg_temp.run('s1')), 'hasMore', false), 'running runs of one trigger');
select is((pg_temp.row('s1')).cancel_reason, 'Outage', 'each recording who and why');
select is(pg_temp.bulk('owner', (select id from ws), p_status => 'queued', p_limit => 1) -> 'body' -> 'data',
  jsonb_build_object('cancelled', 1, 'runIds', jsonb_build_array((select id from runs where label in ('q1', 'q2') order by id limit 1)), 'hasMore', true),
  'Over the cap, the oldest are cancelled (admitted at one instant here: by id, as the list orders them) and more are said to remain');
select is((pg_temp.bulk('owner', (select id from ws)) -> 'body' -> 'data') - 'runIds',
  '{"cancelled": 2, "hasMore": false}'::jsonb, 'the next call cancels the rest, not counting runs already stopping');
select is((pg_temp.bulk('owner', (select id from ws), p_start => now() + interval '1 second') -> 'body' -> 'data') - 'runIds',
  '{"cancelled": 0, "hasMore": false}'::jsonb, 'and nothing is left in flight');
select throws_ok(format($$select pg_temp.bulk('owner', %L, p_limit => 1001)$$, (select id from ws)), '22023', null, 'A cap over 1,000 is a caller error');
select throws_ok(format($$select pg_temp.bulk('owner', %L, p_status => 'completed')$$, (select id from ws)), '22023', null, 'and so is a status that is not in flight');

select * from finish();
rollback;
