-- Workflow service: durable async runs — checkpoints recorded by the attempt that holds a run and
-- handed to the next one, parking at a long Wait (a delayed queue message, no lease, no heartbeat),
-- resuming, cancelling a parked run, and a sweeper that leaves parked runs alone until they are due.
begin;
select plan(32);

insert into auth.users (id, email, aud, role) values
  ('ad000000-0000-4000-8000-000000000001', 'owner@durable.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create temporary table runs (label text primary key, id uuid);
create function pg_temp.run(p_label text) returns uuid language sql as $$ select id from runs where label = p_label $$;
create function pg_temp.admit(p_label text) returns uuid language sql as $$
  insert into runs values (p_label, (public.admit_workflow_run('ae000000-0000-4000-8000-000000000001', 'webhook', 'async') ->> 'executionId')::uuid)
  returning id;
$$;
create function pg_temp.row(p_label text) returns public.workflow_executions language sql as $$
  select * from public.workflow_executions where id = pg_temp.run(p_label);
$$;
create function pg_temp.message(p_label text) returns pgmq.q_workflow_runs language sql as $$
  select q.* from pgmq.q_workflow_runs q where q.message ->> 'executionId' = pg_temp.run(p_label)::text;
$$;
-- Claims whatever is visible; returns the claimed runs by execution id.
create function pg_temp.claim() returns jsonb language sql as $$
  select coalesce(jsonb_object_agg(x ->> 'executionId', x), '{}'::jsonb) from jsonb_array_elements(public.claim_workflow_runs(10, 60) -> 'runs') x;
$$;

select pg_temp.act_as('ad000000-0000-4000-8000-000000000001');
select public.create_workspace('Durable');
reset role;
create temporary table ws as select id, billing_account_id from public.workspaces where name = 'Durable';
select set_config('request.jwt.claims', '{"role": "service_role"}', true);
insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute) select billing_account_id, 1000, 1000 from ws;
insert into public.workflows (id, workspace_id, name, state) select 'ae000000-0000-4000-8000-000000000001', id, 'Durable',
  '{"blocks": {"hook": {"id": "hook", "type": "generic_webhook", "name": "Hook", "config": {}}, "pause": {"id": "pause", "type": "wait", "name": "Pause", "config": {"amount": 2, "unit": "minutes"}}}, "edges": [{"id": "e1", "source": "hook", "target": "pause"}]}'
from ws;
select public.deploy_workflow('ae000000-0000-4000-8000-000000000001');

-- Checkpoints --------------------------------------------------------------------------------------

select pg_temp.admit('first');
select pg_temp.claim();
select is(public.record_workflow_checkpoint(pg_temp.run('first'), 1, '{"kind": "completed", "key": "hook", "output": {"a": 1}}'),
  '{"recorded": true, "alive": true, "runStatus": "running"}'::jsonb, 'The attempt that holds a run records a completed block');
select is(public.record_workflow_checkpoint(pg_temp.run('first'), 1, '{"kind": "completed", "key": "hook", "output": {"a": 2}}') ->> 'recorded', 'true',
  'recording the same block again is harmless');
select is((select checkpoint -> 'output' from workflows_private.run_checkpoints where execution_id = pg_temp.run('first')), '{"a": 1}'::jsonb, 'and keeps the first record');
select is(public.record_workflow_checkpoint(pg_temp.run('first'), 2, '{"kind": "completed", "key": "other"}'),
  '{"recorded": false, "alive": false, "runStatus": "running"}'::jsonb, 'Another attempt may not record: it is told to stop');
select throws_ok($$select public.record_workflow_checkpoint(pg_temp.run('first'), 1, '{"kind": "started", "key": "x"}')$$, '22023', null, 'An unknown kind of checkpoint is refused');
select throws_ok($$select public.record_workflow_checkpoint('00000000-0000-4000-8000-00000000dead', 1, '{"kind": "timer", "key": "x", "dueAt": 1}')$$, 'P0002', null, 'as is an unknown run');
select pg_temp.act_as('ad000000-0000-4000-8000-000000000001');
select throws_ok($$select public.record_workflow_checkpoint(pg_temp.run('first'), 1, '{"kind": "timer", "key": "x", "dueAt": 1}')$$, '42501', null, 'Only the service role records checkpoints');
select throws_ok($$select * from workflows_private.run_checkpoints$$, '42501', null, 'and nobody else reads them');
reset role;
select set_config('request.jwt.claims', '{"role": "service_role"}', true);

-- The worker dies: the next attempt gets the history.
update public.workflow_executions set lease_expires_at = now() - interval '1 second' where id = pg_temp.run('first');
select pgmq.set_vt('workflow_runs', (pg_temp.message('first')).msg_id, 0);
create temporary table second_claim as select pg_temp.claim() -> pg_temp.run('first')::text as r;
select is((select (r -> 'attempt')::int from second_claim), 2, 'A run whose worker died is claimed again');
select is((select r -> 'checkpoints' from second_claim), '[{"kind": "completed", "key": "hook", "output": {"a": 1}}]'::jsonb, 'with the checkpoints of its earlier attempt');
select is(public.record_workflow_checkpoint(pg_temp.run('first'), 1, '{"kind": "completed", "key": "late"}') ->> 'recorded', 'false',
  'The dead attempt, should it still be running, can no longer record');

-- Parking ------------------------------------------------------------------------------------------

select is(public.record_workflow_checkpoint(pg_temp.run('first'), 2, '{"kind": "timer", "key": "pause", "dueAt": 1}') ->> 'recorded', 'true', 'A Wait records its timer');
select is(public.park_workflow_run(pg_temp.run('first'), 2, now() + interval '1 hour'),
  jsonb_build_object('parked', true, 'alive', true, 'runStatus', 'running', 'resumeAt', now() + interval '1 hour', 'cancelRequested', false), 'and parks the run for an hour');
select is(((pg_temp.row('first')).status, (pg_temp.row('first')).parked_until, (pg_temp.row('first')).lease_expires_at)::text,
  format('(running,"%s","%s")', now() + interval '1 hour', now() + interval '1 hour'), 'The run stays running, parked until then, its lease ending then');
select ok((pg_temp.message('first')).vt between now() + interval '59 minutes' and clock_timestamp() + interval '61 minutes', 'its queue message is delayed until then');
select is((select count(*)::int from pgmq.q_workflow_runs where message ->> 'executionId' = pg_temp.run('first')::text), 1, 'and is its only one');
select is(public.heartbeat_workflow_run(pg_temp.run('first'), 2) ->> 'alive', 'false', 'A parked run is not alive: a late heartbeat of the parked attempt does not move its lease');
select is((pg_temp.row('first')).lease_expires_at, now() + interval '1 hour', 'which stays at the due time');
select is(public.record_workflow_checkpoint(pg_temp.run('first'), 2, '{"kind": "completed", "key": "late"}') ->> 'recorded', 'false', 'Nothing is recorded while parked');
select is(public.park_workflow_run(pg_temp.run('first'), 2, now() + interval '2 hours') ->> 'parked', 'false', 'nor parked twice');
select is((public.workflow_job_status(pg_temp.run('first'), null, 'ad000000-0000-4000-8000-000000000001') -> 'body' ->> 'status', public.workflow_job_status(pg_temp.run('first'), null, 'ad000000-0000-4000-8000-000000000001') -> 'body' -> 'metadata' ->> 'parkedUntil'),
  ('running'::text, to_jsonb(now() + interval '1 hour') #>> '{}'), 'The job status shows a parked run as running, with when it resumes');
select is(workflows_private.sweep_workflow_runs(now() + interval '50 minutes'), 0, 'The sweeper leaves a parked run alone');
select throws_ok($$select public.park_workflow_run(pg_temp.run('first'), 2, now() + interval '32 days')$$, '22023', null, 'A park longer than 31 days is refused');

-- A message read early (it should not be) is hidden again until the run is due.
select pgmq.set_vt('workflow_runs', (pg_temp.message('first')).msg_id, 0);
select is(pg_temp.claim(), '{}'::jsonb, 'A parked run is not handed out before it is due');
select ok((pg_temp.message('first')).vt > clock_timestamp() + interval '59 minutes', 'its message waits for the due time again');

-- Due: resumed, attempts counting from the park.
update public.workflow_executions set parked_until = now() - interval '1 second', lease_expires_at = now() - interval '1 second', attempt = 4, park_attempt = 4
where id = pg_temp.run('first');
select pgmq.set_vt('workflow_runs', (pg_temp.message('first')).msg_id, 0);
create temporary table resumed as select pg_temp.claim() -> pg_temp.run('first')::text as r;
select is((select ((r -> 'attempt')::int, jsonb_array_length(r -> 'checkpoints'))::text from resumed), '(5,2)',
  'A due run is resumed with its history (timer included), even past max_attempts in all: attempts count from its last park');
select is((pg_temp.row('first')).parked_until, null, 'and is no longer parked');
select public.finish_workflow_run(pg_temp.run('first'), 'completed', '{"ok": true}');
select is((select count(*)::int from workflows_private.run_checkpoints where execution_id = pg_temp.run('first')), 2,
  'An ended run keeps its checkpoints (for re-runs from a block): they go with the run');

-- Cancelling a parked run, and one whose worker never came back ----------------------------------

select pg_temp.admit('cancel');
select pg_temp.claim();
select public.park_workflow_run(pg_temp.run('cancel'), 1, now() + interval '10 days');
select is(public.cancel_workflow_run(pg_temp.run('cancel')) -> 'body', jsonb_build_object('executionId', pg_temp.run('cancel'), 'status', 'cancelled', 'cancelRequested', false),
  'A parked run is cancelled at once');
select is(((pg_temp.row('cancel')).parked_until, pg_temp.message('cancel'))::text, '(,)', 'leaving no parking and no message');

select pg_temp.admit('forgotten');
select pg_temp.claim();
select public.park_workflow_run(pg_temp.run('forgotten'), 1, now() + interval '1 day');
select is(workflows_private.sweep_workflow_runs(now() + interval '1 day 16 minutes'), 1, 'A parked run no worker took within 15 minutes of its due time is swept');
select is(((pg_temp.row('forgotten')).status, (pg_temp.row('forgotten')).error_code)::text, '(failed,WORKER_LOST)', 'as WORKER_LOST');

select * from finish();
rollback;
