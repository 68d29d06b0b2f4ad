-- Workflow service, issue 31 part 1: the read side of the runs API under /api/v2, one function per
-- operation, so the `api` edge function only parses the request and renders the answer:
--
-- - workflow_runs:       GET /api/v2/runs (and Sim's GET /api/v2/workflows/{workflowId}/runs)
-- - workflow_run_detail: GET /api/v2/runs/{runId} (and /api/v2/workflows/{workflowId}/runs/{runId})
--
-- A run is any row of workflow_executions, queued ones included (a log is only a run that has
-- started). Each call goes through the logs API's door: it authenticates the X-API-Key and spends a
-- token of the `logs` bucket of the caller's billing account (admit_logs_request), and reads only
-- workspaces the key may read (readable_run: a personal key, those where its user is a member of
-- any role; a workspace key, its own). Unlike the logs list, a workspace or run the key may not read
-- answers 404, exactly as one that does not exist: a key learns nothing about other workspaces.
--
-- Statuses are Sim's v2 names (run_state): queued, running, paused, completed, failed, cancelled.
-- `paused` is an async run parked at a long Wait (its record is `running` with `parked_until` set,
-- which the job-status API still calls running): Sim's pause of kind `time`. A run waiting for a
-- person will be `paused` too, with its own kind; a list or filter written for these six statuses
-- keeps working then.
--
-- Paging is a keyset over (created_at, id) in the requested order. created_at (admission) is set
-- once, where started_at is null while a run is queued and set when a worker takes it: a run never
-- moves while a client pages, and a queued run has its place from the start. The time range bounds
-- created_at too. Indexes below serve each filter in keyset order.
--
-- What a run shows of itself reuses the logs API's definitions: run_error (the error object),
-- run_final_output (its output), run_cost (the cost object). log_entry_expression builds the logs
-- API's entry, whose field names (id, executionId, level, totalDurationMs, executionData) are not
-- this API's, so the entries here are built below.

-- Indexes ------------------------------------------------------------------------------------------
-- Each filter alone is one ordered index range: the workspace's runs, a workflow's, or the
-- workspace's runs of one status or one trigger, newest (or oldest) first. Combined filters take
-- the most selective of them and check the rest on the rows read. The logs API's indexes key on
-- started_at and cannot serve here.

create index workflow_executions_workspace_created_idx on public.workflow_executions (workspace_id, created_at desc, id desc);
create index workflow_executions_workflow_created_idx on public.workflow_executions (workflow_id, created_at desc, id desc);
create index workflow_executions_workspace_status_created_idx on public.workflow_executions (workspace_id, status, created_at desc, id desc);
create index workflow_executions_workspace_trigger_created_idx on public.workflow_executions (workspace_id, trigger, created_at desc, id desc);
comment on index public.workflow_executions_workspace_created_idx is 'Runs API: a workspace''s runs in keyset order (created_at, id).';
comment on index public.workflow_executions_workflow_created_idx is 'Runs API: a workflow''s runs in keyset order.';
comment on index public.workflow_executions_workspace_status_created_idx is 'Runs API: a workspace''s runs of one status in keyset order.';
comment on index public.workflow_executions_workspace_trigger_created_idx is 'Runs API: a workspace''s runs of one trigger in keyset order.';

-- What a run shows -----------------------------------------------------------------------------------

/**
 * A run's status in the runs API, in Sim's v2 words: the record's status, except that a running run
 * parked at a long Wait is `paused`. Immutable SQL, so the planner inlines it in the page query.
 */
create function workflows_private.run_state(p_status public.workflow_run_status, p_parked_until timestamptz)
returns text
language sql
immutable
set search_path = ''
as $$
  select case when p_status = 'running' and p_parked_until is not null then 'paused' else p_status::text end;
$$;
comment on function workflows_private.run_state(public.workflow_run_status, timestamptz) is 'A run''s status in the runs API: queued, running, paused (parked at a long Wait), completed, failed or cancelled.';

/**
 * The runs API's detail of run `p_run`: the list fields, then mode, deploymentVersion (null for a
 * manual run, which ran the draft), input, rerunFromBlock (a fromBlock re-run's block), attempt, the
 * whole cost object, `error` (run_error), `output` (run_final_output), `paused`, `cancellation` and
 * `blocks`.
 *
 * `concurrency` is {waiting, waitingSince, waited, waitedMs, key, keyLimit, priority}: whether the
 * run waits now for a concurrency slot (…034000_workflows-concurrency.sql) and since when, whether
 * it ever waited, how long all its waits took together, and what the workflow's flow control gave it
 * (…034100_workflows-flow-control.sql): its resolved concurrency key (null without one), that key's
 * limit, and its priority.
 *
 * `cancellation` is null unless a cancellation was asked for: {at, by {apiKeyId, apiKeyName, userId},
 * reason}, kept even when the run ended otherwise before it could stop (its status says so).
 *
 * `paused` is null unless the run is paused: {pauseKind: "time", pausedAt, resumeAt}, pausedAt
 * being when the Wait that parked it was recorded; at an approval block (…032700_workflows-approvals.sql)
 * {pauseKind: "approval", contextId, blockedOnBlockId, pausedAt, resumeAt, expiresAt, approvers,
 * quorum, approvals}, resumeAt being the timeout. `blocks` are the trace spans of the blocks that
 * ran, as recorded when the run ended; while an async run is in flight, the spans of the block
 * instances it has completed so far (its checkpoints, masked as every span is), in the order they
 * completed. A sync run in flight has recorded none yet. PL/pgSQL so that it may read the approvals
 * table, which a later migration creates.
 */
create function workflows_private.run_detail(p_run public.workflow_executions)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
begin
  return jsonb_build_object(
    'runId', p_run.id,
    'workflowId', p_run.workflow_id,
    'status', workflows_private.run_state(p_run.status, p_run.parked_until),
    'trigger', p_run.trigger,
    'mode', p_run.mode,
    'deploymentVersion', p_run.deployment_version,
    'input', p_run.input,
    'createdAt', p_run.created_at,
    'startedAt', p_run.started_at,
    'endedAt', p_run.ended_at,
    'durationMs', p_run.duration_ms,
    'rerunOf', p_run.rerun_of,
    'rerunFromBlock', p_run.rerun_from_block,
    'attempt', p_run.attempt,
    'concurrency', jsonb_build_object('waiting', p_run.waiting_since is not null, 'waitingSince', p_run.waiting_since,
      'waited', p_run.waited_ms > 0 or p_run.waiting_since is not null, 'waitedMs', p_run.waited_ms,
      'key', p_run.concurrency_key, 'keyLimit', p_run.concurrency_key_limit, 'priority', p_run.priority),
    'trace', jsonb_build_object('traceId', p_run.trace_id, 'spanId', p_run.trace_span_id, 'parentSpanId', p_run.trace_parent_span_id),
    'cost', coalesce(p_run.cost, workflows_private.run_cost(p_run.cost_total, null)),
    'error', workflows_private.run_error(p_run.status, p_run.error_code, p_run.error_message, p_run.failed_block),
    'output', workflows_private.run_final_output(p_run.status, p_run.output),
    'paused', case when workflows_private.run_state(p_run.status, p_run.parked_until) = 'paused' then coalesce(
      (select jsonb_build_object('pauseKind', 'approval', 'contextId', a.block_key, 'blockedOnBlockId', a.block_id,
          'pausedAt', a.requested_at, 'resumeAt', a.expires_at, 'expiresAt', a.expires_at, 'quorum', a.quorum,
          'approvers', (select count(*) from workflows_private.run_approval_answers r where r.approval_id = a.id and r.email is not null),
          'approvals', (select count(*) from workflows_private.run_approval_answers r where r.approval_id = a.id and r.answer = 'approve'))
        from workflows_private.run_approvals a where a.execution_id = p_run.id and a.decision is null order by a.requested_at limit 1),
      jsonb_build_object(
      'pauseKind', 'time',
      'pausedAt', (select c.recorded_at from workflows_private.run_checkpoints c
        where c.execution_id = p_run.id and c.kind = 'timer' order by c.seq desc limit 1),
      'resumeAt', p_run.parked_until)) end,
    'cancellation', case when p_run.cancel_requested_at is not null then jsonb_build_object(
      'at', p_run.cancel_requested_at, 'by', p_run.cancel_requested_by, 'reason', p_run.cancel_reason) end,
    'blocks', case when p_run.ended_at is not null then coalesce(p_run.trace_spans, '[]'::jsonb)
      else (select coalesce(jsonb_agg(c.checkpoint -> 'span' order by c.seq), '[]'::jsonb) from workflows_private.run_checkpoints c
        where c.execution_id = p_run.id and c.kind = 'completed') end);
end;
$$;
comment on function workflows_private.run_detail(public.workflow_executions) is 'The runs API''s detail of a run: status, trigger, deployment version, input, timings, trace ids, cost, error, output, pause, cancellation and the blocks that ran.';

-- GET /api/v2/runs ---------------------------------------------------------------------------------

/**
 * GET /api/v2/runs: a page of a workspace's runs for an API key that may read it, newest first
 * (`p_order` desc) or oldest first (asc), by admission time. The workspace is `p_workspace_id`, or
 * `p_workflow_id`'s when only that is given. Filters (each optional, all combined): one workflow,
 * one status (run_state's words), one trigger, admitted from/to (inclusive). The page is `p_limit`
 * (1–100) runs after the cursor (`p_cursor_created_at`, `p_cursor_id`: the last run of the
 * previous page). Each entry: {runId, workflowId, status, trigger, createdAt, startedAt, endedAt,
 * durationMs, rerunOf (the run a re-run re-ran, or null), cost {total}}.
 *
 * Answers {status: 200, body: {data, nextCursor: {createdAt, id} | null}, rateLimit} (the edge
 * function makes the cursor opaque and the rate limit headers), or a refusal: 401, 429, 404
 * NOT_FOUND for a workspace or workflow the key may not read (or that does not exist). Malformed
 * arguments, which the edge function has already refused with 400, raise 22023.
 *
 * The page query is written for the filters given and run with their values as parameters, so it is
 * planned for those filters (and picks the index that serves them) every time.
 */
create function public.workflow_runs(
  p_api_key text,
  p_workspace_id uuid default null,
  p_workflow_id uuid default null,
  p_status text default null,
  p_trigger text default null,
  p_start_date timestamptz default null,
  p_end_date timestamptz default null,
  p_limit integer default 50,
  p_cursor_created_at timestamptz default null,
  p_cursor_id uuid default null,
  p_order text default 'desc'
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
  v_direction text := case when p_order = 'asc' then 'asc' else 'desc' end;
  v_trigger public.workflow_trigger;
  -- The status as the record has it: a paused run is a running one (run_state).
  v_record_status public.workflow_run_status;
  v_rows text;
  v_data jsonb;
  v_found bigint;
  v_last_created_at timestamptz;
  v_last_id uuid;
begin
  if (p_workspace_id is null and p_workflow_id is null) or p_limit is null or p_limit not between 1 and 100
    or p_order is null or p_order not in ('asc', 'desc')
    or (p_status is not null and p_status not in ('queued', 'running', 'paused', 'completed', 'failed', 'cancelled'))
    or (p_cursor_created_at is null) <> (p_cursor_id is null) or p_start_date > p_end_date then
    raise exception 'workflow_runs: a workspace or a workflow; limit 1 to 100; order asc or desc; status queued, running, paused, completed, failed or cancelled; a cursor has both parts; the range starts before it ends'
      using errcode = '22023';
  end if;
  begin
    v_trigger := p_trigger::public.workflow_trigger;
  exception when invalid_text_representation then
    raise exception 'workflow_runs: triggers are api, webhook, schedule, manual or chat' using errcode = '22023';
  end;
  v_record_status := (case when p_status = 'paused' then 'running' else p_status end)::public.workflow_run_status;

  v_caller := workflows_private.admit_logs_request(p_api_key, v_now);
  if v_caller.refusal is not null then
    return v_caller.refusal;
  end if;
  if v_workspace_id is null then
    select w.workspace_id into v_workspace_id from public.workflows w where w.id = p_workflow_id;
  end if;
  if v_workspace_id is null or (v_caller.meter).billing_account_id is null
    or workflows_private.principal_access(v_caller.key, null, v_workspace_id, 'viewer') <> 'allowed' then
    return workflows_private.refusal(404, 'NOT_FOUND',
      case when p_workspace_id is null then format('Workflow %s not found', p_workflow_id) else format('Workspace %s not found', p_workspace_id) end,
      jsonb_build_object('rateLimit', v_caller.rate));
  end if;

  -- The `limit + 1` runs after the cursor, in keyset order. The record status narrows by index; the
  -- run_state condition is the definition (it tells paused from running).
  v_rows := 'select e.* from public.workflow_executions e where e.workspace_id = $1'
    || case when p_workflow_id is not null then ' and e.workflow_id = $2' else '' end
    || case when p_status is not null then ' and e.status = $3 and workflows_private.run_state(e.status, e.parked_until) = $4' else '' end
    || case when v_trigger is not null then ' and e.trigger = $5' else '' end
    || case when p_start_date is not null then ' and e.created_at >= $6' else '' end
    || case when p_end_date is not null then ' and e.created_at <= $7' else '' end
    || case when p_cursor_id is not null then format(' and (e.created_at, e.id) %s ($8, $9)', case when v_direction = 'asc' then '>' else '<' end) else '' end
    || format(' order by e.created_at %1$s, e.id %1$s limit $10 + 1', v_direction);

  -- The entries are built from the first `limit` runs; one more says another page follows.
  execute format($q$
    with page as (
      select e.*, row_number() over (order by e.created_at %1$s, e.id %1$s) as n
      from (%2$s) as e
    )
    select jsonb_agg(jsonb_build_object(
        'runId', e.id, 'workflowId', e.workflow_id, 'status', workflows_private.run_state(e.status, e.parked_until),
        'trigger', e.trigger, 'createdAt', e.created_at, 'startedAt', e.started_at, 'endedAt', e.ended_at,
        'durationMs', e.duration_ms, 'rerunOf', e.rerun_of, 'cost', jsonb_build_object('total', trim_scale(e.cost_total))) order by e.n) filter (where e.n <= $10),
      count(*), (array_agg(e.created_at) filter (where e.n = $10))[1], (array_agg(e.id) filter (where e.n = $10))[1]
    from page as e
    $q$, v_direction, v_rows)
  into v_data, v_found, v_last_created_at, v_last_id
  using v_workspace_id, p_workflow_id, v_record_status, p_status, v_trigger, p_start_date, p_end_date,
    p_cursor_created_at, p_cursor_id, p_limit;

  return jsonb_build_object('status', 200, 'rateLimit', v_caller.rate, 'body', jsonb_build_object(
    'data', coalesce(v_data, '[]'::jsonb),
    'nextCursor', case when v_found > p_limit then jsonb_build_object('createdAt', workflows_private.cursor_time(v_last_created_at), 'id', v_last_id) end));
end;
$$;
comment on function public.workflow_runs(text, uuid, uuid, text, text, timestamptz, timestamptz, integer, timestamptz, uuid, text)
  is 'GET /api/v2/runs: a filtered keyset page of a workspace''s runs (queued ones included) for an API key; spends a logs API token. Service role only.';

-- GET /api/v2/runs/{runId} ---------------------------------------------------------------------------

/**
 * GET /api/v2/runs/{runId}: {status: 200, body: {data: <run_detail>}, rateLimit}. With
 * `p_workflow_id` (Sim's path, /workflows/{workflowId}/runs/{runId}) the run must be that
 * workflow's. 401, 429, or 404 NOT_FOUND for a run the key may not read, exactly as for one that
 * does not exist.
 */
create function public.workflow_run_detail(p_api_key text, p_run_id uuid, p_workflow_id uuid default null)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_caller workflows_private.logs_caller;
  v_run public.workflow_executions;
begin
  v_caller := workflows_private.admit_logs_request(p_api_key, now());
  if v_caller.refusal is not null then
    return v_caller.refusal;
  end if;
  v_run := workflows_private.readable_run(v_caller, p_run_id);
  if v_run.id is null or v_run.workflow_id <> coalesce(p_workflow_id, v_run.workflow_id) then
    return workflows_private.missing_run_refusal(v_caller.key, null, p_run_id, p_workflow_id,
      workflows_private.refusal(404, 'NOT_FOUND', format('Run %s not found', p_run_id), jsonb_build_object('rateLimit', v_caller.rate)));
  end if;
  return jsonb_build_object('status', 200, 'rateLimit', v_caller.rate, 'body', jsonb_build_object('data', workflows_private.run_detail(v_run)));
end;
$$;
comment on function public.workflow_run_detail(text, uuid, uuid) is 'GET /api/v2/runs/{runId}: one run with its input, cost, error, output, pause and blocks, for an API key that may read it; spends a logs API token. Service role only.';

-- Access -------------------------------------------------------------------------------------------

revoke execute on function
  public.workflow_runs(text, uuid, uuid, text, text, timestamptz, timestamptz, integer, timestamptz, uuid, text),
  public.workflow_run_detail(text, uuid, uuid),
  workflows_private.run_state(public.workflow_run_status, timestamptz),
  workflows_private.run_detail(public.workflow_executions)
  from public, anon, authenticated, service_role;
grant execute on function
  public.workflow_runs(text, uuid, uuid, text, text, timestamptz, timestamptz, integer, timestamptz, uuid, text),
  public.workflow_run_detail(text, uuid, uuid)
  to service_role;
