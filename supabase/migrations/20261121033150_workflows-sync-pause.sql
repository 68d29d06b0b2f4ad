-- Workflow service, issue 31 part 3: a sync or streamed run that reaches an approval answers
-- `paused` and goes on asynchronously (docs/workflow-runs.md, "Approvals").
--
-- The request has opened the approval (open_workflow_approval, as a worker does) and its executor
-- has stopped at it with a timer checkpoint, as an async run parks. pause_sync_workflow_run hands the
-- run to the async machinery in one transaction: it stores the outcomes the request collected in
-- memory (store_run_checkpoints, the one batch writer), makes the run async and parks it
-- (park_workflow_run, the one parking path). From then on it is an async parked run: a decision or
-- the timeout wakes it, a worker claims it with its history, replays what the request ran, and
-- finishes it, with its completion webhook.
--
-- The mode becomes `async` because every rule that depends on it must from then on be the async
-- one's: an expired lease sends the run back to the queue instead of failing it, heartbeats and
-- claims follow attempts, a retry of its Idempotency-Key is no longer "in use". The rate-limit token
-- it spent (the sync bucket) and its base charge stay as admitted. The request's paused answer is
-- kept as the run's `response`, so a retry with its Idempotency-Key is answered as the sync request
-- it was (idempotent_replay, …031200_workflows-run-lifecycle.sql).

/**
 * Hands a sync run paused at an approval over to the async path (see the file's comment):
 * `p_checkpoints` are its collected outcomes, unmasked (the blocks after the approval must see what
 * they saw; the final finish stores them masked), `p_response` the answer the request gives, whose
 * `body.paused` is filled in here with the pause as GET /api/v2/runs/{runId} shows it. Only the
 * request that holds the run may: a run whose lease ran out is ended as the sweeper would
 * (WORKER_LOST) and, like an ended run or another attempt, answered `{parked: false, alive: false}`;
 * a run asked to stop is not parked (`{parked: false, alive: true, cancelRequested: true}`: finish it
 * cancelled). Answers park_workflow_run's `{parked: true, alive, resumeAt, cancelRequested}` with
 * the stored `response`.
 */
create function public.pause_sync_workflow_run(p_execution_id uuid, p_attempt integer, p_resume_at timestamptz, p_checkpoints jsonb, p_response jsonb)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_run public.workflow_executions;
  v_parked jsonb;
  v_response jsonb;
begin
  if p_attempt is null or p_resume_at is null or jsonb_typeof(p_response -> 'body') is distinct from 'object'
    or jsonb_typeof(p_response -> 'status') is distinct from 'number' then
    raise exception 'pause_sync_workflow_run: the attempt that holds the run, a resume time, and the answer {status, headers, body}' using errcode = '22023';
  end if;
  select * into v_run from public.workflow_executions e where e.id = p_execution_id for update;
  if not found then
    raise exception 'pause_sync_workflow_run: no execution %', p_execution_id using errcode = 'P0002';
  end if;
  if v_run.mode = 'sync' and v_run.status = 'running' and v_run.lease_expires_at < now() then
    perform workflows_private.end_expired_run(v_run, now());
    select * into v_run from public.workflow_executions e where e.id = p_execution_id;
  end if;
  if v_run.mode <> 'sync' or v_run.status <> 'running' or v_run.attempt <> p_attempt then
    return jsonb_build_object('parked', false, 'alive', false, 'runStatus', v_run.status, 'cancelRequested', v_run.cancel_requested_at is not null);
  end if;
  if v_run.cancel_requested_at is not null then
    return jsonb_build_object('parked', false, 'alive', true, 'runStatus', v_run.status, 'cancelRequested', true);
  end if;
  perform workflows_private.store_run_checkpoints(v_run.id, v_run.attempt, p_checkpoints);
  update public.workflow_executions e set mode = 'async' where e.id = v_run.id;
  v_parked := public.park_workflow_run(v_run.id, v_run.attempt, p_resume_at);
  select * into v_run from public.workflow_executions e where e.id = p_execution_id;
  v_response := jsonb_set(p_response, '{body,paused}', coalesce(workflows_private.run_detail(v_run) -> 'paused', 'null'::jsonb));
  update public.workflow_executions e set response = v_response where e.id = v_run.id;
  return v_parked || jsonb_build_object('response', v_response);
end;
$$;
comment on function public.pause_sync_workflow_run(uuid, integer, timestamptz, jsonb, jsonb) is 'Hands a sync run paused at an approval to the async path: stores its outcomes, makes it async and parks it, in one transaction. Service role only.';

revoke execute on function public.pause_sync_workflow_run(uuid, integer, timestamptz, jsonb, jsonb) from public, anon, authenticated, service_role;
grant execute on function public.pause_sync_workflow_run(uuid, integer, timestamptz, jsonb, jsonb) to service_role;
