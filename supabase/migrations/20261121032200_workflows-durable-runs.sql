-- Workflow service: durable async runs (docs/workflow-runs.md, "Durable async runs").
--
-- - workflows_private.run_checkpoints: an async run's history, one row per block instance that
--   completed (its output, span, the variables after it, its model calls) and per Wait that parked
--   the run (its due time). The worker writes a checkpoint before the block's successors start; a
--   later attempt replays the history instead of running completed blocks again. Kept once the run
--   ends, for fromBlock re-runs (…032600_workflows-reruns.sql), and deleted with the run. Written
--   through record_workflow_checkpoint (and, a sync run's in one batch at its finish,
--   store_run_checkpoints); read by claim_workflow_runs and admit_workflow_run's re-runs.
-- - parked runs: a Wait past the park threshold ends the attempt with park_workflow_run. The run
--   stays `running` (the job-status API keeps its five statuses) with `parked_until` set; its lease
--   and its queue message (sent again with pgmq's delay) both end at the due time, when the next
--   claim resumes it. No worker, heartbeat or connection is held meanwhile.
-- - claim, heartbeat, cancel, the sweeper and the job status know parked runs (their bodies are in
--   …031200_workflows-run-lifecycle.sql and …031300_workflows-run-reads.sql).

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
comment on table workflows_private.run_checkpoints is 'A run''s history (executor/durable.ts): completed block instances and parked Waits, replayed by later attempts of an async run and by fromBlock re-runs; deleted with the run. Holds block outputs as the run saw them, so only the runtime reads it.';
comment on column workflows_private.run_checkpoints.kind is 'completed (a block instance finished, handled failure included) or timer (a Wait parked the run).';
comment on column workflows_private.run_checkpoints.key is 'The block instance: block id plus iteration path (fn1[loop1:2]).';
comment on column workflows_private.run_checkpoints.seq is 'Recording order: the history is replayed in it (the last completion''s variables are the run''s).';
comment on column workflows_private.run_checkpoints.attempt is 'The attempt that recorded it.';
comment on column workflows_private.run_checkpoints.checkpoint is 'The checkpoint as the engine wrote it: {kind, key, output, failed, span, variables, modelUsage} or {kind, key, dueAt}.';
comment on column workflows_private.run_checkpoints.recorded_at is 'When it was recorded.';
alter table workflows_private.run_checkpoints enable row level security;

/**
 * Records one checkpoint of an async run (executor/durable.ts): `p_checkpoint` is `{kind: "completed",
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
 * once. A parked run gives its concurrency slots back until it resumes. A run whose cancellation was requested is not parked (`cancelRequested: true`: finish it
 * cancelled); a stale attempt gets `alive: false`. An approval block parks until its timeout, and a
 * decision wakes the run earlier. Answers {parked, alive, resumeAt, cancelRequested}.
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
  -- An approval decided while its worker was still on the way here (…032700_workflows-approvals.sql)
  -- found no parked run to wake: the run parks for no time, and resumes with the decision.
  if exists (select 1 from workflows_private.run_approvals a where a.execution_id = v_run.id and a.decision is not null
      and not exists (select 1 from workflows_private.run_checkpoints c where c.execution_id = v_run.id and c.kind = 'completed' and c.key = a.block_key)) then
    p_resume_at := v_now;
  end if;
  if v_run.queue_message_id is not null then
    perform pgmq.delete('workflow_runs', v_run.queue_message_id);
  end if;
  select * into v_message_id from pgmq.send('workflow_runs', jsonb_build_object('executionId', v_run.id),
    greatest(0, ceil(extract(epoch from p_resume_at - v_now)))::integer);
  update public.workflow_executions e set
    parked_until = p_resume_at, lease_expires_at = p_resume_at, park_attempt = e.attempt, queue_message_id = v_message_id
  where e.id = v_run.id;
  -- A parked run holds no concurrency slot: the next waiter starts now, and the claim that resumes
  -- this run takes a slot again (or waits for one).
  perform workflows_private.release_slots(v_run.id);
  return jsonb_build_object('parked', true, 'alive', true, 'runStatus', v_run.status, 'resumeAt', p_resume_at, 'cancelRequested', false);
end;
$$;
comment on function public.park_workflow_run(uuid, integer, timestamptz) is 'Parks an async run at a long Wait: frees its worker and resumes it through a delayed queue message. Service role only.';

revoke execute on function
  public.record_workflow_checkpoint(uuid, integer, jsonb),
  public.park_workflow_run(uuid, integer, timestamptz)
  from public, anon, authenticated, service_role;
grant execute on function
  public.record_workflow_checkpoint(uuid, integer, jsonb),
  public.park_workflow_run(uuid, integer, timestamptz)
  to service_role;
