-- Workflow service: failed runs say why in the logs API and in completion webhooks.
--
-- A failed run's reason was recorded (error_code, error_message, failed_block) and shown by the
-- dashboard and the jobs API, but the logs API and the completion webhook left it out: a run refused
-- before its first block (400 INVALID_INPUT) was logged `level: error` with nothing else, and a
-- failed block's message was only inside traceSpans. Both now carry
-- `error: {code, message, blockId, blockName}` (null unless the run failed; the block fields null
-- when no block ran).
--
-- A failed run's `finalOutput` is null. The executor's output of a failed run is whatever it held
-- when it stopped (often the trigger's echo of the input), which reads as if the run had answered
-- it; the outputs of the blocks that did complete are in traceSpans.
--
-- One definition of each (run_error, run_final_output) serves the log entries (list and detail,
-- through log_entry_expression) and the webhook event.

-- The two rules ------------------------------------------------------------------------------------

/**
 * The `error` of a run as the logs API and completion webhooks show it: {code, message, blockId,
 * blockName} for a failed run (blockId and blockName null when it failed before any block ran, as a
 * refused input does), null for any other. Immutable SQL, so the planner inlines it in the page query.
 */
create function workflows_private.run_error(p_status public.workflow_run_status, p_code text, p_message text, p_failed_block jsonb)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  select case when p_status = 'failed' then jsonb_build_object(
    'code', p_code,
    'message', p_message,
    'blockId', p_failed_block ->> 'id',
    'blockName', p_failed_block ->> 'name') end;
$$;
comment on function workflows_private.run_error(public.workflow_run_status, text, text, jsonb) is 'The error object of a run for the logs API and webhooks: {code, message, blockId, blockName} when it failed, else null.';

/**
 * The `finalOutput` of a run as the logs API and completion webhooks show it: its output, except a
 * failed run's, which is null (what the executor held when it stopped is not an answer; the
 * completed blocks' outputs are in the trace spans).
 */
create function workflows_private.run_final_output(p_status public.workflow_run_status, p_output jsonb)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  select case when p_status = 'failed' then null else p_output end;
$$;
comment on function workflows_private.run_final_output(public.workflow_run_status, jsonb) is 'The finalOutput of a run for the logs API and webhooks: its output, null when it failed.';

-- Log entries ----------------------------------------------------------------------------------------

/**
 * The SQL expression of a log entry of the run `e` (with its workflow `w` in full mode), as json:
 * the spec's basic fields (id, workflowId, executionId, level, trigger, startedAt, endedAt,
 * totalDurationMs, cost {total}, files) and `error` (run_error); with `p_full` the whole cost object
 * and the workflow {id, name, description}; `executionData` with `traceSpans` and/or `finalOutput`
 * (run_final_output) when asked for. Text for a query to embed, so each mode builds its entry with
 * one json_build_object and no call per row; every value inside is a column or a function of
 * columns, never caller input.
 */
create or replace function workflows_private.log_entry_expression(p_full boolean, p_trace_spans boolean, p_final_output boolean)
returns text
language sql
immutable
set search_path = ''
as $$
  select format('json_build_object(%s)', concat_ws(', ',
    $e$'id', e.id, 'workflowId', e.workflow_id, 'executionId', e.id, 'level', e.level, 'trigger', e.trigger,
      'startedAt', e.started_at, 'endedAt', e.ended_at, 'totalDurationMs', e.duration_ms, 'files', e.files,
      'error', workflows_private.run_error(e.status, e.error_code, e.error_message, e.failed_block)$e$,
    case when p_full then $e$'cost', coalesce(e.cost, workflows_private.run_cost(e.cost_total, null)),
      'workflow', json_build_object('id', w.id, 'name', w.name, 'description', w.description)$e$
      else $e$'cost', json_build_object('total', trim_scale(e.cost_total))$e$ end,
    case when p_trace_spans or p_final_output then format($e$'executionData', json_build_object(%s)$e$, concat_ws(', ',
      case when p_trace_spans then $e$'traceSpans', coalesce(e.trace_spans, '[]'::jsonb)$e$ end,
      case when p_final_output then $e$'finalOutput', workflows_private.run_final_output(e.status, e.output)$e$ end)) end));
$$;

-- The webhook event --------------------------------------------------------------------------------

/**
 * The `data` of a delivery's event, as the spec's Events section lists it: the run's ids, status
 * (success, error, or cancelled), level, trigger, times, duration, cost, files and `error`
 * (run_error); with the subscription's include flags its final output (run_final_output), trace
 * spans, and the paying account's execution rate limits and usage at this moment.
 */
create or replace function workflows_private.webhook_event_data(e public.workflow_executions, s public.webhook_subscriptions, p_now timestamptz)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  v_meter workflows_private.account_meters;
  v_data jsonb := jsonb_build_object(
    'workflowId', e.workflow_id,
    'executionId', e.id,
    'status', case e.status when 'completed' then 'success' when 'failed' then 'error' else e.status::text end,
    'level', e.level,
    'trigger', e.trigger,
    'startedAt', e.started_at,
    'endedAt', e.ended_at,
    'totalDurationMs', e.duration_ms,
    'cost', coalesce(e.cost, workflows_private.run_cost(e.cost_total, null)),
    'files', e.files,
    'error', workflows_private.run_error(e.status, e.error_code, e.error_message, e.failed_block));
begin
  if s.include_final_output then
    v_data := v_data || jsonb_build_object('finalOutput', workflows_private.run_final_output(e.status, e.output));
  end if;
  if s.include_trace_spans then
    v_data := v_data || jsonb_build_object('traceSpans', coalesce(e.trace_spans, '[]'::jsonb));
  end if;
  if s.include_rate_limits or s.include_usage_data then
    select * into v_meter from workflows_private.account_meters m where m.billing_account_id = e.billing_account_id;
    if s.include_rate_limits then
      v_data := v_data || jsonb_build_object('rateLimits', workflows_private.logs_limits(v_meter, p_now) -> 'workflowExecutionRateLimit');
    end if;
    if s.include_usage_data then
      v_data := v_data || jsonb_build_object('usage', workflows_private.usage_state(v_meter) - 'periodEnd');
    end if;
  end if;
  return v_data;
end;
$$;

-- Access -------------------------------------------------------------------------------------------

-- Pure helpers of the readers above (security definer), not an API of their own.
revoke execute on function
  workflows_private.run_error(public.workflow_run_status, text, text, jsonb),
  workflows_private.run_final_output(public.workflow_run_status, jsonb)
  from public, anon, authenticated, service_role;
