-- Workflow service: a sync run's short lease. A repeated Idempotency-Key whose sync run's lease ran
-- out ends that run at once (WORKER_LOST, as the sweeper would) and answers from the ending; a live
-- lease still answers 409; a heartbeat renews a live lease and refuses a stale one.
begin;
select plan(17);

insert into auth.users (id, email, aud, role) values
  ('ac000000-0000-4000-8000-000000000001', 'owner@sync-lease.test', 'authenticated', 'authenticated');
create temporary table keys (key text);
grant insert on keys to authenticated;
select set_config('role', 'authenticated', true), set_config('request.jwt.claims', '{"sub": "ac000000-0000-4000-8000-000000000001", "role": "authenticated"}', true);
select public.create_workspace('Sync lease');
insert into keys select key from public.create_api_key('Owner key');
reset role;
select set_config('request.jwt.claims', '{"role": "service_role"}', true);
create temporary table ws as select id, billing_account_id from public.workspaces where name = 'Sync lease';
insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute) select billing_account_id, 1000, 1000 from ws;
insert into public.workflows (id, workspace_id, name, state) select 'ac500000-0000-4000-8000-000000000001', id, 'Leased',
  '{"blocks": {"api": {"id": "api", "type": "api_trigger", "name": "API", "config": {}}, "done": {"id": "done", "type": "response", "name": "Done", "config": {"body": "ok"}}}, "edges": [{"id": "e1", "source": "api", "target": "done"}]}'
from ws;
select public.deploy_workflow('ac500000-0000-4000-8000-000000000001');

create temporary table answers (label text primary key, r jsonb);
-- Admits a sync API run with a 30 s lease (what the execute endpoint asks), records the answer under a label.
create function pg_temp.admit(p_label text, p_idempotency_key text, p_mode text default 'sync') returns jsonb language sql as $$
  insert into answers values (p_label, public.admit_workflow_run('ac500000-0000-4000-8000-000000000001', 'api', p_mode, (select key from keys), null, null,
    p_idempotency_key, 'hash', null, null, 30))
  on conflict (label) do update set r = excluded.r
  returning r;
$$;
create function pg_temp.run(p_label text) returns public.workflow_executions language sql as $$
  select e.* from public.workflow_executions e join answers a on e.id = (a.r ->> 'executionId')::uuid where a.label = p_label;
$$;
create function pg_temp.charges(p_label text) returns integer language sql as $$
  select count(*)::int from public.usage_ledger l where l.execution_id = (pg_temp.run(p_label)).id;
$$;
-- The edge function that served p_label died long ago: its lease ran out.
create function pg_temp.expire(p_label text) returns void language sql as $$
  update public.workflow_executions set lease_expires_at = now() - interval '1 second' where id = (pg_temp.run(p_label)).id;
$$;

-- A live lease ------------------------------------------------------------------------------------

select pg_temp.admit('first', 'key-1');
select is(((pg_temp.run('first')).status, (pg_temp.run('first')).lease_expires_at)::text, format('(running,"%s")', now() + interval '30 seconds'),
  'A sync run is admitted with the short lease its endpoint asks for');
select is(pg_temp.admit('retry live', 'key-1') - 'error',
  jsonb_build_object('status', 409, 'outcome', 'refused', 'code', 'IDEMPOTENCY_KEY_IN_USE', 'executionId', (pg_temp.run('first')).id),
  'A retry while the lease runs still answers 409 IDEMPOTENCY_KEY_IN_USE');
select is((pg_temp.run('first')).status, 'running'::public.workflow_run_status, 'and leaves the run running');
select is(public.heartbeat_workflow_run((pg_temp.run('first')).id, 1, 30) - 'leaseExpiresAt', '{"alive": true, "runStatus": "running", "attempt": 1, "cancelRequested": false}'::jsonb,
  'The serving instance''s heartbeat keeps a live sync run alive');
select is((pg_temp.run('first')).lease_expires_at, now() + interval '30 seconds', 'moving its lease on');

-- An expired lease, taken over by the retry -------------------------------------------------------

select pg_temp.expire('first');
select is(pg_temp.admit('retry expired', 'key-1') - array['createdAt', 'error'],
  jsonb_build_object('status', 500, 'outcome', 'replay', 'executionId', (pg_temp.run('first')).id, 'runStatus', 'failed', 'mode', 'sync', 'response', null, 'output', null),
  'A retry after the lease ran out is answered from the run''s ending, not 409');
select is((pg_temp.admit('retry expired', 'key-1') -> 'error') - 'failedBlock',
  '{"message": "The worker running this run stopped before finishing it", "code": "WORKER_LOST"}'::jsonb, 'which is WORKER_LOST, as the sweeper would record it');
select is(((pg_temp.run('first')).status, (pg_temp.run('first')).level, (pg_temp.run('first')).ended_at, (pg_temp.run('first')).lease_expires_at)::text,
  format('(failed,error,"%s",)', now()), 'The run is ended now, its lease cleared');
select is((select count(*)::int from public.workflow_executions e where e.workflow_id = 'ac500000-0000-4000-8000-000000000001'), 1, 'It is recorded once');
select is(pg_temp.charges('first'), 1, 'and charged once, its base charge');
select is(workflows_private.sweep_workflow_runs(now() + interval '1 hour'), 0, 'The sweeper finds nothing left to end');
select is(public.finish_workflow_run((pg_temp.run('first')).id, 'completed', '{"late": true}') ->> 'outcome', 'already_finished',
  'A late finish of the instance that was lost changes nothing');

-- A stale heartbeat ------------------------------------------------------------------------------

select pg_temp.admit('stale', 'key-2');
select pg_temp.expire('stale');
select is(public.heartbeat_workflow_run((pg_temp.run('stale')).id, 1, 30) - 'leaseExpiresAt', '{"alive": false, "runStatus": "failed", "attempt": 1, "cancelRequested": false}'::jsonb,
  'A heartbeat after a sync run''s lease ran out is refused');
select is(((pg_temp.run('stale')).status, (pg_temp.run('stale')).error_code)::text, '(failed,WORKER_LOST)', 'and ends the run as the sweeper would');
select is(pg_temp.admit('retry stale', 'key-2') ->> 'status', '500', 'so a retry gets that ending');

-- Async runs are the queue's ----------------------------------------------------------------------

select pg_temp.admit('async', 'key-3', 'async');
select pg_temp.expire('async');
select is(pg_temp.admit('retry async', 'key-3', 'async') ->> 'status', '202', 'A repeated key of an async run whose lease ran out answers its job link');
select is((pg_temp.run('async')).status, 'queued'::public.workflow_run_status, 'and leaves the run to the queue and the sweeper');

select * from finish();
rollback;
