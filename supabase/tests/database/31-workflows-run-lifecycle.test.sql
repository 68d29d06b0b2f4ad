-- Workflow service: finishing a run (once), the async worker's claim and heartbeat, cancellation and
-- the sweeper that closes runs whose worker is gone.
begin;
select plan(59);

insert into auth.users (id, email, aud, role) values
  ('aa000000-0000-4000-8000-000000000001', 'owner@lifecycle.test', 'authenticated', 'authenticated'),
  ('aa000000-0000-4000-8000-000000000002', 'viewer@lifecycle.test', 'authenticated', 'authenticated'),
  ('aa000000-0000-4000-8000-000000000003', 'stranger@lifecycle.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create temporary table runs (label text primary key, id uuid);
create temporary table keys (label text primary key, key text);
grant select, insert on runs, keys to authenticated;
create function pg_temp.run(p_label text) returns uuid language sql as $$ select id from runs where label = p_label $$;
create function pg_temp.key(p_label text) returns text language sql as $$ select key from keys where label = p_label $$;
-- Admits a webhook run (the edge function vouching) and remembers its id.
create function pg_temp.admit(p_label text, p_mode text, p_input jsonb default null) returns uuid language sql as $$
  insert into runs values (p_label, (public.admit_workflow_run('ab000000-0000-4000-8000-000000000001', 'webhook', p_mode, p_input => p_input) ->> 'executionId')::uuid)
  returning id;
$$;
create function pg_temp.row(p_label text) returns public.workflow_executions language sql as $$
  select * from public.workflow_executions where id = pg_temp.run(p_label);
$$;
create function pg_temp.message(p_label text) returns pgmq.q_workflow_runs language sql as $$
  select q.* from pgmq.q_workflow_runs q where q.message ->> 'executionId' = pg_temp.run(p_label)::text;
$$;

select pg_temp.act_as('aa000000-0000-4000-8000-000000000001');
select public.create_workspace('Lifecycle');
insert into keys select 'owner', key from public.create_api_key('Owner key');
select pg_temp.act_as('aa000000-0000-4000-8000-000000000003');
insert into keys select 'stranger', key from public.create_api_key('Stranger key');
reset role;
create temporary table ws as select id, billing_account_id from public.workspaces where name = 'Lifecycle';
insert into public.workspace_members (workspace_id, user_id, role) select id, 'aa000000-0000-4000-8000-000000000002', 'viewer' from ws;
select pg_temp.act_as('aa000000-0000-4000-8000-000000000002');
insert into keys select 'viewer', key from public.create_api_key('Viewer key');
reset role;
select set_config('request.jwt.claims', '{"role": "service_role"}', true);
insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute) select billing_account_id, 1000, 1000 from ws;
insert into public.workflows (id, workspace_id, name, state) select 'ab000000-0000-4000-8000-000000000001', id, 'Lifecycle',
  '{"blocks": {"hook": {"id": "hook", "type": "generic_webhook", "name": "Hook", "config": {}}, "done": {"id": "done", "type": "response", "name": "Done", "config": {"body": "ok"}}}, "edges": [{"id": "e1", "source": "hook", "target": "done"}]}'
from ws;
select public.deploy_workflow('ab000000-0000-4000-8000-000000000001');

-- Finishing --------------------------------------------------------------------------------------

select pg_temp.admit('sync', 'sync');
select pg_temp.act_as('aa000000-0000-4000-8000-000000000001');
select throws_ok($$select public.finish_workflow_run(pg_temp.run('sync'), 'completed')$$, '42501', null, 'Only the service role finishes runs');
reset role;
create temporary table finished as select public.finish_workflow_run(pg_temp.run('sync'), 'completed', '{"answer": 42}', null,
  '[{"id": "done", "status": "success"}]', '[{"id": "f1", "name": "a.txt"}]',
  '[{"model": "gpt-4o", "promptTokens": 1000, "completionTokens": 500}, {"model": "gpt-4o-mini", "promptTokens": 2000, "completionTokens": 0, "ownKey": true}]',
  42, '{"status": 200, "headers": {}, "body": {"answer": 42}}') as r;
select is((select r - array['cost', 'usage'] from finished), jsonb_build_object('outcome', 'finished', 'executionId', pg_temp.run('sync'), 'runStatus', 'completed', 'level', 'info'),
  'Finishing answers the outcome');
select is((select r -> 'cost' from finished),
  '{"total": 0.02005, "base": 0.001, "input": 0.00655, "output": 0.0125, "tokens": {"prompt": 3000, "completion": 500, "total": 3500},
    "models": {"gpt-4o": {"input": 0.00625, "output": 0.0125, "total": 0.01875, "priced": true, "tokens": {"prompt": 1000, "completion": 500, "total": 1500}},
               "gpt-4o-mini": {"input": 0.0003, "output": 0, "total": 0.0003, "priced": true, "tokens": {"prompt": 2000, "completion": 0, "total": 2000}}}}'::jsonb,
  'and the cost: the base charge plus each model''s tokens at its key''s rate');
select is((select r -> 'usage' ->> 'currentPeriodCost' from finished), '0.02005', 'and the account''s usage, this run''s cost included');
select is(((pg_temp.row('sync')).status, (pg_temp.row('sync')).level, (pg_temp.row('sync')).ended_at, (pg_temp.row('sync')).duration_ms, (pg_temp.row('sync')).cost_total, (pg_temp.row('sync')).lease_expires_at)::text,
  format('(completed,info,"%s",42,0.0200500000,)', now()), 'The record says completed, when, how long, for how much; its lease is over');
select is(((pg_temp.row('sync')).output, (pg_temp.row('sync')).trace_spans, (pg_temp.row('sync')).files, (pg_temp.row('sync')).response)::text,
  '("{""answer"": 42}","[{""id"": ""done"", ""status"": ""success""}]","[{""id"": ""f1"", ""name"": ""a.txt""}]","{""body"": {""answer"": 42}, ""status"": 200, ""headers"": {}}")',
  'and keeps the output, trace spans, files and the response it gave');
select is((select array_agg(format('%s %s', kind, amount) order by kind) from public.usage_ledger where execution_id = pg_temp.run('sync')),
  array['execution 0.0010000000', 'models 0.0190500000'], 'The ledger has the base charge and the model cost');
create temporary table meter_before as select period_cost from workflows_private.account_meters where billing_account_id = (select billing_account_id from ws);
select is(public.finish_workflow_run(pg_temp.run('sync'), 'failed', '{"other": true}', '{"message": "late"}', null, null, '[{"model": "gpt-4o", "promptTokens": 9, "completionTokens": 9}]') - 'cost',
  jsonb_build_object('outcome', 'already_finished', 'executionId', pg_temp.run('sync'), 'runStatus', 'completed', 'level', 'info'), 'A second finish changes nothing');
select is((pg_temp.row('sync')).output, '{"answer": 42}'::jsonb, 'the record stays as first finished');
select is((select count(*)::int from public.usage_ledger where execution_id = pg_temp.run('sync')), 2, 'nothing is charged twice');
select is((select period_cost from workflows_private.account_meters where billing_account_id = (select billing_account_id from ws)), (select period_cost from meter_before), 'and the usage does not move');

select pg_temp.admit('failing', 'sync');
select public.finish_workflow_run(pg_temp.run('failing'), 'failed', null,
  '{"message": "Block \"Done\" failed: boom", "code": "BLOCK_FAILED", "failedBlock": {"id": "done", "name": "Done", "type": "response"}}');
select is(((pg_temp.row('failing')).status, (pg_temp.row('failing')).level, (pg_temp.row('failing')).error_code, (pg_temp.row('failing')).error_message, (pg_temp.row('failing')).failed_block)::text,
  '(failed,error,BLOCK_FAILED,"Block ""Done"" failed: boom","{""id"": ""done"", ""name"": ""Done"", ""type"": ""response""}")', 'A failed run is recorded at level error with its failure');
select is((pg_temp.row('failing')).cost, '{"total": 0.001, "base": 0.001, "input": 0, "output": 0, "tokens": {"prompt": 0, "completion": 0, "total": 0}, "models": {}}'::jsonb,
  'A run without model usage costs its base charge');
select pg_temp.admit('timeout', 'sync');
select public.finish_workflow_run(pg_temp.run('timeout'), 'failed', null, '{"message": "The run took longer than 30000 ms", "code": "RUN_TIMEOUT"}');
select is(((pg_temp.row('timeout')).status, (pg_temp.row('timeout')).error_code)::text, '(failed,RUN_TIMEOUT)', 'A timeout is a failure with code RUN_TIMEOUT');

select throws_ok($$select public.finish_workflow_run(gen_random_uuid(), 'completed')$$, 'P0002', null, 'Finishing an unknown run is an error');
select pg_temp.admit('bad', 'sync');
select throws_ok($$select public.finish_workflow_run(pg_temp.run('bad'), 'success')$$, '22023', null, 'The status is completed, failed or cancelled');
select throws_ok($$select public.finish_workflow_run(pg_temp.run('bad'), 'failed', null, '"boom"')$$, '22023', null, 'An error is an object with a message');
select throws_ok($$select public.finish_workflow_run(pg_temp.run('bad'), 'completed', p_duration_ms => -1)$$, '22023', null, 'A duration cannot be negative');
select throws_ok($$select public.finish_workflow_run(pg_temp.run('bad'), 'completed', p_model_usage => '[{"model": "gpt-4o"}]')$$, '22023', null, 'Model usage needs token counts');
select is((pg_temp.row('bad')).status, 'running'::public.workflow_run_status, 'and a rejected finish leaves the run as it was');

-- Claiming ---------------------------------------------------------------------------------------

select pg_temp.admit('async 1', 'async', '{"n": 1}');
select pg_temp.admit('async 2', 'async', '{"n": 2}');
create temporary table claimed as select public.claim_workflow_runs(5, 60) as r;
select is((select jsonb_agg(x -> 'executionId' order by x ->> 'executionId') from claimed, jsonb_array_elements(r -> 'runs') x),
  (select jsonb_agg(to_jsonb(id) order by id::text) from runs where label like 'async _'), 'A worker claims the queued runs');
select is((select x - array['executionId', 'leaseExpiresAt', 'deployment', 'workflow', 'trace'] from claimed, jsonb_array_elements(r -> 'runs') x where x ->> 'executionId' = pg_temp.run('async 1')::text),
  '{"runStatus": "running", "trigger": "webhook", "mode": "async", "attempt": 1, "input": {"n": 1}, "snapshot": null, "environment": {"version": 0, "variables": {}}}'::jsonb,
  'each with its input and environment, as admit gives a sync run');
select ok((select x -> 'deployment' ? 'state' from claimed, jsonb_array_elements(r -> 'runs') x where x ->> 'executionId' = pg_temp.run('async 1')::text), 'and the deployment it was admitted with');
select is(((pg_temp.row('async 1')).status, (pg_temp.row('async 1')).attempt, (pg_temp.row('async 1')).started_at, (pg_temp.row('async 1')).lease_expires_at)::text,
  format('(running,1,"%s","%s")', now(), now() + interval '60 seconds'), 'The run is running, attempt 1, leased for 60 s');
select is(jsonb_array_length(public.claim_workflow_runs(5, 60) -> 'runs'), 0, 'Claimed runs are hidden from other workers');
select is((public.claim_workflow_runs(1, 60, array[(select id from public.workflow_deployments where workflow_id = 'ab000000-0000-4000-8000-000000000001')], '{}')), '{"runs": []}'::jsonb,
  'An empty queue gives an empty list');

-- The worker of 'async 1' dies: its lease ends and its message becomes visible again.
update public.workflow_executions set lease_expires_at = now() - interval '1 second' where id = pg_temp.run('async 1');
select pgmq.set_vt('workflow_runs', (pg_temp.message('async 1')).msg_id, 0);
select is((select jsonb_agg(jsonb_build_object('id', x ->> 'executionId', 'attempt', x -> 'attempt')) from jsonb_array_elements(public.claim_workflow_runs(5, 60, null, (select jsonb_build_object(id, 0) from ws)) -> 'runs') x),
  jsonb_build_array(jsonb_build_object('id', pg_temp.run('async 1'), 'attempt', 2)), 'A run whose worker died is claimed again: same execution id, next attempt');
select is((select count(*)::int from public.workflow_executions where input = '{"n": 1}'), 1, 'It is never recorded twice');

-- A message visible while its run's lease still runs (another worker holds it): hidden until the lease ends.
select pgmq.set_vt('workflow_runs', (pg_temp.message('async 2')).msg_id, 0);
select is(jsonb_array_length(public.claim_workflow_runs(5, 60) -> 'runs'), 0, 'A run another worker holds is not handed out');
select ok((pg_temp.message('async 2')).vt > clock_timestamp() + interval '50 seconds', 'its message waits for the lease to end');

-- Out of attempts.
update public.workflow_executions set attempt = 3, lease_expires_at = now() - interval '1 second' where id = pg_temp.run('async 2');
select pgmq.set_vt('workflow_runs', (pg_temp.message('async 2')).msg_id, 0);
select is(jsonb_array_length(public.claim_workflow_runs(5, 60) -> 'runs'), 0, 'A run whose workers died three times is not handed out again');
select is(((pg_temp.row('async 2')).status, (pg_temp.row('async 2')).error_code, (pg_temp.row('async 2')).level)::text, '(failed,WORKER_LOST,error)', 'it is failed, WORKER_LOST');
select is(pg_temp.message('async 2'), null, 'and its message is gone');

-- Heartbeats ---------------------------------------------------------------------------------------

select is(public.heartbeat_workflow_run(pg_temp.run('async 1'), 2, 90) - 'leaseExpiresAt', '{"alive": true, "runStatus": "running", "attempt": 2, "cancelRequested": false}'::jsonb,
  'A heartbeat keeps the run alive');
select is(((pg_temp.row('async 1')).lease_expires_at), now() + interval '90 seconds', 'moving its lease');
select ok((pg_temp.message('async 1')).vt > clock_timestamp() + interval '80 seconds', 'and its message''s visibility');
select is(public.heartbeat_workflow_run(pg_temp.run('async 1'), 1) ->> 'alive', 'false', 'The worker of an earlier attempt is told to stop');
select is(public.heartbeat_workflow_run(pg_temp.run('async 2')) ->> 'alive', 'false', 'as is the worker of an ended run');
select public.finish_workflow_run(pg_temp.run('async 1'), 'completed', '{"ok": true}');
select is(pg_temp.message('async 1'), null, 'Finishing an async run removes its message');

-- Cancelling -------------------------------------------------------------------------------------

select pg_temp.admit('queued', 'async');
select is(public.cancel_workflow_run(pg_temp.run('queued'), pg_temp.key('viewer')) - 'error', '{"status": 403, "outcome": "refused", "code": "FORBIDDEN"}'::jsonb,
  'A viewer may not cancel runs');
select is(public.cancel_workflow_run(pg_temp.run('queued'), pg_temp.key('stranger')) ->> 'status', '404', 'a stranger does not see them');
select is(public.cancel_workflow_run(pg_temp.run('queued'), 'orb_' || repeat('b', 48)) ->> 'status', '401', 'an unknown key is 401');
select is(public.cancel_workflow_run(pg_temp.run('queued'), pg_temp.key('owner')),
  jsonb_build_object('status', 200, 'body', jsonb_build_object('executionId', pg_temp.run('queued'), 'status', 'cancelled', 'cancelRequested', false)), 'A queued run is cancelled at once');
select is(((pg_temp.row('queued')).ended_at, (pg_temp.row('queued')).level, (pg_temp.row('queued')).cost_total)::text, format('("%s",info,0.0010000000)', now()),
  'it ends now, keeping the base charge of its admission');
select is(pg_temp.message('queued'), null, 'and leaves the queue');
select pg_temp.admit('running', 'sync');
select is(public.cancel_workflow_run(pg_temp.run('running')) -> 'body', jsonb_build_object('executionId', pg_temp.run('running'), 'status', 'running', 'cancelRequested', true),
  'A running run is asked to stop');
select is(public.heartbeat_workflow_run(pg_temp.run('running')) ->> 'cancelRequested', 'true', 'its worker hears it on the next heartbeat');
select public.finish_workflow_run(pg_temp.run('running'), 'cancelled', null, '{"message": "Cancelled by its caller", "code": "CANCELLED"}');
select is((pg_temp.row('running')).status, 'cancelled'::public.workflow_run_status, 'and finishes it as cancelled');
select is(public.cancel_workflow_run(pg_temp.run('sync')) -> 'body' ->> 'status', 'completed', 'An ended run stays as it ended');

-- Sweeping ---------------------------------------------------------------------------------------

select pg_temp.admit('lost sync', 'sync');
select pg_temp.admit('lost async', 'async');
select pg_temp.admit('never started', 'async');
select pg_temp.admit('cancel lost', 'sync');
select public.cancel_workflow_run(pg_temp.run('cancel lost'));
select public.claim_workflow_runs(1, 60);
select is(workflows_private.sweep_workflow_runs(now() + interval '5 minutes'), 0, 'Nothing is swept while sync leases run, nor an async run the queue may still hand out again');
select is(workflows_private.sweep_workflow_runs(now() + interval '7 minutes'), 3, 'Past their 6-minute lease, the sync runs are swept');
select is(((pg_temp.row('lost sync')).status, (pg_temp.row('lost sync')).error_code, (pg_temp.row('lost sync')).ended_at)::text, format('(failed,WORKER_LOST,"%s")', now() + interval '7 minutes'),
  'A sync run whose edge function died is failed, WORKER_LOST');
select is((pg_temp.row('cancel lost')).status, 'cancelled'::public.workflow_run_status, 'one asked to stop is cancelled');
select is((pg_temp.row('lost async')).status, 'running'::public.workflow_run_status, 'The async run with attempts left waits for the queue to hand it out again');
select is(workflows_private.sweep_workflow_runs(now() + interval '17 minutes'), 1, 'unless no worker took it within 15 minutes of its lease');
select is(((pg_temp.row('lost async')).status, (pg_temp.row('lost async')).error_code)::text, '(failed,WORKER_LOST)', 'then it is failed too');
select is(workflows_private.sweep_workflow_runs(now() + interval '25 hours'), 1, 'A day after admission, a run never started is failed');
select is(((pg_temp.row('never started')).status, (pg_temp.row('never started')).error_code, pg_temp.message('never started') is null)::text, '(failed,NOT_STARTED,t)',
  'NOT_STARTED, its message gone');
select is(public.finish_workflow_run(pg_temp.run('lost sync'), 'completed') ->> 'outcome', 'already_finished', 'A worker finishing a swept run changes nothing');

select * from finish();
rollback;
