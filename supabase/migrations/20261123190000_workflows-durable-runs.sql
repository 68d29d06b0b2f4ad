-- Workflow service: durable async runs (docs/workflow-runs.md, "Durable async runs").
--
-- - workflows_private.run_checkpoints: an async run's history, one row per block instance that
--   completed (its output, span, the variables after it, its model calls) and per Wait that parked
--   the run (its due time). The worker writes a checkpoint before the block's successors start; a
--   later attempt replays the history instead of running completed blocks again. Deleted when the
--   run ends. Written only through record_workflow_checkpoint, read only by claim_workflow_runs.
-- - parked runs: a Wait past the park threshold ends the attempt with park_workflow_run. The run
--   stays `running` (the job-status API keeps its five statuses) with `parked_until` set; its lease
--   and its queue message (sent again with pgmq's delay) both end at the due time, when the next
--   claim resumes it. No worker, heartbeat or connection is held meanwhile.
-- - claim, heartbeat, cancel, the sweeper and the job status learn about parked runs (create or
--   replace; their contracts are unchanged otherwise). finish_workflow_run is not touched.

alter table public.workflow_executions
  add column parked_until timestamptz,
  add column park_attempt integer not null default 0;
comment on column public.workflow_executions.parked_until is 'While an async run is parked at a long Wait: when it resumes (its lease and its queue message end then). Null otherwise.';
comment on column public.workflow_executions.park_attempt is 'The attempt that last parked the run: attempts since then count toward max_attempts, so a run that parks and resumes many times is not given up.';

create table workflows_private.run_checkpoints (
  execution_id uuid not null references public.workflow_executions (id) on delete cascade,
  kind text not null,
  key text not null,
  seq bigint generated always as identity,
  attempt integer not null,
  checkpoint jsonb not null,
  recorded_at timestamptz not null default now(),
  primary key (execution_id, kind, key)
);
comment on table workflows_private.run_checkpoints is 'An async run''s history (engine/durable.ts): completed block instances and parked Waits, replayed by later attempts; deleted when the run ends. Holds block outputs as the run saw them, so only the runtime reads it.';
comment on column workflows_private.run_checkpoints.kind is 'completed (a block instance finished, handled failure included) or timer (a Wait parked the run).';
comment on column workflows_private.run_checkpoints.key is 'The block instance: block id plus iteration path (fn1[loop1:2]).';
comment on column workflows_private.run_checkpoints.seq is 'Recording order: the history is replayed in it (the last completion''s variables are the run''s).';
comment on column workflows_private.run_checkpoints.attempt is 'The attempt that recorded it.';
comment on column workflows_private.run_checkpoints.checkpoint is 'The checkpoint as the engine wrote it: {kind, key, output, failed, span, variables, modelUsage} or {kind, key, dueAt}.';
comment on column workflows_private.run_checkpoints.recorded_at is 'When it was recorded.';
alter table workflows_private.run_checkpoints enable row level security;
-- No policy: nobody but the security-definer functions below reads or writes it.

/** Ends a run that will not finish normally (as before), and clears its parking. */
create or replace function workflows_private.close_run(p_execution_id uuid, p_status text, p_code text, p_message text, p_now timestamptz)
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_message_id bigint;
begin
  select e.queue_message_id into v_message_id from public.workflow_executions e where e.id = p_execution_id;
  update public.workflow_executions e set
    status = p_status::public.workflow_run_status,
    level = case when p_status = 'failed' then 'error'::public.workflow_log_level else 'info'::public.workflow_log_level end,
    started_at = coalesce(e.started_at, p_now),
    ended_at = p_now,
    error_code = p_code,
    error_message = p_message,
    cost = workflows_private.run_cost(e.cost_total, null),
    lease_expires_at = null,
    parked_until = null
  where e.id = p_execution_id;
  if v_message_id is not null then
    perform pgmq.delete('workflow_runs', v_message_id);
  end if;
end;
$$;
comment on function workflows_private.close_run(uuid, text, text, text, timestamptz) is 'Closes a run that will not finish normally (failed or cancelled), keeping its base charge, and drops its queue message.';

/** Deletes a run's checkpoints once it has ended: they are only for resuming it. */
create function workflows_private.drop_run_checkpoints()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  delete from workflows_private.run_checkpoints c where c.execution_id = new.id;
  return null;
end;
$$;
comment on function workflows_private.drop_run_checkpoints() is 'Trigger: an ended async run''s checkpoints are deleted.';

create trigger workflow_executions_drop_checkpoints
  after update of status on public.workflow_executions
  for each row when (new.mode = 'async' and new.ended_at is not null and old.ended_at is null)
  execute function workflows_private.drop_run_checkpoints();

/**
 * Records one checkpoint of an async run (engine/durable.ts): `p_checkpoint` is `{kind: "completed",
 * key, output, failed, span, variables, modelUsage}` or `{kind: "timer", key, dueAt}`. Only the
 * attempt that holds the run records (`p_attempt`, as claimed; not while parked): a worker whose
 * lease another attempt took over gets `{recorded: false, alive: false}` and must stop. Recording a
 * key twice keeps the first. Answers {recorded, alive, runStatus}.
 */
create function public.record_workflow_checkpoint(p_execution_id uuid, p_attempt integer, p_checkpoint jsonb)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_run public.workflow_executions;
begin
  if p_attempt is null or jsonb_typeof(p_checkpoint) is distinct from 'object'
    or (p_checkpoint ->> 'kind') is null or (p_checkpoint ->> 'kind') not in ('completed', 'timer')
    or jsonb_typeof(p_checkpoint -> 'key') is distinct from 'string' then
    raise exception 'record_workflow_checkpoint: a checkpoint is {kind: completed | timer, key, …} with the attempt that holds the run' using errcode = '22023';
  end if;
  -- A key-share lock: a claim (FOR UPDATE) of the same run waits for this checkpoint, so the next
  -- attempt's history holds it.
  select * into v_run from public.workflow_executions e where e.id = p_execution_id for key share;
  if not found then
    raise exception 'record_workflow_checkpoint: no execution %', p_execution_id using errcode = 'P0002';
  end if;
  if v_run.status <> 'running' or v_run.attempt <> p_attempt or v_run.parked_until is not null then
    return jsonb_build_object('recorded', false, 'alive', false, 'runStatus', v_run.status);
  end if;
  insert into workflows_private.run_checkpoints (execution_id, kind, key, attempt, checkpoint)
  values (p_execution_id, p_checkpoint ->> 'kind', p_checkpoint ->> 'key', p_attempt, p_checkpoint)
  on conflict do nothing;
  return jsonb_build_object('recorded', true, 'alive', true, 'runStatus', v_run.status);
end;
$$;
comment on function public.record_workflow_checkpoint(uuid, integer, jsonb) is 'Records a completed block instance or a parked Wait of an async run, for the attempt that holds it. Service role only.';

/**
 * Parks an async run until `p_resume_at` (at most 31 days ahead): the attempt that holds it ends,
 * its queue message is replaced by one delayed until then (pgmq.send's delay), and its lease ends
 * then too, so neither the sweeper nor a claim takes it earlier. The run stays `running` with
 * `parked_until`; heartbeats answer `alive: false` meanwhile; cancel_workflow_run cancels it at
 * once. A run whose cancellation was requested is not parked (`cancelRequested: true`: finish it
 * cancelled); a stale attempt gets `alive: false`. Answers {parked, alive, resumeAt, cancelRequested}.
 */
create function public.park_workflow_run(p_execution_id uuid, p_attempt integer, p_resume_at timestamptz)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := now();
  v_run public.workflow_executions;
  v_message_id bigint;
begin
  if p_attempt is null or p_resume_at is null or p_resume_at > v_now + interval '31 days' then
    raise exception 'park_workflow_run: the attempt that holds the run, and a resume time at most 31 days ahead' using errcode = '22023';
  end if;
  select * into v_run from public.workflow_executions e where e.id = p_execution_id for update;
  if not found then
    raise exception 'park_workflow_run: no execution %', p_execution_id using errcode = 'P0002';
  end if;
  if v_run.mode <> 'async' or v_run.status <> 'running' or v_run.attempt <> p_attempt or v_run.parked_until is not null then
    return jsonb_build_object('parked', false, 'alive', false, 'runStatus', v_run.status, 'cancelRequested', v_run.cancel_requested_at is not null);
  end if;
  if v_run.cancel_requested_at is not null then
    return jsonb_build_object('parked', false, 'alive', true, 'runStatus', v_run.status, 'cancelRequested', true);
  end if;
  if v_run.queue_message_id is not null then
    perform pgmq.delete('workflow_runs', v_run.queue_message_id);
  end if;
  select * into v_message_id from pgmq.send('workflow_runs', jsonb_build_object('executionId', v_run.id),
    greatest(0, ceil(extract(epoch from p_resume_at - v_now)))::integer);
  update public.workflow_executions e set
    parked_until = p_resume_at, lease_expires_at = p_resume_at, park_attempt = e.attempt, queue_message_id = v_message_id
  where e.id = v_run.id;
  return jsonb_build_object('parked', true, 'alive', true, 'runStatus', v_run.status, 'resumeAt', p_resume_at, 'cancelRequested', false);
end;
$$;
comment on function public.park_workflow_run(uuid, integer, timestamptz) is 'Parks an async run at a long Wait: frees its worker and resumes it through a delayed queue message. Service role only.';

/**
 * A worker takes up to `p_batch_size` queued runs, as before (docs/workflow-runs.md), now also runs
 * whose parking ended and runs whose worker died: those (attempt 2 and later) come back with
 * `checkpoints`, their history, so they resume from what completed. A parked run's message is delayed
 * until its due time; one read earlier is hidden again until then. Attempts count from the last
 * park, so a run that parks often is not given up for it.
 */
create or replace function public.claim_workflow_runs(
  p_batch_size integer default 1,
  p_lease_seconds integer default 120,
  p_cached_deployment_ids uuid[] default null,
  p_environment_versions jsonb default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := now();
  v_message record;
  v_run public.workflow_executions;
  v_runs jsonb := '[]'::jsonb;
  v_name text;
  v_deployment jsonb;
  v_snapshot jsonb;
  v_environment_version bigint;
  v_checkpoints jsonb;
begin
  if p_batch_size is null or p_batch_size not between 1 and 100 or p_lease_seconds is null or p_lease_seconds not between 1 and 43200 then
    raise exception 'claim_workflow_runs: batch size 1 to 100, lease 1 to 43200 s' using errcode = '22023';
  end if;
  for v_message in select * from pgmq.read('workflow_runs', p_lease_seconds, p_batch_size)
  loop
    select * into v_run from public.workflow_executions e where e.id = (v_message.message ->> 'executionId')::uuid for update;
    if not found or v_run.status in ('completed', 'failed', 'cancelled') then
      perform pgmq.delete('workflow_runs', v_message.msg_id);
      continue;
    end if;
    -- A live lease, or a parking not yet over: hidden again until it ends.
    if v_run.status = 'running' and v_run.lease_expires_at > v_now then
      perform pgmq.set_vt('workflow_runs', v_message.msg_id, ceil(extract(epoch from v_run.lease_expires_at - v_now))::integer);
      continue;
    end if;
    if v_run.cancel_requested_at is not null then
      perform workflows_private.close_run(v_run.id, 'cancelled', null, null, v_now);
      continue;
    end if;
    if v_run.attempt - v_run.park_attempt >= v_run.max_attempts then
      perform workflows_private.close_run(v_run.id, 'failed', 'WORKER_LOST',
        format('The run was started %s times and its worker stopped each time; it was given up', v_run.attempt - v_run.park_attempt), v_now);
      continue;
    end if;
    update public.workflow_executions e set
      status = 'running', attempt = e.attempt + 1, started_at = coalesce(e.started_at, v_now),
      lease_expires_at = v_now + make_interval(secs => p_lease_seconds), queue_message_id = v_message.msg_id, parked_until = null
    where e.id = v_run.id
    returning * into v_run;
    -- Only a run that ran before has a history; a first attempt's payload is as it always was.
    v_checkpoints := '{}'::jsonb;
    if v_run.attempt > 1 then
      select jsonb_build_object('checkpoints', coalesce(jsonb_agg(c.checkpoint order by c.seq), '[]'::jsonb)) into v_checkpoints
      from workflows_private.run_checkpoints c where c.execution_id = v_run.id;
    end if;
    select w.name,
      case when d.id is not null then jsonb_build_object('id', d.id, 'version', d.version)
        || case when d.id = any(p_cached_deployment_ids) then '{}'::jsonb else jsonb_build_object('state', d.state) end end,
      case when s.id is not null then jsonb_build_object('id', s.id, 'state', s.state) end,
      coalesce(ev.version, 0)
    into v_name, v_deployment, v_snapshot, v_environment_version
    from public.workflows w
    left join public.workflow_deployments d on d.id = v_run.deployment_id
    left join public.workflow_execution_snapshots s on s.id = v_run.snapshot_id
    left join workflows_private.environment_versions ev on ev.workspace_id = v_run.workspace_id
    where w.id = v_run.workflow_id;
    v_runs := v_runs || jsonb_build_array(workflows_private.run_payload(v_run, v_name, v_deployment, v_snapshot,
      workflows_private.environment_payload(v_run.workspace_id, v_environment_version, (p_environment_versions ->> v_run.workspace_id::text)::bigint))
      || v_checkpoints);
  end loop;
  return jsonb_build_object('runs', v_runs);
end;
$$;
comment on function public.claim_workflow_runs(integer, integer, uuid[], jsonb) is 'The async worker takes queued runs, parked runs that are due and runs whose worker died, with everything they need and their history. Service role only.';

/** As before (docs/workflow-runs.md), but a parked run is not alive: no worker holds it, and its lease is its due time. */
create or replace function public.heartbeat_workflow_run(p_execution_id uuid, p_attempt integer default null, p_lease_seconds integer default 120)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := now();
  v_run public.workflow_executions;
begin
  if p_lease_seconds is null or p_lease_seconds not between 1 and 43200 then
    raise exception 'heartbeat_workflow_run: lease 1 to 43200 s' using errcode = '22023';
  end if;
  select * into v_run from public.workflow_executions e where e.id = p_execution_id for update;
  if not found then
    raise exception 'heartbeat_workflow_run: no execution %', p_execution_id using errcode = 'P0002';
  end if;
  if v_run.status = 'running' and v_run.parked_until is null and (p_attempt is null or p_attempt = v_run.attempt) then
    update public.workflow_executions e set lease_expires_at = v_now + make_interval(secs => p_lease_seconds)
    where e.id = p_execution_id returning * into v_run;
    if v_run.queue_message_id is not null then
      perform pgmq.set_vt('workflow_runs', v_run.queue_message_id, p_lease_seconds);
    end if;
    return jsonb_build_object('alive', true, 'runStatus', v_run.status, 'attempt', v_run.attempt,
      'leaseExpiresAt', v_run.lease_expires_at, 'cancelRequested', v_run.cancel_requested_at is not null);
  end if;
  return jsonb_build_object('alive', false, 'runStatus', v_run.status, 'attempt', v_run.attempt,
    'leaseExpiresAt', v_run.lease_expires_at, 'cancelRequested', v_run.cancel_requested_at is not null);
end;
$$;
comment on function public.heartbeat_workflow_run(uuid, integer, integer) is 'Extends a running run''s lease; tells its worker whether to go on and whether cancellation was requested. Service role only.';

/** As before (docs/workflow-runs.md); a parked run, which no worker holds, is cancelled at once like a queued one. */
create or replace function public.cancel_workflow_run(p_execution_id uuid, p_api_key text default null, p_user_id uuid default null)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := now();
  v_key public.api_keys;
  v_run public.workflow_executions;
  v_access text;
begin
  if p_api_key is not null then
    v_key := workflows_private.authenticate_api_key(p_api_key);
    if v_key.id is null then
      return workflows_private.api_key_refusal(p_api_key);
    end if;
  end if;
  select * into v_run from public.workflow_executions e where e.id = p_execution_id for update;
  if found and (v_key.id is not null or p_user_id is not null) then
    v_access := workflows_private.principal_access(v_key, p_user_id, v_run.workspace_id, 'editor');
  end if;
  if v_run.id is null or v_access = 'not_found' then
    return workflows_private.refusal(404, 'NOT_FOUND', format('Execution %s not found', p_execution_id));
  end if;
  if v_access = 'forbidden' then
    return workflows_private.refusal(403, 'FORBIDDEN', 'Only a workspace editor or above may cancel runs');
  end if;
  if v_run.status = 'queued' or (v_run.status = 'running' and v_run.parked_until is not null) then
    perform workflows_private.close_run(v_run.id, 'cancelled', null, null, v_now);
  elsif v_run.status = 'running' and v_run.cancel_requested_at is null then
    update public.workflow_executions e set cancel_requested_at = v_now where e.id = v_run.id;
  end if;
  select * into v_run from public.workflow_executions e where e.id = p_execution_id;
  return jsonb_build_object('status', 200, 'body', jsonb_build_object('executionId', v_run.id, 'status', v_run.status,
    'cancelRequested', v_run.cancel_requested_at is not null));
end;
$$;
comment on function public.cancel_workflow_run(uuid, text, uuid) is 'Cancels a queued or parked run at once, asks a running one to stop. Service role only.';

/**
 * As before (docs/workflow-runs.md), with parked runs left alone until their due time: a parked
 * run's lease is its due time, so it is only looked at once due, and failed WORKER_LOST only when
 * no worker took it within 15 minutes after that. Attempts count from the last park.
 */
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
    if v_run.status = 'queued' then
      perform workflows_private.close_run(v_run.id, 'failed', 'NOT_STARTED', 'No worker started the run within 24 hours of its admission', p_now);
    elsif v_run.cancel_requested_at is not null then
      perform workflows_private.close_run(v_run.id, 'cancelled', null, null, p_now);
    elsif v_run.mode = 'sync' or (v_run.parked_until is null and v_run.attempt - v_run.park_attempt >= v_run.max_attempts)
      or v_run.lease_expires_at < p_now - interval '15 minutes' then
      perform workflows_private.close_run(v_run.id, 'failed', 'WORKER_LOST', 'The worker running this run stopped before finishing it', p_now);
    else
      continue;
    end if;
    v_closed := v_closed + 1;
  end loop;
  return v_closed;
end;
$$;
comment on function workflows_private.sweep_workflow_runs(timestamptz) is 'Fails (or cancels) in-flight runs whose worker is gone, leaving parked runs until they are due; pg_cron runs it every minute.';

/** GET /api/jobs/{executionId}, as before (docs/workflow-runs.md), with `metadata.parkedUntil` while a run is parked (its status stays running). */
create or replace function public.workflow_job_status(p_execution_id uuid, p_api_key text default null, p_user_id uuid default null)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_key public.api_keys;
  v_run public.workflow_executions;
begin
  -- A key when one is given, else the user the edge function verified.
  v_key := workflows_private.authenticate_api_key(p_api_key);
  if v_key.id is null and (p_api_key is not null or p_user_id is null) then
    return workflows_private.api_key_refusal(p_api_key);
  end if;
  select * into v_run from public.workflow_executions e where e.id = p_execution_id;
  if not found or workflows_private.principal_access(v_key, p_user_id, v_run.workspace_id, 'viewer') <> 'allowed' then
    return workflows_private.refusal(404, 'NOT_FOUND', format('Job %s not found', p_execution_id));
  end if;
  return jsonb_build_object('status', 200, 'body', jsonb_strip_nulls(jsonb_build_object(
    'success', true,
    'executionId', v_run.id,
    'workflowId', v_run.workflow_id,
    'status', v_run.status,
    'output', case when v_run.status = 'completed' then coalesce(v_run.output, 'null'::jsonb) end,
    'error', case when v_run.error_code is not null or v_run.error_message is not null then
      jsonb_build_object('message', v_run.error_message, 'code', v_run.error_code, 'failedBlock', v_run.failed_block) end,
    'metadata', jsonb_build_object(
      'trigger', v_run.trigger, 'mode', v_run.mode, 'createdAt', v_run.created_at, 'startedAt', v_run.started_at,
      'endedAt', v_run.ended_at, 'duration', v_run.duration_ms, 'attempt', v_run.attempt, 'cost', trim_scale(v_run.cost_total),
      'parkedUntil', v_run.parked_until))));
end;
$$;
comment on function public.workflow_job_status(uuid, text, uuid) is 'GET /api/jobs/{executionId}: a run''s status (a parked run is running, with metadata.parkedUntil), output or error and metadata, for those who may see it. Service role only.';

revoke execute on function
  public.record_workflow_checkpoint(uuid, integer, jsonb),
  public.park_workflow_run(uuid, integer, timestamptz),
  workflows_private.drop_run_checkpoints()
  from public, anon, authenticated, service_role;
grant execute on function
  public.record_workflow_checkpoint(uuid, integer, jsonb),
  public.park_workflow_run(uuid, integer, timestamptz)
  to service_role;
