-- Workflow service, issue 31 part 3: a sync run paused at an approval is handed to the async path
-- (pause_sync_workflow_run): its outcomes stored, made async and parked in one call, its paused answer
-- kept and replayed for its Idempotency-Key until it ends, then its ending; a run whose lease ran out,
-- another attempt, a run asked to stop, bad arguments and API roles are refused.
begin;
select plan(17);

insert into auth.users (id, email, aud, role) values
  ('b2000000-0000-4000-8000-000000000001', 'owner@sync-pause.test', 'authenticated', 'authenticated');
select set_config('role', 'authenticated', true), set_config('request.jwt.claims', '{"sub": "b2000000-0000-4000-8000-000000000001", "role": "authenticated"}', true);
select public.create_workspace('Sync pause');
create temporary table keys as select key from public.create_api_key('Owner key');
reset role;
create temporary table ws as select w.id, w.billing_account_id from public.workspaces w where w.name = 'Sync pause';
select set_config('request.jwt.claims', '{"role": "service_role"}', true);
insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute, logs_per_minute) select billing_account_id, 1000, 1000, 1000 from ws;
insert into public.workflows (id, workspace_id, name, state) select 'b2100000-0000-4000-8000-000000000001', id, 'Sync approved',
  '{"blocks": {"api": {"id": "api", "type": "api_trigger", "name": "API", "config": {}}, "ok": {"id": "ok", "type": "approval", "name": "Sign off", "config": {"approvers": ["a@x.test"], "message": "Ship?"}}}, "edges": [{"id": "e1", "source": "api", "target": "ok"}]}'
from ws;
select public.deploy_workflow('b2100000-0000-4000-8000-000000000001');

create temporary table runs (label text primary key, id uuid);
create function pg_temp.run(p_label text) returns uuid language sql as $$ select id from runs where label = p_label $$;
-- Admits a sync API run (attempt 1, a 30 s lease) with an Idempotency-Key of its label, and opens its approval.
create function pg_temp.opened(p_label text) returns uuid language plpgsql as $$
begin
  insert into runs values (p_label, (public.admit_workflow_run('b2100000-0000-4000-8000-000000000001', 'api', 'sync', (select key from keys),
    p_idempotency_key => p_label, p_request_hash => 'h', p_lease_seconds => 30) ->> 'executionId')::uuid);
  perform public.open_workflow_approval(pg_temp.run(p_label), 1, 'ok', '{"id": "ok", "name": "Sign off"}', '{"approvers": ["a@x.test"], "message": "Ship?", "timeoutMinutes": 60}');
  return pg_temp.run(p_label);
end;
$$;
create function pg_temp.expires(p_label text) returns timestamptz language sql as $$
  select expires_at from workflows_private.run_approvals where execution_id = pg_temp.run(p_label);
$$;
create function pg_temp.pause(p_label text, p_attempt integer default 1) returns jsonb language sql as $$
  select public.pause_sync_workflow_run(pg_temp.run(p_label), p_attempt, pg_temp.expires(p_label),
    '[{"kind": "completed", "key": "api", "output": {"topic": "v1"}, "failed": false, "span": {}, "variables": {}, "modelUsage": []}, {"kind": "timer", "key": "ok", "dueAt": 1}]',
    '{"status": 200, "headers": {}, "body": {"success": true, "status": "paused", "paused": null}}');
$$;
create function pg_temp.replay(p_label text) returns jsonb language sql as $$
  select public.admit_workflow_run('b2100000-0000-4000-8000-000000000001', 'api', 'sync', (select key from keys), p_idempotency_key => p_label, p_request_hash => 'h')
    - array['createdAt', 'output', 'error', 'executionId'];
$$;

-- Handing over ---------------------------------------------------------------------------------------

select pg_temp.opened('paused');
select is(pg_temp.pause('paused') - array['resumeAt', 'response'], '{"parked": true, "alive": true, "runStatus": "running", "cancelRequested": false}'::jsonb,
  'A sync run paused at an approval is parked');
select is((select jsonb_build_object('mode', mode, 'parked', parked_until = pg_temp.expires('paused'), 'lease', lease_expires_at = pg_temp.expires('paused'), 'attempt', attempt)
  from public.workflow_executions where id = pg_temp.run('paused')), '{"mode": "async", "parked": true, "lease": true, "attempt": 1}'::jsonb,
  'It is async from then on, parked and leased until the approval''s timeout');
select ok((select vt > now() + interval '59 minutes' from pgmq.q_workflow_runs where message ->> 'executionId' = pg_temp.run('paused')::text),
  'Its queue message is delayed until the timeout');
select is((select array_agg(kind || ':' || key order by seq) from workflows_private.run_checkpoints where execution_id = pg_temp.run('paused')),
  array['completed:api', 'timer:ok'], 'The outcomes its request collected are stored, in order');
select is((select (response -> 'body' -> 'paused') - array['pausedAt', 'resumeAt', 'expiresAt'] from public.workflow_executions where id = pg_temp.run('paused')),
  '{"pauseKind": "approval", "contextId": "ok", "blockedOnBlockId": "ok", "quorum": 1, "approvers": 1, "approvals": 0}'::jsonb,
  'Its paused answer is kept, with the pause as the runs API shows it');
select is(pg_temp.pause('paused') - 'runStatus', '{"parked": false, "alive": false, "cancelRequested": false}'::jsonb,
  'A second hand-over finds an async run and is refused');
select is(pg_temp.replay('paused') - 'response', '{"status": 200, "outcome": "replay", "runStatus": "running", "mode": "sync"}'::jsonb,
  'Its Idempotency-Key, repeated while the run goes on, is not in use: it answers as the sync request it was');
select is(pg_temp.replay('paused') -> 'response' -> 'body' ->> 'status', 'paused', 'with the paused answer');

select public.finish_workflow_run(pg_temp.run('paused'), 'completed', '{"done": true}');
select is(pg_temp.replay('paused'), '{"status": 200, "outcome": "replay", "runStatus": "completed", "mode": "sync", "response": null}'::jsonb,
  'Once the run has ended, its ending: 200 with its output');
select is((select response -> 'body' ->> 'status' from public.workflow_executions where id = pg_temp.run('paused')), 'paused',
  'A finish without an answer of its own keeps the paused one');

-- Refusals -------------------------------------------------------------------------------------------

select pg_temp.opened('decided early');
select public.resume_workflow_run((select key from keys), pg_temp.run('decided early'), null, null, '{"decision": "approve"}');
select is(pg_temp.pause('decided early') ->> 'parked', 'true', 'An approval decided before the hand-over still parks the run');
select ok((select parked_until <= now() from public.workflow_executions where id = pg_temp.run('decided early')), 'for no time: it resumes at once');

select pg_temp.opened('lost');
update public.workflow_executions set lease_expires_at = now() - interval '1 second' where id = pg_temp.run('lost');
select is(pg_temp.pause('lost'), '{"parked": false, "alive": false, "runStatus": "failed", "cancelRequested": false}'::jsonb,
  'A run whose lease ran out is not handed over: it is ended as the sweeper would');
select is((select error_code from public.workflow_executions where id = pg_temp.run('lost')), 'WORKER_LOST', 'failed WORKER_LOST');

select pg_temp.opened('stopping');
update public.workflow_executions set cancel_requested_at = now() where id = pg_temp.run('stopping');
select is(pg_temp.pause('stopping'), '{"parked": false, "alive": true, "runStatus": "running", "cancelRequested": true}'::jsonb,
  'A run asked to stop is not parked: its request finishes it cancelled');

select throws_ok($$select public.pause_sync_workflow_run(pg_temp.run('stopping'), 1, now(), '[]', '{"body": {}}')$$, '22023', null,
  'An answer without its status is refused');
select set_config('role', 'authenticated', true);
select throws_ok($$select public.pause_sync_workflow_run(pg_temp.run('stopping'), 1, now(), '[]', '{"status": 200, "body": {}}')$$, '42501', null,
  'Only the service role hands runs over');
reset role;

select * from finish();
rollback;
