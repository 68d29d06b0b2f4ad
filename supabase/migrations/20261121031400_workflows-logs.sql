-- Workflow service, part 4: the logs API in SQL, one function per endpoint, so the `api` edge
-- function only parses the request and renders the answer:
--
-- - workflow_logs:             GET /api/v1/logs (filters, keyset paging, detail modes)
-- - workflow_log_detail:       GET /api/v1/logs/{id}
-- - workflow_execution_detail: GET /api/v1/logs/executions/{executionId}
--
-- A log is a run that has started (`workflow_executions` with `started_at` set); its id is the
-- executionId. Each call authenticates the X-API-Key, spends a token of the `logs` bucket of the
-- caller's billing account (the plan's per-minute figure: Free 10, Pro 30, Team 60), checks the key
-- may read the workspace, and answers {status, body, rateLimit} or a refusal, as the run functions
-- do (docs/workflow-runs.md). Which workspaces a key reads: a personal key, those where its user is
-- a member of any role (reading logs is a viewer's right); a workspace key, its own workspace.
--
-- Paging is a keyset over (started_at, id) in the requested order: a page never skips or repeats
-- a row, whatever the ties in start time and whatever is inserted while paging (decisions item 8).
-- The query is assembled from the filters given, so each request is planned for its own filters
-- and picks its own index; every value goes in as a parameter.
--
-- - workflows_private.execution_models: the models each finished run used (one row per model), so
--   the `model` filter is an index range rather than a scan of every run's cost JSON. Filled by a
--   trigger when a run ends with model usage, whoever ends it.
-- - run_error, run_final_output, log_entry_expression: what a log entry shows of a run (its error,
--   its final output, the entry itself), the first two shared with completion webhooks.

-- Per-model usage ----------------------------------------------------------------------------------

create table workflows_private.execution_models (
  execution_id uuid not null references public.workflow_executions (id) on delete cascade,
  model text not null,
  workspace_id uuid not null,
  started_at timestamptz not null,
  primary key (execution_id, model)
);
comment on table workflows_private.execution_models is 'The models each finished run used (the keys of its cost.models), for the logs API''s model filter. Written by a trigger when a run ends; no API role reads it.';
comment on column workflows_private.execution_models.execution_id is 'The run.';
comment on column workflows_private.execution_models.model is 'A model the run called (as priced in cost.models).';
comment on column workflows_private.execution_models.workspace_id is 'The run''s workspace, copied so the filter needs no join.';
comment on column workflows_private.execution_models.started_at is 'The run''s start, copied: the logs keyset.';
create index execution_models_keyset_idx on workflows_private.execution_models (workspace_id, model, started_at desc, execution_id desc);

-- One workflow's failed runs in keyset order: through the workflow's own index, a page of its
-- errors (with a rare duration or cost on top) walks every run of the workflow to find them.
create index workflow_executions_workflow_errors_idx on public.workflow_executions (workflow_id, started_at desc, id desc) where level = 'error';

/** Trigger: a run that ended with model usage lists its models in execution_models. */
create function workflows_private.record_execution_models()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into workflows_private.execution_models (execution_id, model, workspace_id, started_at)
  select new.id, m.model, new.workspace_id, new.started_at
  from jsonb_object_keys(new.cost -> 'models') as m (model)
  on conflict do nothing;
  return null;
end;
$$;
comment on function workflows_private.record_execution_models() is 'Trigger: records the models of a run that just ended (for the logs model filter).';

-- The WHEN clause is evaluated without calling the function, so runs without models pay nothing.
create trigger workflow_executions_record_models
  after update of ended_at on public.workflow_executions
  for each row
  when (old.ended_at is null and new.ended_at is not null and jsonb_typeof(new.cost -> 'models') = 'object' and new.cost -> 'models' <> '{}'::jsonb)
  execute function workflows_private.record_execution_models();

-- Who is asking -------------------------------------------------------------------------------------

/** The caller of a logs API request: a refusal (401, 429), or its key, meter and logs bucket state. */
create type workflows_private.logs_caller as (refusal jsonb, key public.api_keys, meter workflows_private.account_meters, rate jsonb);
comment on type workflows_private.logs_caller is 'What admit_logs_request found: refusal null, or the 401/429 answer; the key; the billing account meter whose limits the caller sees; the logs bucket after spending.';

/**
 * Authenticates a logs API request and spends one token of the logs bucket of the caller's billing
 * account (the account workflow_usage_limits reports: a workspace key's workspace's, or a personal
 * key's highest-priority plan). 401 for a missing, unknown or revoked key; 429 RATE_LIMIT_EXCEEDED
 * with retryAfter when the bucket is empty (a refusal spends nothing). A user with no billing account
 * belongs to no workspace: no token is spent and the endpoint answers its own 403/404.
 */
create function workflows_private.admit_logs_request(p_api_key text, p_now timestamptz)
returns workflows_private.logs_caller
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_caller workflows_private.logs_caller;
  v_spend workflows_private.spend_outcome;
begin
  v_caller.key := workflows_private.authenticate_api_key(p_api_key);
  if (v_caller.key).id is null then
    v_caller.refusal := workflows_private.api_key_refusal(p_api_key);
    return v_caller;
  end if;
  v_caller.meter := workflows_private.caller_meter(v_caller.key, null);
  if (v_caller.meter).billing_account_id is null then
    return v_caller;
  end if;
  v_spend := workflows_private.spend((v_caller.meter).billing_account_id, 'logs', false, 0, p_now);
  v_caller.meter := v_spend.meter;
  v_caller.rate := workflows_private.rate_limit_state(v_spend.meter, 'logs', p_now);
  if v_spend.refusal is not null then
    v_caller.refusal := workflows_private.refusal(429, 'RATE_LIMIT_EXCEEDED',
      format('Rate limit exceeded: %s logs API requests a minute; retry in %s s', v_caller.rate ->> 'limit', v_caller.rate ->> 'retryAfter'),
      jsonb_build_object('retryAfter', (v_caller.rate ->> 'retryAfter')::integer, 'rateLimit', v_caller.rate));
  end if;
  return v_caller;
end;
$$;
comment on function workflows_private.admit_logs_request(text, timestamptz) is 'Authenticates a logs API key and spends a token of its account''s logs bucket (401 / 429 refusals).';

/**
 * The spec's `limits` object of every logs API answer: the caller's workflow execution rate limits
 * (sync and async buckets, read without spending) and the open period's usage.
 */
create function workflows_private.logs_limits(p_meter workflows_private.account_meters, p_now timestamptz)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  v_sync jsonb := workflows_private.rate_limit_state(p_meter, 'sync', p_now);
  v_async jsonb := workflows_private.rate_limit_state(p_meter, 'async', p_now);
begin
  return jsonb_build_object(
    'workflowExecutionRateLimit', jsonb_build_object(
      'sync', jsonb_build_object('limit', v_sync -> 'limit', 'remaining', v_sync -> 'remaining', 'resetAt', v_sync -> 'resetAt'),
      'async', jsonb_build_object('limit', v_async -> 'limit', 'remaining', v_async -> 'remaining', 'resetAt', v_async -> 'resetAt')),
    'usage', workflows_private.usage_state(p_meter) - 'periodEnd');
end;
$$;
comment on function workflows_private.logs_limits(workflows_private.account_meters, timestamptz) is 'The limits object of the logs API: execution rate limits (sync, async) and usage.';

/** A log's start time as the cursor carries it: UTC, to the microsecond, so it converts back exactly. */
create function workflows_private.cursor_time(p_at timestamptz)
returns text
language plpgsql
immutable
set search_path = ''
as $$
begin
  return to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
end;
$$;
comment on function workflows_private.cursor_time(timestamptz) is 'The start time of a log as the keyset cursor carries it (UTC, microseconds).';

-- Why a run failed ---------------------------------------------------------------------------------
-- The logs API and completion webhooks carry `error: {code, message, blockId, blockName}` (null
-- unless the run failed; the block fields null when no block ran). A failed run's `finalOutput` is
-- null: the executor's output of a failed run is whatever it held when it stopped (often the
-- trigger's echo of the input), which would read as if the run had answered it; the outputs of the
-- blocks that did complete are in traceSpans. One definition of each (run_error, run_final_output)
-- serves the log entries (list and detail, through log_entry_expression) and the webhook event.

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
create function workflows_private.log_entry_expression(p_full boolean, p_trace_spans boolean, p_final_output boolean)
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
revoke execute on function workflows_private.log_entry_expression(boolean, boolean, boolean) from public, anon, authenticated, service_role;
comment on function workflows_private.log_entry_expression(boolean, boolean, boolean) is 'The json expression of a logs API entry of run e (workflow w) for a detail mode, for the logs queries to embed.';

-- GET /api/v1/logs/{id} and /api/v1/logs/executions/{executionId} -----------------------------------

/**
 * The run `p_id` (queued, running or ended) if the caller's key may read its workspace (any member,
 * or a key of the workspace), else null: the logs and runs APIs answer 404 alike for runs that do
 * not exist and runs of a workspace the key may not read.
 */
create function workflows_private.readable_run(p_caller workflows_private.logs_caller, p_id uuid)
returns public.workflow_executions
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  v_run public.workflow_executions;
begin
  select * into v_run from public.workflow_executions e where e.id = p_id;
  if not found or (p_caller.meter).billing_account_id is null
    or workflows_private.principal_access(p_caller.key, null, v_run.workspace_id, 'viewer') <> 'allowed' then
    return null;
  end if;
  return v_run;
end;
$$;
comment on function workflows_private.readable_run(workflows_private.logs_caller, uuid) is 'A run the logs or runs API caller may read, or null (404).';

/**
 * GET /api/v1/logs/{id}: {status: 200, body: {data: <log detail>, limits}, rateLimit}. The detail is
 * a full log entry with executionData {traceSpans, finalOutput}. 401, 429, or 404 NOT_FOUND for a
 * log the key may not read.
 */
create function public.workflow_log_detail(p_api_key text, p_id uuid)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := now();
  v_caller workflows_private.logs_caller;
  v_run public.workflow_executions;
  v_entry json;
begin
  v_caller := workflows_private.admit_logs_request(p_api_key, v_now);
  if v_caller.refusal is not null then
    return v_caller.refusal;
  end if;
  v_run := workflows_private.readable_run(v_caller, p_id);
  -- A log is a run that has started.
  if v_run.started_at is null then
    return workflows_private.missing_run_refusal(v_caller.key, null, p_id, null,
      workflows_private.refusal(404, 'NOT_FOUND', format('Log %s not found', p_id), jsonb_build_object('rateLimit', v_caller.rate)));
  end if;
  execute format('select %s from (select ($1).*) as e left join public.workflows w on w.id = e.workflow_id',
    workflows_private.log_entry_expression(true, true, true))
  into v_entry using v_run;
  return jsonb_build_object('status', 200, 'rateLimit', v_caller.rate, 'body', jsonb_build_object(
    'data', v_entry,
    'limits', workflows_private.logs_limits(v_caller.meter, v_now)));
end;
$$;
comment on function public.workflow_log_detail(text, uuid) is 'GET /api/v1/logs/{id}: one log with its workflow, execution data and full cost, and the limits object. Service role only.';

/**
 * GET /api/v1/logs/executions/{executionId}: {status: 200, body: {executionId, workflowId,
 * workflowState {blocks, edges, loops, parallels}, executionMetadata {trigger, startedAt, endedAt,
 * totalDurationMs, cost}, limits}, rateLimit}. The state is what the run executed: its deployment
 * snapshot, or the draft snapshot of a manual run. 401, 429, or 404 NOT_FOUND.
 */
create function public.workflow_execution_detail(p_api_key text, p_execution_id uuid)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := now();
  v_caller workflows_private.logs_caller;
  v_run public.workflow_executions;
  v_state jsonb;
begin
  v_caller := workflows_private.admit_logs_request(p_api_key, v_now);
  if v_caller.refusal is not null then
    return v_caller.refusal;
  end if;
  v_run := workflows_private.readable_run(v_caller, p_execution_id);
  if v_run.started_at is not null then
    select coalesce(d.state, s.state) into v_state
    from (select 1) as one
    left join public.workflow_deployments d on d.id = v_run.deployment_id
    left join public.workflow_execution_snapshots s on s.id = v_run.snapshot_id;
  end if;
  if v_state is null then
    return workflows_private.missing_run_refusal(v_caller.key, null, p_execution_id, null,
      workflows_private.refusal(404, 'NOT_FOUND', format('Execution %s not found', p_execution_id), jsonb_build_object('rateLimit', v_caller.rate)));
  end if;
  return jsonb_build_object('status', 200, 'rateLimit', v_caller.rate, 'body', jsonb_build_object(
    'executionId', v_run.id,
    'workflowId', v_run.workflow_id,
    'workflowState', jsonb_build_object(
      'blocks', coalesce(v_state -> 'blocks', '{}'::jsonb), 'edges', coalesce(v_state -> 'edges', '[]'::jsonb),
      'loops', coalesce(v_state -> 'loops', '{}'::jsonb), 'parallels', coalesce(v_state -> 'parallels', '{}'::jsonb)),
    'executionMetadata', jsonb_build_object(
      'trigger', v_run.trigger, 'startedAt', v_run.started_at, 'endedAt', v_run.ended_at, 'totalDurationMs', v_run.duration_ms,
      'cost', coalesce(v_run.cost, workflows_private.run_cost(v_run.cost_total, null))),
    'limits', workflows_private.logs_limits(v_caller.meter, v_now)));
end;
$$;
comment on function public.workflow_execution_detail(text, uuid) is 'GET /api/v1/logs/executions/{executionId}: the workflow state a run executed and its metadata, and the limits object. Service role only.';

-- Access -------------------------------------------------------------------------------------------

revoke all on workflows_private.execution_models from public, anon, authenticated, service_role;
alter table workflows_private.execution_models enable row level security;
-- Lean pages ---------------------------------------------------------------------------------------
-- An entry is one json_build_object, written for the detail mode asked for (one definition,
-- log_entry_expression, serves the list and the detail endpoint), and a page is json text, which
-- nests by copying text, where jsonb re-encodes what it wraps at every level (docs/performance.md,
-- "Logs API"):
--
-- - workflow_logs_json: GET /api/v1/logs as json, what the endpoint calls; the edge function parses
--   text either way, so it skips the conversion to jsonb and back altogether;
-- - workflow_logs: the same answer as jsonb (one conversion), for SQL callers.
--
-- The page's keys are read first, by the query assembled for the filters given.

-- GET /api/v1/logs ---------------------------------------------------------------------------------

/**
 * GET /api/v1/logs: a page of the workspace's logs for an API key that may read it, newest first
 * (`p_order` desc) or oldest first (asc). Filters (each optional, all combined): workflows, folders
 * (and their subfolders: the workflow's folder now), triggers, level, start time from/to (inclusive),
 * one execution, duration and cost ranges (finished runs only), a model the run used. The page is
 * `p_limit` (1–1000) entries after the cursor (`p_cursor_started_at`, `p_cursor_id`: the last entry
 * of the previous page). `p_details` basic or full; trace spans and final output only when asked.
 *
 * Answers {status: 200, body: {data, nextCursor: {startedAt, id} | null, limits}, rateLimit} (the
 * edge function makes the cursor opaque and the rate limit headers), or a refusal: 401, 429, 403
 * FORBIDDEN for a workspace the key may not read (or that does not exist). Malformed arguments,
 * which the edge function has already refused with 400, raise 22023.
 *
 * How the page is read: the query is written for the filters given, with their values as quoted
 * literals (every value is typed and checked first), so the planner sees exactly what it filters
 * on, partial indexes included. One index delivers the rows already in keyset order: a model's
 * per-model index; a workflow's or a trigger's index for one value; for a few values (2 to 20
 * workflows, 2 to 4 triggers), one short ordered scan per value merged (an IN list on an index
 * cannot keep the order, and would sort every matching run); otherwise the workspace's index,
 * whose first rows mostly match.
 *
 * The answer is json text: the endpoint parses it as it is (workflow_logs gives it as jsonb).
 */
create function public.workflow_logs_json(
  p_api_key text,
  p_workspace_id uuid,
  p_workflow_ids uuid[] default null,
  p_folder_ids uuid[] default null,
  p_triggers text[] default null,
  p_level text default null,
  p_start_date timestamptz default null,
  p_end_date timestamptz default null,
  p_execution_id uuid default null,
  p_min_duration_ms integer default null,
  p_max_duration_ms integer default null,
  p_min_cost numeric default null,
  p_max_cost numeric default null,
  p_model text default null,
  p_limit integer default 100,
  p_cursor_started_at timestamptz default null,
  p_cursor_id uuid default null,
  p_order text default 'desc',
  p_details text default 'basic',
  p_include_trace_spans boolean default false,
  p_include_final_output boolean default false
)
returns json
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := now();
  v_caller workflows_private.logs_caller;
  v_workflows uuid[];
  v_triggers public.workflow_trigger[];
  v_direction text := case when p_order = 'asc' then 'asc' else 'desc' end;
  -- The keyset columns: the run's own, or (model filter) the per-model table's copies.
  v_key text := case when p_model is null then 'e.started_at' else 'm.started_at' end;
  v_id text := case when p_model is null then 'e.id' else 'm.execution_id' end;
  v_where text;
  v_rows text;
  v_data json;
  v_found bigint := 0;
  v_last_started_at timestamptz;
  v_last_id uuid;
begin
  if p_workspace_id is null or p_limit is null or p_limit not between 1 and 1000 or p_order is null or p_order not in ('asc', 'desc')
    or p_details is null or p_details not in ('basic', 'full') or (p_level is not null and p_level not in ('info', 'error'))
    or (p_cursor_started_at is null) <> (p_cursor_id is null)
    or p_min_duration_ms < 0 or p_max_duration_ms < 0 or p_min_cost < 0 or p_max_cost < 0 then
    raise exception 'workflow_logs: workspace required; limit 1 to 1000; order asc or desc; details basic or full; level info or error; a cursor has both parts; ranges are not negative'
      using errcode = '22023';
  end if;
  begin
    v_triggers := array(select distinct t from unnest(p_triggers::public.workflow_trigger[]) t order by t);
  exception when invalid_text_representation then
    raise exception 'workflow_logs: triggers are api, webhook, schedule, manual or chat' using errcode = '22023';
  end;
  if p_triggers is null or cardinality(v_triggers) = 5 then
    v_triggers := null;
  end if;

  v_caller := workflows_private.admit_logs_request(p_api_key, v_now);
  if v_caller.refusal is not null then
    return v_caller.refusal::json;
  end if;
  if (v_caller.meter).billing_account_id is null
    or workflows_private.principal_access(v_caller.key, null, p_workspace_id, 'viewer') <> 'allowed' then
    return workflows_private.refusal(403, 'FORBIDDEN', format('This API key may not read the logs of workspace %s', p_workspace_id),
      jsonb_build_object('rateLimit', v_caller.rate))::json;
  end if;

  -- The workflows asked for: the ids given, within the folders given (with their subfolders).
  if p_folder_ids is not null then
    with recursive tree as (
      select f.id from public.folders f where f.workspace_id = p_workspace_id and f.id = any(p_folder_ids)
      union
      select f.id from public.folders f join tree t on f.parent_id = t.id where f.workspace_id = p_workspace_id
    )
    select coalesce(array_agg(w.id), '{}') into v_workflows
    from public.workflows w where w.workspace_id = p_workspace_id and w.folder_id in (select id from tree);
  end if;
  if p_workflow_ids is not null then
    v_workflows := array(select distinct x from unnest(p_workflow_ids) x where v_workflows is null or x = any(v_workflows));
  end if;

  if v_workflows is null or v_workflows <> '{}' then
    v_where := format('%s = %L', case when p_model is null then 'e.workspace_id' else 'm.workspace_id' end, p_workspace_id)
      || case when p_model is null then ' and e.started_at is not null' else format(' and m.model = %L', p_model) end
      || case when p_level is not null then format(' and e.level = %L', p_level) else '' end
      || case when p_start_date is not null then format(' and %s >= %L::timestamptz', v_key, workflows_private.cursor_time(p_start_date)) else '' end
      || case when p_end_date is not null then format(' and %s <= %L::timestamptz', v_key, workflows_private.cursor_time(p_end_date)) else '' end
      || case when p_execution_id is not null then format(' and %s = %L::uuid', v_id, p_execution_id) else '' end
      -- Duration and cost are final once a run has ended; saying so lets the partial indexes serve.
      || case when coalesce(p_min_duration_ms, p_max_duration_ms, p_min_cost, p_max_cost) is not null then ' and e.ended_at is not null' else '' end
      || case when p_min_duration_ms is not null then format(' and e.duration_ms >= %s', p_min_duration_ms) else '' end
      || case when p_max_duration_ms is not null then format(' and e.duration_ms <= %s', p_max_duration_ms) else '' end
      || case when p_min_cost is not null then format(' and e.cost_total >= %L::numeric', p_min_cost) else '' end
      || case when p_max_cost is not null then format(' and e.cost_total <= %L::numeric', p_max_cost) else '' end
      || case when p_cursor_id is not null then format(' and (%s, %s) %s (%L::timestamptz, %L::uuid)',
           v_key, v_id, case when v_direction = 'asc' then '>' else '<' end, workflows_private.cursor_time(p_cursor_started_at), p_cursor_id) else '' end;

    -- The `limit + 1` runs in keyset order, as rows of workflow_executions (only the columns the
    -- entries use are read). One index scan reads them straight from the table; a merge of several
    -- scans merges their keys alone (index-only), then reads those rows.
    if p_model is null and (cardinality(v_workflows) between 2 and 20 or (v_workflows is null and cardinality(v_triggers) between 2 and 4)) then
      v_rows := format(
        'select e.* from (select x.id from unnest(%1$L::%2$s[]) as v (value)
           cross join lateral (select e.id, e.started_at from public.workflow_executions e where %3$s and e.%4$s = v.value
             %5$s order by e.started_at %6$s, e.id %6$s limit %7$s) as x
           order by x.started_at %6$s, x.id %6$s limit %7$s) as k
         join public.workflow_executions e on e.id = k.id',
        coalesce(v_workflows::text, v_triggers::text), case when v_workflows is not null then 'uuid' else 'public.workflow_trigger' end,
        v_where, case when v_workflows is not null then 'workflow_id' else 'trigger' end,
        case when v_workflows is not null and v_triggers is not null then format('and e.trigger = any(%L::public.workflow_trigger[])', v_triggers) else '' end,
        v_direction, p_limit + 1);
    else
      v_rows := format('select e.* from %s where %s%s%s order by %s %s, %s %s limit %s',
        case when p_model is null then 'public.workflow_executions e'
          else 'workflows_private.execution_models m join public.workflow_executions e on e.id = m.execution_id' end,
        v_where,
        case when cardinality(v_workflows) = 1 then format(' and e.workflow_id = %L::uuid', v_workflows[1])
          when v_workflows is not null then format(' and e.workflow_id = any(%L::uuid[])', v_workflows) else '' end,
        case when cardinality(v_triggers) = 1 then format(' and e.trigger = %L', v_triggers[1])
          when v_triggers is not null then format(' and e.trigger = any(%L::public.workflow_trigger[])', v_triggers) else '' end,
        v_key, v_direction, v_id, v_direction, p_limit + 1);
    end if;

    -- The entries are built from the first `limit` runs; one more says another page follows.
    execute format($q$
      with page as (
        select e.*, row_number() over (order by e.started_at %1$s, e.id %1$s) as n
        from (%2$s) as e
      )
      select json_agg(%3$s order by e.n) filter (where e.n <= %4$s), count(*),
        (array_agg(e.started_at) filter (where e.n = %4$s))[1], (array_agg(e.id) filter (where e.n = %4$s))[1]
      from page as e
      %5$s
      $q$, v_direction, v_rows,
      workflows_private.log_entry_expression(p_details = 'full', p_include_trace_spans, p_include_final_output), p_limit,
      case when p_details = 'full' then 'left join public.workflows w on w.id = e.workflow_id' else '' end)
    into v_data, v_found, v_last_started_at, v_last_id;
  end if;

  return json_build_object('status', 200, 'rateLimit', v_caller.rate, 'body', json_build_object(
    'data', coalesce(v_data, '[]'::json),
    'nextCursor', case when v_found > p_limit then json_build_object('startedAt', workflows_private.cursor_time(v_last_started_at), 'id', v_last_id) end,
    'limits', workflows_private.logs_limits(v_caller.meter, v_now)));
end;
$$;
comment on function public.workflow_logs_json(text, uuid, uuid[], uuid[], text[], text, timestamptz, timestamptz, uuid, integer, integer, numeric, numeric, text, integer, timestamptz, uuid, text, text, boolean, boolean)
  is 'GET /api/v1/logs as json text (what the endpoint calls): a filtered keyset page of a workspace''s logs for an API key, with the limits object; spends a logs API token. Service role only.';
/** GET /api/v1/logs as jsonb: workflow_logs_json's answer (see there), for SQL callers. */
create function public.workflow_logs(
  p_api_key text,
  p_workspace_id uuid,
  p_workflow_ids uuid[] default null,
  p_folder_ids uuid[] default null,
  p_triggers text[] default null,
  p_level text default null,
  p_start_date timestamptz default null,
  p_end_date timestamptz default null,
  p_execution_id uuid default null,
  p_min_duration_ms integer default null,
  p_max_duration_ms integer default null,
  p_min_cost numeric default null,
  p_max_cost numeric default null,
  p_model text default null,
  p_limit integer default 100,
  p_cursor_started_at timestamptz default null,
  p_cursor_id uuid default null,
  p_order text default 'desc',
  p_details text default 'basic',
  p_include_trace_spans boolean default false,
  p_include_final_output boolean default false
)
returns jsonb
language sql
set search_path = ''
as $$
  select public.workflow_logs_json(p_api_key, p_workspace_id, p_workflow_ids, p_folder_ids, p_triggers, p_level, p_start_date, p_end_date,
    p_execution_id, p_min_duration_ms, p_max_duration_ms, p_min_cost, p_max_cost, p_model, p_limit, p_cursor_started_at, p_cursor_id,
    p_order, p_details, p_include_trace_spans, p_include_final_output)::jsonb;
$$;
revoke execute on function
  public.workflow_logs(text, uuid, uuid[], uuid[], text[], text, timestamptz, timestamptz, uuid, integer, integer, numeric, numeric, text, integer, timestamptz, uuid, text, text, boolean, boolean),
  public.workflow_log_detail(text, uuid),
  public.workflow_execution_detail(text, uuid),
  workflows_private.record_execution_models(),
  workflows_private.admit_logs_request(text, timestamptz),
  workflows_private.logs_limits(workflows_private.account_meters, timestamptz),
  workflows_private.cursor_time(timestamptz),
  workflows_private.readable_run(workflows_private.logs_caller, uuid),
  workflows_private.run_error(public.workflow_run_status, text, text, jsonb),
  workflows_private.run_final_output(public.workflow_run_status, jsonb)
  from public, anon, authenticated, service_role;
grant execute on function
  public.workflow_logs(text, uuid, uuid[], uuid[], text[], text, timestamptz, timestamptz, uuid, integer, integer, numeric, numeric, text, integer, timestamptz, uuid, text, text, boolean, boolean),
  public.workflow_log_detail(text, uuid),
  public.workflow_execution_detail(text, uuid)
  to service_role;
comment on function public.workflow_logs(text, uuid, uuid[], uuid[], text[], text, timestamptz, timestamptz, uuid, integer, integer, numeric, numeric, text, integer, timestamptz, uuid, text, text, boolean, boolean)
  is 'GET /api/v1/logs: a filtered keyset page of a workspace''s logs for an API key, with the limits object; spends a logs API token. Service role only.';
-- Access -------------------------------------------------------------------------------------------

revoke execute on function
  public.workflow_logs_json(text, uuid, uuid[], uuid[], text[], text, timestamptz, timestamptz, uuid, integer, integer, numeric, numeric, text, integer, timestamptz, uuid, text, text, boolean, boolean)
  from public, anon, authenticated, service_role;
grant execute on function
  public.workflow_logs_json(text, uuid, uuid[], uuid[], text[], text, timestamptz, timestamptz, uuid, integer, integer, numeric, numeric, text, integer, timestamptz, uuid, text, text, boolean, boolean)
  to service_role;
comment on index public.workflow_executions_workflow_error_durations_idx is
  'Logs API: a workflow''s errors by duration (minDurationMs/maxDurationMs with level=error), for rare slow-error pages.';
