-- Workflow service, part 4: a leaner GET /api/v1/logs page (the logs API itself is in
-- 20261123160000_workflows-logs.sql; the answers are the same).
--
-- Profiled at a million runs (docs/performance.md, "Logs API"), workflow_logs() spent about 3 ms of
-- backend CPU on a page that the bare keyset query reads in 0.3 ms, and reading the page was not what
-- cost: planning the per-request query took under 0.1 ms. Most of it went on jsonb. Each entry was
-- built with jsonb_build_object and concatenated twice with `||` (even when nothing was added),
-- aggregated with jsonb_agg, then copied whole three more times: into the page object, into the
-- body, into the answer. jsonb nests by walking and re-encoding what it wraps, so each level cost
-- about as much as building the page again.
--
-- Now an entry is one json_build_object, written for the detail mode asked for (one definition,
-- log_entry_expression, serves the list and the detail endpoint), and a page is json text, which
-- nests by copying text:
--
-- - workflow_logs_json: GET /api/v1/logs as json, what the endpoint calls; the edge function parses
--   text either way, so it skips the conversion to jsonb and back altogether;
-- - workflow_logs: the same answer as jsonb (one conversion), for SQL callers, as before.
--
-- The page's keys are still read first, by the query assembled for the filters given, so nothing
-- changes in how the indexes are used.

-- Log entries ----------------------------------------------------------------------------------------

/**
 * The SQL expression of a log entry of the run `e` (with its workflow `w` in full mode), as json:
 * the spec's basic fields (id, workflowId, executionId, level, trigger, startedAt, endedAt,
 * totalDurationMs, cost {total}, files); with `p_full` the whole cost object and the workflow {id,
 * name, description}; `executionData` with `traceSpans` and/or `finalOutput` when asked for. Text
 * for a query to embed, so each mode builds its entry with one json_build_object and no call per
 * row; every value inside is a column or a function of columns, never caller input.
 */
create function workflows_private.log_entry_expression(p_full boolean, p_trace_spans boolean, p_final_output boolean)
returns text
language sql
immutable
set search_path = ''
as $$
  select format('json_build_object(%s)', concat_ws(', ',
    $e$'id', e.id, 'workflowId', e.workflow_id, 'executionId', e.id, 'level', e.level, 'trigger', e.trigger,
      'startedAt', e.started_at, 'endedAt', e.ended_at, 'totalDurationMs', e.duration_ms, 'files', e.files$e$,
    case when p_full then $e$'cost', coalesce(e.cost, workflows_private.run_cost(e.cost_total, null)),
      'workflow', json_build_object('id', w.id, 'name', w.name, 'description', w.description)$e$
      else $e$'cost', json_build_object('total', trim_scale(e.cost_total))$e$ end,
    case when p_trace_spans or p_final_output then format($e$'executionData', json_build_object(%s)$e$, concat_ws(', ',
      case when p_trace_spans then $e$'traceSpans', coalesce(e.trace_spans, '[]'::jsonb)$e$ end,
      case when p_final_output then $e$'finalOutput', e.output$e$ end)) end));
$$;
comment on function workflows_private.log_entry_expression(boolean, boolean, boolean) is 'The json expression of a logs API entry of run e (workflow w) for a detail mode, for the logs queries to embed.';

-- The list and the detail endpoint now embed log_entry_expression.
drop function workflows_private.log_entry(public.workflow_executions, public.workflows, boolean, boolean, boolean);

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
create or replace function public.workflow_logs(
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

-- GET /api/v1/logs/{id} ------------------------------------------------------------------------------

/**
 * GET /api/v1/logs/{id}: {status: 200, body: {data: <log detail>, limits}, rateLimit}. The detail is
 * a full log entry with executionData {traceSpans, finalOutput}. 401, 429, or 404 NOT_FOUND for a
 * log the key may not read.
 */
create or replace function public.workflow_log_detail(p_api_key text, p_id uuid)
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
  v_run := workflows_private.readable_log(v_caller, p_id);
  if v_run.id is null then
    return workflows_private.refusal(404, 'NOT_FOUND', format('Log %s not found', p_id), jsonb_build_object('rateLimit', v_caller.rate));
  end if;
  execute format('select %s from (select ($1).*) as e left join public.workflows w on w.id = e.workflow_id',
    workflows_private.log_entry_expression(true, true, true))
  into v_entry using v_run;
  return jsonb_build_object('status', 200, 'rateLimit', v_caller.rate, 'body', jsonb_build_object(
    'data', v_entry,
    'limits', workflows_private.logs_limits(v_caller.meter, v_now)));
end;
$$;

-- Access -------------------------------------------------------------------------------------------

revoke execute on function
  public.workflow_logs_json(text, uuid, uuid[], uuid[], text[], text, timestamptz, timestamptz, uuid, integer, integer, numeric, numeric, text, integer, timestamptz, uuid, text, text, boolean, boolean),
  workflows_private.log_entry_expression(boolean, boolean, boolean)
  from public, anon, authenticated, service_role;
grant execute on function
  public.workflow_logs_json(text, uuid, uuid[], uuid[], text[], text, timestamptz, timestamptz, uuid, integer, integer, numeric, numeric, text, integer, timestamptz, uuid, text, text, boolean, boolean)
  to service_role;
