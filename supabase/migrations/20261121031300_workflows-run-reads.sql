-- Workflow service, part 2: what API-key holders may ask about runs and limits, each one call:
--
-- - workflow_job_status:       GET /api/jobs/{executionId}
-- - workflow_usage_limits:     GET /api/users/me/usage-limits
-- - workflow_deployment_status: GET /api/workflows/{id}/status
--
-- Each answers {status: 200, body: <the HTTP body>} or a refusal {status, outcome: refused, code,
-- error}. Service role only: the edge function passes the X-API-Key it received (or the user it
-- verified). They are volatile, not stable: authenticating a key may touch its last_used_at.

/** GET /api/jobs/{executionId} (docs/workflow-runs.md), with `metadata.parkedUntil` while a run is parked (its status stays running). */
create function public.workflow_job_status(p_execution_id uuid, p_api_key text default null, p_user_id uuid default null)
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
    return workflows_private.missing_run_refusal(v_key, p_user_id, p_execution_id, null,
      workflows_private.refusal(404, 'NOT_FOUND', format('Job %s not found', p_execution_id)));
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

/**
 * The billing account whose limits a caller sees: a workspace key's workspace's account; for a
 * personal key (or a user), of the accounts the user owns or belongs to through a workspace, the one
 * with the highest-priority plan (the spec's "highest-priority active plan"), preferring the user's
 * own on a tie. Null when the user has none.
 */
create function workflows_private.caller_meter(p_key public.api_keys, p_user_id uuid)
returns workflows_private.account_meters
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  v_user uuid := coalesce(p_key.user_id, p_user_id);
  v_meter workflows_private.account_meters;
begin
  if p_key.workspace_id is not null then
    select m.* into v_meter from public.workspaces w join workflows_private.account_meters m on m.billing_account_id = w.billing_account_id
    where w.id = p_key.workspace_id;
    return v_meter;
  end if;
  select m.* into v_meter
  from public.billing_accounts a
  join workflows_private.account_meters m on m.billing_account_id = a.id
  where a.owner_id = v_user
    or a.id in (select w.billing_account_id from public.workspaces w join public.workspace_members wm on wm.workspace_id = w.id where wm.user_id = v_user)
  order by m.priority desc, (a.owner_id = v_user) desc, a.created_at, a.id
  limit 1;
  return v_meter;
end;
$$;
comment on function workflows_private.caller_meter(public.api_keys, uuid) is 'The meter of the billing account whose limits the caller sees (highest-priority plan).';

/**
 * GET /api/users/me/usage-limits: the caller's execution rate limits (sync and async buckets, read
 * without spending) and the usage of the open period. Body: {success, rateLimit {sync {isLimited,
 * limit, remaining, resetAt}, async {…}, authType}, usage {currentPeriodCost, limit, plan}}.
 * `usage.limit` is the account's: individual for Free and Pro, pooled for Team and Enterprise. A user
 * with no billing account yet sees the Free plan's figures.
 */
create function public.workflow_usage_limits(p_api_key text default null, p_user_id uuid default null)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := now();
  v_key public.api_keys;
  v_meter workflows_private.account_meters;
  v_free public.billing_plans;
  v_sync jsonb;
  v_async jsonb;
begin
  -- A key when one is given, else the user the edge function verified.
  v_key := workflows_private.authenticate_api_key(p_api_key);
  if v_key.id is null and (p_api_key is not null or p_user_id is null) then
    return workflows_private.api_key_refusal(p_api_key);
  end if;
  v_meter := workflows_private.caller_meter(v_key, p_user_id);
  if v_meter.billing_account_id is null then
    select * into v_free from public.billing_plans p where p.plan = 'free';
    v_meter := row(null, v_free.plan, v_free.priority, 0, v_free.sync_per_minute, v_free.async_per_minute, v_free.logs_per_minute,
      v_free.usage_limit, v_free.included_usage, v_free.bills_overage, v_free.overage_threshold, v_free.execution_charge,
      v_free.subscription_price, v_free.price_per_seat, null, workflows_private.period_start_of(v_now),
      workflows_private.period_start_of(v_now) + interval '1 month', 0, 0,
      v_free.sync_per_minute, v_now, v_free.async_per_minute, v_now, v_free.logs_per_minute, v_now)::workflows_private.account_meters;
  end if;
  v_sync := workflows_private.rate_limit_state(v_meter, 'sync', v_now);
  v_async := workflows_private.rate_limit_state(v_meter, 'async', v_now);
  return jsonb_build_object('status', 200, 'body', jsonb_build_object(
    'success', true,
    'rateLimit', jsonb_build_object(
      'sync', jsonb_build_object('isLimited', v_sync -> 'isLimited', 'limit', v_sync -> 'limit', 'remaining', v_sync -> 'remaining', 'resetAt', v_sync -> 'resetAt'),
      'async', jsonb_build_object('isLimited', v_async -> 'isLimited', 'limit', v_async -> 'limit', 'remaining', v_async -> 'remaining', 'resetAt', v_async -> 'resetAt'),
      'authType', case when v_key.id is not null then 'api' else 'manual' end),
    'usage', jsonb_build_object('currentPeriodCost', trim_scale(v_meter.period_cost), 'limit', trim_scale(v_meter.usage_limit), 'plan', v_meter.plan)));
end;
$$;
comment on function public.workflow_usage_limits(text, uuid) is 'GET /api/users/me/usage-limits: rate-limit state (not spent) and period usage of the caller''s billing account. Service role only.';

/**
 * GET /api/workflows/{id}/status: {isDeployed, deployedAt, deployedVersion, needsRedeployment}:
 * whether a snapshot is active, since when, and whether the draft differs from it (the structural
 * diff of diff_workflow_deployment finds a difference; layout alone is no difference). For any
 * member of the workspace (personal key or user) or a key of the workspace; 404 otherwise.
 */
create function public.workflow_deployment_status(p_workflow_id uuid, p_api_key text default null, p_user_id uuid default null)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_key public.api_keys;
  v_workflow public.workflows;
  v_active public.workflow_deployments;
begin
  -- A key when one is given, else the user the edge function verified.
  v_key := workflows_private.authenticate_api_key(p_api_key);
  if v_key.id is null and (p_api_key is not null or p_user_id is null) then
    return workflows_private.api_key_refusal(p_api_key);
  end if;
  select * into v_workflow from public.workflows w where w.id = p_workflow_id;
  if not found or workflows_private.principal_access(v_key, p_user_id, v_workflow.workspace_id, 'viewer') <> 'allowed' then
    return workflows_private.refusal(404, 'NOT_FOUND', format('Workflow %s not found', p_workflow_id));
  end if;
  select * into v_active from public.workflow_deployments d where d.workflow_id = p_workflow_id and d.is_active;
  return jsonb_build_object('status', 200, 'body', jsonb_build_object(
    'isDeployed', v_active.id is not null,
    'deployedAt', v_active.activated_at,
    'deployedVersion', v_active.version,
    'needsRedeployment', v_active.id is not null and not (workflows_private.diff_states(v_active.state, v_workflow.state) ->> 'identical')::boolean));
end;
$$;
comment on function public.workflow_deployment_status(uuid, text, uuid) is 'GET /api/workflows/{id}/status: deployed or not, since when, and whether the draft has changed since. Service role only.';

-- Access -----------------------------------------------------------------------------------------

revoke execute on function
  public.workflow_job_status(uuid, text, uuid),
  public.workflow_usage_limits(text, uuid),
  public.workflow_deployment_status(uuid, text, uuid),
  workflows_private.caller_meter(public.api_keys, uuid)
  from public, anon, authenticated, service_role;
grant execute on function
  public.workflow_job_status(uuid, text, uuid),
  public.workflow_usage_limits(text, uuid),
  public.workflow_deployment_status(uuid, text, uuid)
  to service_role;
-- No PUBLIC EXECUTE in workflows_private ----------------------------------------------------------
-- Per-schema default privileges can only add to the global defaults, never take away from them, so
-- `alter default privileges in schema workflows_private revoke execute on functions from public`
-- does nothing: every function created there starts with PUBLIC's EXECUTE. This revokes it from
-- every function of the schema that exists by now; the explicit grants (authenticated for the
-- helpers the row-level security policies call, authenticated and service_role for the validator
-- the save trigger runs) stay. Trigger functions need no EXECUTE to fire. A function added to
-- workflows_private in a later migration must revoke EXECUTE from public itself;
-- supabase/tests/database/32-workflows-private-execute.test.sql names any that does not.

do $$
declare
  v_function regprocedure;
begin
  for v_function in
    select p.oid::regprocedure from pg_catalog.pg_proc p
    where p.pronamespace = 'workflows_private'::regnamespace
  loop
    execute format('revoke execute on function %s from public, anon', v_function);
  end loop;
end;
$$;
