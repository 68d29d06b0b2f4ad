-- Workflow service: short, renewed leases for synchronous runs (docs/workflow-runs.md, "Leases").
--
-- A sync run used to hold one lease of its time limit plus 60 s, so a run whose edge function died
-- (SIGKILL, lost connection) kept its Idempotency-Key answering 409 IDEMPOTENCY_KEY_IN_USE until the
-- sweeper ended it minutes later. The execute endpoint now admits sync runs with a short lease that
-- the serving instance renews with heartbeat_workflow_run while the run is alive, and whoever first
-- sees a sync run's lease run out ends the run as the sweeper would (failed, WORKER_LOST):
--
-- - workflows_private.end_expired_run: the sweeper's decision for one run, now shared;
-- - idempotent_replay: a repeated key whose sync run's lease has run out ends that run at once and
--   answers from the recorded ending, instead of 409 until the sweeper's next pass;
-- - heartbeat_workflow_run: a late heartbeat of a sync run (its lease already out) is refused
--   (alive false) and ends the run, so a run is never renewed after a retry could have been told
--   it was lost;
-- - sweep_workflow_runs: as before, through end_expired_run.
-- Signatures and answers are unchanged (create or replace).

/**
 * Ends an in-flight run whose lease has run out, the way the sweeper does: a queued run failed
 * NOT_STARTED, a run asked to stop cancelled, a sync run (its edge function is gone), an async run
 * out of attempts or one no worker took within 15 minutes of its lease failed WORKER_LOST. Returns
 * false, changing nothing, for an async run the queue may still hand out again. The caller holds
 * the row lock and has checked the lease.
 */
create function workflows_private.end_expired_run(p_run public.workflow_executions, p_now timestamptz)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
begin
  if p_run.status = 'queued' then
    perform workflows_private.close_run(p_run.id, 'failed', 'NOT_STARTED', 'No worker started the run within 24 hours of its admission', p_now);
  elsif p_run.cancel_requested_at is not null then
    perform workflows_private.close_run(p_run.id, 'cancelled', null, null, p_now);
  elsif p_run.mode = 'sync' or (p_run.parked_until is null and p_run.attempt - p_run.park_attempt >= p_run.max_attempts)
    or p_run.lease_expires_at < p_now - interval '15 minutes' then
    perform workflows_private.close_run(p_run.id, 'failed', 'WORKER_LOST', 'The worker running this run stopped before finishing it', p_now);
  else
    return false;
  end if;
  return true;
end;
$$;
comment on function workflows_private.end_expired_run(public.workflow_executions, timestamptz) is 'The sweeper''s ending of one in-flight run whose lease ran out (false when an async run is left to the queue); shared by the sweeper, admission and the heartbeat.';

/** As before (docs/workflow-runs.md), through end_expired_run. */
create or replace function workflows_private.sweep_workflow_runs(p_now timestamptz default now())
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_run public.workflow_executions;
  v_closed integer := 0;
begin
  for v_run in
    select * from public.workflow_executions e
    where e.status in ('queued', 'running') and e.lease_expires_at < p_now
    order by e.lease_expires_at
    for update skip locked
  loop
    if workflows_private.end_expired_run(v_run, p_now) then
      v_closed := v_closed + 1;
    end if;
  end loop;
  return v_closed;
end;
$$;
comment on function workflows_private.sweep_workflow_runs(timestamptz) is 'Fails (or cancels) in-flight runs whose worker is gone, leaving parked runs until they are due; pg_cron runs it every minute.';

/**
 * The answer to a repeated Idempotency-Key, as before (docs/workflow-runs.md), except that a sync
 * first request whose lease has run out (its edge function died) is ended here, as the sweeper
 * would end it (failed, WORKER_LOST), and answered from that ending instead of 409
 * IDEMPOTENCY_KEY_IN_USE. A finish in flight holds the row lock: it is waited for, and wins.
 */
create or replace function workflows_private.idempotent_replay(p_key workflows_private.idempotency_keys, p_request_hash text)
returns jsonb
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_run public.workflow_executions;
begin
  if p_key.request_hash is distinct from p_request_hash then
    return workflows_private.refusal(409, 'IDEMPOTENCY_KEY_REUSED',
      'This Idempotency-Key was already used with a different request body; use a new key for a new request',
      jsonb_build_object('executionId', p_key.execution_id));
  end if;
  select * into v_run from public.workflow_executions e where e.id = p_key.execution_id;
  if v_run.mode = 'sync' and v_run.status in ('queued', 'running') and v_run.lease_expires_at < now() then
    select * into v_run from public.workflow_executions e where e.id = p_key.execution_id for update;
    if v_run.status in ('queued', 'running') and v_run.lease_expires_at < now() and workflows_private.end_expired_run(v_run, now()) then
      select * into v_run from public.workflow_executions e where e.id = p_key.execution_id;
    end if;
  end if;
  if v_run.mode = 'sync' and v_run.status in ('queued', 'running') then
    return workflows_private.refusal(409, 'IDEMPOTENCY_KEY_IN_USE',
      'A request with this Idempotency-Key is still running; retry when it has finished',
      jsonb_build_object('executionId', v_run.id));
  end if;
  return jsonb_build_object(
    'status', case
      when v_run.mode = 'async' then 202
      when v_run.response ? 'status' then (v_run.response ->> 'status')::integer
      when v_run.status = 'completed' then 200
      when v_run.error_code = 'RUN_TIMEOUT' then 408
      else 500 end,
    'outcome', 'replay',
    'executionId', v_run.id,
    'runStatus', v_run.status,
    'mode', v_run.mode,
    'response', v_run.response,
    'output', v_run.output,
    'error', case when v_run.error_code is null then null
      else jsonb_build_object('message', v_run.error_message, 'code', v_run.error_code, 'failedBlock', v_run.failed_block) end,
    'createdAt', v_run.created_at);
end;
$$;
comment on function workflows_private.idempotent_replay(workflows_private.idempotency_keys, text) is 'Answers a repeated Idempotency-Key from the first execution (ending a sync one whose lease ran out), or refuses with 409.';

/**
 * Keeps a run alive, as before (docs/workflow-runs.md), except that a sync run whose lease has
 * already run out is not renewed: the heartbeat ends it as the sweeper would (WORKER_LOST) and
 * answers alive false, since a retry of its request may already have been told it was lost.
 */
create or replace function public.heartbeat_workflow_run(p_execution_id uuid, p_attempt integer default null, p_lease_seconds integer default 120)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := now();
  v_run public.workflow_executions;
  v_alive boolean;
begin
  if p_lease_seconds is null or p_lease_seconds not between 1 and 43200 then
    raise exception 'heartbeat_workflow_run: lease 1 to 43200 s' using errcode = '22023';
  end if;
  select * into v_run from public.workflow_executions e where e.id = p_execution_id for update;
  if not found then
    raise exception 'heartbeat_workflow_run: no execution %', p_execution_id using errcode = 'P0002';
  end if;
  if v_run.mode = 'sync' and v_run.status = 'running' and v_run.lease_expires_at < v_now then
    perform workflows_private.end_expired_run(v_run, v_now);
    select * into v_run from public.workflow_executions e where e.id = p_execution_id;
  end if;
  v_alive := coalesce(v_run.status = 'running' and v_run.parked_until is null and (p_attempt is null or p_attempt = v_run.attempt), false);
  if v_alive then
    update public.workflow_executions e set lease_expires_at = v_now + make_interval(secs => p_lease_seconds)
    where e.id = p_execution_id returning * into v_run;
    if v_run.queue_message_id is not null then
      perform pgmq.set_vt('workflow_runs', v_run.queue_message_id, p_lease_seconds);
    end if;
  end if;
  return jsonb_build_object('alive', v_alive, 'runStatus', v_run.status, 'attempt', v_run.attempt,
    'leaseExpiresAt', v_run.lease_expires_at, 'cancelRequested', v_run.cancel_requested_at is not null);
end;
$$;
comment on function public.heartbeat_workflow_run(uuid, integer, integer) is 'Extends a running run''s lease (a sync run''s only while it has not run out); tells its worker whether to go on and whether cancellation was requested. Service role only.';

revoke execute on function workflows_private.end_expired_run(public.workflow_executions, timestamptz) from public, anon, authenticated, service_role;
