-- Workflow service, issue 31, cancelling runs through the runs API (docs/workflow-runs.md,
-- "Cancelling runs"):
--
-- - cancel_run:          the one decision every way of cancelling goes through (this API, the
--                        lifecycle's cancel_workflow_run): records who and why, ends a queued or
--                        parked run at once, and signals a running one on the channel below
-- - workflow_run_cancel: POST /api/v2/runs/{runId}/cancel (and Sim's
--                        /api/v2/workflows/{workflowId}/runs/{runId}/cancel)
-- - workflow_runs_cancel: POST /api/v2/runs/cancel, by the list's filters, the oldest first, at most
--                        1,000 a call
--
-- A running run is stopped at once, not at its next heartbeat (10 to 40 s away): cancel_run sends
-- NOTIFY workflow_run_cancel with the execution id, which Postgres delivers when the cancelling
-- transaction commits; every functions instance that runs runs LISTENs on the channel
-- (runs/cancel-signals.ts) and aborts the run's cancellation tree, which stops a Function spinning
-- in the sandbox. The heartbeat still reports cancelRequested: an instance that was not listening
-- (no session connection, or its listener reconnecting) stops the run there, as before.
--
-- Both endpoints go through the logs API's door, as the rest of the runs API: the X-API-Key is
-- authenticated and one token of the account's `logs` bucket spent (one per call, a bulk cancel
-- included). Cancelling is a write: an editor's personal key or a workspace key. A viewer's key is
-- 403 on a run it can read; a run or workspace the key cannot read is 404, never 403.

-- The decision ---------------------------------------------------------------------------------------

/** Who is cancelling, as a run records it: {apiKeyId, apiKeyName, userId}; null when neither is known. */
create function workflows_private.canceller(p_key public.api_keys, p_user_id uuid)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  select case when p_key.id is not null or p_user_id is not null then jsonb_build_object(
    'apiKeyId', p_key.id, 'apiKeyName', p_key.name, 'userId', coalesce(p_key.user_id, p_user_id)) end;
$$;
comment on function workflows_private.canceller(public.api_keys, uuid) is 'Who cancelled a run, as its record keeps it: the key (id and name) and the user behind it, or the signed-in user.';

/**
 * Cancels `p_run`, whose row the caller has locked: a queued run, or a parked one (which no worker
 * holds), ends `cancelled` at once, dropping its queue message and lease (close_run; it keeps the
 * base charge of its admission); a running one is marked and signalled (NOTIFY workflow_run_cancel,
 * payload its id) and its instance finishes it as cancelled. The first request's time, who
 * (`p_by`) and why (`p_reason`, at most 500 characters) are kept; a later one changes none of them.
 *
 * Answers what happened: `recorded` (this call cancelled it, or asked it to stop), `requested`
 * (already asked and still stopping: signalled again, in case its instance missed the first), or
 * `already_cancelled`, `already_completed`, `already_failed` for a run that had ended (unchanged).
 */
create function workflows_private.cancel_run(p_run public.workflow_executions, p_by jsonb, p_reason text, p_now timestamptz)
returns text
language plpgsql
security definer
set search_path = ''
as $$
begin
  if char_length(p_reason) > 500 then
    raise exception 'cancel_run: a reason is at most 500 characters' using errcode = '22023';
  end if;
  if p_run.status not in ('queued', 'running') then
    return 'already_' || p_run.status::text;
  end if;
  if p_run.cancel_requested_at is not null then
    perform pg_notify('workflow_run_cancel', p_run.id::text);
    return 'requested';
  end if;
  update public.workflow_executions e set cancel_requested_at = p_now, cancel_requested_by = p_by, cancel_reason = p_reason
  where e.id = p_run.id;
  if p_run.status = 'queued' or p_run.parked_until is not null then
    perform workflows_private.close_run(p_run.id, 'cancelled', null, null, p_now);
  else
    perform pg_notify('workflow_run_cancel', p_run.id::text);
  end if;
  return 'recorded';
end;
$$;
comment on function workflows_private.cancel_run(public.workflow_executions, jsonb, text, timestamptz) is 'Cancels a locked run: ends a queued or parked one, signals a running one (NOTIFY workflow_run_cancel); keeps the first who and why. Answers recorded, requested or already_<status>.';

/** Whether the runs API caller may cancel in `p_workspace_id`: allowed, forbidden (a viewer) or not_found. */
create function workflows_private.cancel_access(p_caller workflows_private.logs_caller, p_workspace_id uuid)
returns text
language sql
stable
security definer
set search_path = ''
as $$
  select case when p_workspace_id is null or (p_caller.meter).billing_account_id is null then 'not_found'
    else workflows_private.principal_access(p_caller.key, null, p_workspace_id, 'editor') end;
$$;
comment on function workflows_private.cancel_access(workflows_private.logs_caller, uuid) is 'What a runs API key may do about cancelling in a workspace: allowed (editor and up, or a workspace key), forbidden (viewer) or not_found.';

-- POST /api/v2/runs/{runId}/cancel ---------------------------------------------------------------------

/**
 * POST /api/v2/runs/{runId}/cancel: cancels one run for an API key (cancel_run). With
 * `p_workflow_id` (Sim's path) the run must be that workflow's. Answers {status: 200, body: {data:
 * {success, runId, status, durablyRecorded, pausedCancelled, reason, cancellation}}, rateLimit}, in
 * Sim's v2 words: `durablyRecorded` is whether this call recorded the cancellation, `reason` is
 * `recorded` or `already_<status>` for a run that had ended, `pausedCancelled` whether the run was
 * parked, and `status` the run's status after the call (`running` while a running run stops).
 * Idempotent: a second call answers the run as it stands. Refusals: 401, 429, 404 NOT_FOUND for a run
 * the key may not read (as for one that does not exist), 403 FORBIDDEN for a viewer's key.
 */
create function public.workflow_run_cancel(p_api_key text, p_run_id uuid, p_workflow_id uuid default null, p_reason text default null)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := now();
  v_caller workflows_private.logs_caller;
  v_run public.workflow_executions;
  v_access text;
  v_paused boolean;
  v_outcome text;
begin
  v_caller := workflows_private.admit_logs_request(p_api_key, v_now);
  if v_caller.refusal is not null then
    return v_caller.refusal;
  end if;
  select * into v_run from public.workflow_executions e where e.id = p_run_id for update;
  v_access := workflows_private.cancel_access(v_caller, v_run.workspace_id);
  if v_access = 'not_found' or v_run.workflow_id <> coalesce(p_workflow_id, v_run.workflow_id) then
    return workflows_private.missing_run_refusal(v_caller.key, null, p_run_id, p_workflow_id,
      workflows_private.refusal(404, 'NOT_FOUND', format('Run %s not found', p_run_id), jsonb_build_object('rateLimit', v_caller.rate)));
  end if;
  if v_access = 'forbidden' then
    return workflows_private.refusal(403, 'FORBIDDEN', 'Only a workspace editor or above (or a workspace key) may cancel runs',
      jsonb_build_object('rateLimit', v_caller.rate));
  end if;
  v_paused := workflows_private.run_state(v_run.status, v_run.parked_until) = 'paused';
  v_outcome := workflows_private.cancel_run(v_run, workflows_private.canceller(v_caller.key, null), p_reason, v_now);
  select * into v_run from public.workflow_executions e where e.id = p_run_id;
  return jsonb_build_object('status', 200, 'rateLimit', v_caller.rate, 'body', jsonb_build_object('data', jsonb_build_object(
    'success', true,
    'runId', v_run.id,
    'status', workflows_private.run_state(v_run.status, v_run.parked_until),
    'durablyRecorded', v_outcome = 'recorded',
    'pausedCancelled', v_outcome = 'recorded' and v_paused,
    'reason', case when v_outcome = 'requested' then 'recorded' else v_outcome end,
    'cancellation', workflows_private.run_detail(v_run) -> 'cancellation')));
end;
$$;
comment on function public.workflow_run_cancel(text, uuid, uuid, text) is 'POST /api/v2/runs/{runId}/cancel: cancels one run for an editor''s or a workspace''s API key, idempotently, recording who and why; spends a logs API token. Service role only.';

-- POST /api/v2/runs/cancel -------------------------------------------------------------------------------

/**
 * POST /api/v2/runs/cancel: cancels the runs in flight that match the filters of GET /api/v2/runs
 * (the workspace, or the workflow's; one workflow; `p_status` queued, running or paused, else all
 * three; one trigger; admitted from/to, inclusive), the oldest first, at most `p_limit` (1 to 1,000)
 * a call, each through cancel_run with the same who and `p_reason`. Runs already asked to stop are
 * not counted again. A run whose row a worker holds this moment (a checkpoint, a finish) is waited
 * for, as one cancel waits; one that ends meanwhile is not counted.
 *
 * Answers {status: 200, body: {data: {cancelled, runIds, hasMore}}, rateLimit}: `hasMore` says
 * matching runs remain (call again). Refusals as for one run: 401, 429, 404 for a workspace or
 * workflow the key may not read, 403 for a viewer's key. Malformed arguments raise 22023.
 */
create function public.workflow_runs_cancel(
  p_api_key text,
  p_workspace_id uuid default null,
  p_workflow_id uuid default null,
  p_status text default null,
  p_trigger text default null,
  p_start_date timestamptz default null,
  p_end_date timestamptz default null,
  p_limit integer default 1000,
  p_reason text default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := now();
  v_caller workflows_private.logs_caller;
  v_workspace_id uuid := p_workspace_id;
  v_trigger public.workflow_trigger;
  v_access text;
  v_by jsonb;
  v_run public.workflow_executions;
  v_ids uuid[] := '{}'::uuid[];
  v_more boolean := false;
begin
  if (p_workspace_id is null and p_workflow_id is null) or p_limit is null or p_limit not between 1 and 1000
    or (p_status is not null and p_status not in ('queued', 'running', 'paused')) or p_start_date > p_end_date
    or char_length(p_reason) > 500 then
    raise exception 'workflow_runs_cancel: a workspace or a workflow; limit 1 to 1000; status queued, running or paused; the range starts before it ends; a reason of at most 500 characters'
      using errcode = '22023';
  end if;
  begin
    v_trigger := p_trigger::public.workflow_trigger;
  exception when invalid_text_representation then
    raise exception 'workflow_runs_cancel: triggers are api, webhook, schedule, manual or chat' using errcode = '22023';
  end;

  v_caller := workflows_private.admit_logs_request(p_api_key, v_now);
  if v_caller.refusal is not null then
    return v_caller.refusal;
  end if;
  if v_workspace_id is null then
    select w.workspace_id into v_workspace_id from public.workflows w where w.id = p_workflow_id;
  end if;
  v_access := workflows_private.cancel_access(v_caller, v_workspace_id);
  if v_access = 'not_found' then
    return workflows_private.refusal(404, 'NOT_FOUND',
      case when p_workspace_id is null then format('Workflow %s not found', p_workflow_id) else format('Workspace %s not found', p_workspace_id) end,
      jsonb_build_object('rateLimit', v_caller.rate));
  end if;
  if v_access = 'forbidden' then
    return workflows_private.refusal(403, 'FORBIDDEN', 'Only a workspace editor or above (or a workspace key) may cancel runs',
      jsonb_build_object('rateLimit', v_caller.rate));
  end if;

  v_by := workflows_private.canceller(v_caller.key, null);
  -- One more than the cap is read to tell whether runs remain; the workspace's (status, created_at)
  -- index serves the oldest-first order.
  for v_run in
    select e.* from public.workflow_executions e
    where e.workspace_id = v_workspace_id and e.status in ('queued', 'running') and e.cancel_requested_at is null
      and (p_workflow_id is null or e.workflow_id = p_workflow_id)
      and (p_status is null or workflows_private.run_state(e.status, e.parked_until) = p_status)
      and (v_trigger is null or e.trigger = v_trigger)
      and (p_start_date is null or e.created_at >= p_start_date)
      and (p_end_date is null or e.created_at <= p_end_date)
    order by e.created_at, e.id
    limit p_limit + 1
    for update
  loop
    if cardinality(v_ids) = p_limit then
      v_more := true;
      exit;
    end if;
    perform workflows_private.cancel_run(v_run, v_by, p_reason, v_now);
    v_ids := v_ids || v_run.id;
  end loop;
  return jsonb_build_object('status', 200, 'rateLimit', v_caller.rate, 'body', jsonb_build_object('data', jsonb_build_object(
    'cancelled', cardinality(v_ids), 'runIds', to_jsonb(v_ids), 'hasMore', v_more)));
end;
$$;
comment on function public.workflow_runs_cancel(text, uuid, uuid, text, text, timestamptz, timestamptz, integer, text)
  is 'POST /api/v2/runs/cancel: cancels a workspace''s runs in flight that match the runs list''s filters, oldest first, at most 1,000 a call; spends a logs API token. Service role only.';

-- Access -------------------------------------------------------------------------------------------

revoke execute on function
  workflows_private.canceller(public.api_keys, uuid),
  workflows_private.cancel_run(public.workflow_executions, jsonb, text, timestamptz),
  workflows_private.cancel_access(workflows_private.logs_caller, uuid),
  public.workflow_run_cancel(text, uuid, uuid, text),
  public.workflow_runs_cancel(text, uuid, uuid, text, text, timestamptz, timestamptz, integer, text)
  from public, anon, authenticated, service_role;
grant execute on function
  public.workflow_run_cancel(text, uuid, uuid, text),
  public.workflow_runs_cancel(text, uuid, uuid, text, text, timestamptz, timestamptz, integer, text)
  to service_role;
