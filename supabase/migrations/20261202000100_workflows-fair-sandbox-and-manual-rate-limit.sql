-- Workflows: what the sandbox needs to share its threads fairly between tenants, and manual runs
-- under the same rate limit as every other synchronous run (issue 29, finding 2).
--
-- 1. The execution context admit and claim return names the billing account the run is charged
--    to (`workflow.billingAccountId`): the sandbox pool holds each account to its share of the
--    threads, so one tenant's parallel of spinning Functions cannot starve everyone else's.
-- 2. Manual runs spend a token of the synchronous bucket, as API, webhook and chat runs do. They
--    had no rate limit at all, so a signed-in editor could start spinning runs without bound.

-- The execution context ------------------------------------------------------------------------

/**
 * What a run needs to execute, as admit and claim return it: run (with the trigger block it starts
 * from when one was recorded), workflow (with the billing account it is charged to), deployment or
 * snapshot, environment.
 */
create or replace function workflows_private.run_payload(
  p_run public.workflow_executions, p_workflow_name text, p_deployment jsonb, p_snapshot jsonb, p_environment jsonb
)
returns jsonb
language plpgsql
immutable
set search_path = ''
as $$
begin
  return jsonb_build_object(
    'executionId', p_run.id,
    'runStatus', p_run.status,
    'trigger', p_run.trigger,
    'mode', p_run.mode,
    'attempt', p_run.attempt,
    'leaseExpiresAt', p_run.lease_expires_at,
    'input', p_run.input,
    'workflow', jsonb_build_object('id', p_run.workflow_id, 'name', p_workflow_name, 'workspaceId', p_run.workspace_id,
      'billingAccountId', p_run.billing_account_id),
    'deployment', p_deployment,
    'snapshot', p_snapshot,
    'environment', p_environment)
    || case when p_run.trigger_block_id is null then '{}'::jsonb else jsonb_build_object('triggerBlockId', p_run.trigger_block_id) end;
end;
$$;
comment on function workflows_private.run_payload(public.workflow_executions, text, jsonb, jsonb, jsonb) is 'The execution context admit and claim return: run (with its trigger block when one was recorded), workflow with its billing account, deployment or snapshot, environment.';

-- Admit: manual runs rate-limited ---------------------------------------------------------------

/**
 * Admits a run: one round trip between parsing a request and executing it. Checks, in this order
 * (the first that fails is the answer):
 *   1. the caller: an API key (`p_api_key`, required for the api trigger, 401 UNAUTHORIZED when
 *      missing, unknown or revoked) or, for manual runs, the user the edge function verified
 *      (`p_user_id`, 401 without). Webhook, schedule and chat runs may come with neither: the
 *      function vouches for them (webhook secret, schedule, chat deployment);
 *   2. the workflow exists and the caller sees its workspace (404 NOT_FOUND otherwise, whether it
 *      does not exist or belongs to a workspace the caller is not in);
 *   3. the caller may run it: editor or above for a personal key or a user; a workspace key runs
 *      its own workspace's workflows (403 FORBIDDEN);
 *   4. a repeated Idempotency-Key answers from the first execution (or 409), see idempotent_replay;
 *   5. the workflow has an active deployment (403 NOT_DEPLOYED), except manual runs, which run the draft;
 *   6. the usage limit of the workspace's billing account (402 USAGE_LIMIT_EXCEEDED);
 *   7. the rate limit: sync or async bucket by `p_mode`, manual runs in the sync bucket; schedule
 *      runs, which the schedule itself paces, have none (429 RATE_LIMIT_EXCEEDED with retryAfter
 *      seconds).
 * Then it records the run (`running` for sync, `queued` and sent to the queue for async), charges
 * the base price to the account's open period and returns the run. Arguments the edge function
 * should have validated (trigger, mode, lease) raise 22023.
 */
create or replace function public.admit_workflow_run(
  p_workflow_id uuid,
  p_trigger text default 'api',
  p_mode text default 'sync',
  p_api_key text default null,
  p_user_id uuid default null,
  p_input jsonb default null,
  p_idempotency_key text default null,
  p_request_hash text default null,
  p_cached_deployment_ids uuid[] default null,
  p_environment_version bigint default null,
  p_lease_seconds integer default 360
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := now();
  v_key public.api_keys;
  v_workflow_name text;
  v_workspace uuid;
  v_account uuid;
  v_role text;
  v_deployment jsonb;
  v_environment_version bigint;
  v_access text;
  v_existing workflows_private.idempotency_keys;
  v_snapshot public.workflow_execution_snapshots;
  v_execution_id uuid := gen_random_uuid();
  v_bucket text := case when p_trigger = 'schedule' then null else p_mode end;
  v_spend workflows_private.spend_outcome;
  v_rate jsonb;
  v_usage jsonb;
  v_message_id bigint;
  v_run public.workflow_executions;
begin
  if p_trigger is null or p_trigger not in ('manual', 'api', 'webhook', 'schedule', 'chat')
    or p_mode is null or p_mode not in ('sync', 'async') or (p_trigger = 'manual' and p_mode <> 'sync')
    or p_lease_seconds is null or p_lease_seconds not between 1 and 86400 then
    raise exception 'admit_workflow_run: trigger must be manual, api, webhook, schedule or chat; mode sync or async (manual runs are sync); lease 1 to 86400 s'
      using errcode = '22023';
  end if;

  -- 1. Who is asking.
  if p_api_key is not null or p_trigger = 'api' then
    v_key := workflows_private.authenticate_api_key(p_api_key);
    if v_key.id is null then
      return workflows_private.api_key_refusal(p_api_key);
    end if;
  elsif p_trigger = 'manual' and p_user_id is null then
    return workflows_private.refusal(401, 'UNAUTHORIZED', 'Sign in to run workflows');
  end if;

  -- 2. and 3. The workflow and whether the caller may run it; with what it runs and the
  -- environment version, in one query.
  select w.name, w.workspace_id, ws.billing_account_id, m.role,
    case when d.id is not null then jsonb_build_object('id', d.id, 'version', d.version)
      || case when p_mode = 'async' or d.id = any(p_cached_deployment_ids) then '{}'::jsonb else jsonb_build_object('state', d.state) end end,
    coalesce(ev.version, 0)
  into v_workflow_name, v_workspace, v_account, v_role, v_deployment, v_environment_version
  from public.workflows w
  join public.workspaces ws on ws.id = w.workspace_id
  left join public.workspace_members m on m.workspace_id = w.workspace_id and m.user_id = coalesce(v_key.user_id, p_user_id)
  left join public.workflow_deployments d on d.workflow_id = w.id and d.is_active and p_trigger <> 'manual'
  left join workflows_private.environment_versions ev on ev.workspace_id = w.workspace_id
  where w.id = p_workflow_id;
  if found and (v_key.id is not null or p_user_id is not null) then
    v_access := workflows_private.access_verdict(v_key, v_role, v_workspace, 'editor');
  end if;
  if v_workspace is null or v_access = 'not_found' then
    return workflows_private.refusal(404, 'NOT_FOUND', format('Workflow %s not found', p_workflow_id));
  end if;
  if v_access = 'forbidden' then
    return workflows_private.refusal(403, 'FORBIDDEN',
      case when v_key.id is not null then 'This API key may not run workflows of this workspace: its user needs the editor role or above'
        else 'Only a workspace editor or above may run workflows' end);
  end if;

  -- 4. A repeated request.
  if p_idempotency_key is not null then
    if char_length(p_idempotency_key) not between 1 and 255 then
      return workflows_private.refusal(400, 'INVALID_IDEMPOTENCY_KEY', 'Idempotency-Key must be 1 to 255 characters');
    end if;
    select * into v_existing from workflows_private.idempotency_keys k
    where k.workflow_id = p_workflow_id and k.key = p_idempotency_key and k.created_at > v_now - interval '24 hours';
    if found then
      return workflows_private.idempotent_replay(v_existing, p_request_hash);
    end if;
  end if;

  -- 5. What runs: the active deployment, or the draft for manual runs.
  if p_trigger = 'manual' then
    v_snapshot := workflows_private.draft_snapshot(p_workflow_id);
  elsif v_deployment is null then
    return workflows_private.refusal(403, 'NOT_DEPLOYED', format('Workflow "%s" is not deployed: deploy it before running it from a trigger', v_workflow_name));
  end if;

  -- Claim the Idempotency-Key before charging: of two concurrent requests with the same key, the
  -- second waits here for the first to commit and then answers as its replay.
  if p_idempotency_key is not null then
    insert into workflows_private.idempotency_keys as k (workflow_id, key, request_hash, execution_id, created_at)
    values (p_workflow_id, p_idempotency_key, p_request_hash, v_execution_id, v_now)
    on conflict (workflow_id, key) do update
      set request_hash = excluded.request_hash, execution_id = excluded.execution_id, created_at = excluded.created_at
      where k.created_at <= v_now - interval '24 hours';
    if not found then
      select * into v_existing from workflows_private.idempotency_keys k where k.workflow_id = p_workflow_id and k.key = p_idempotency_key;
      return workflows_private.idempotent_replay(v_existing, p_request_hash);
    end if;
  end if;

  -- 6. and 7. Usage and rate limit, and the base charge, in one update of the account's meter.
  v_spend := workflows_private.spend(v_account, v_bucket, true, 0, v_now);
  if v_bucket is not null then
    v_rate := workflows_private.rate_limit_state(v_spend.meter, v_bucket, v_now);
  end if;
  v_usage := workflows_private.usage_state(v_spend.meter);
  if v_spend.refusal is not null then
    if p_idempotency_key is not null then
      delete from workflows_private.idempotency_keys k where k.workflow_id = p_workflow_id and k.key = p_idempotency_key and k.execution_id = v_execution_id;
    end if;
    if v_spend.refusal = 'usage' then
      return workflows_private.refusal(402, 'USAGE_LIMIT_EXCEEDED',
        format('The usage limit of this workspace''s billing account ($%s this period) is reached; runs resume when the period ends or the limit rises',
          v_usage ->> 'limit'),
        jsonb_build_object('usage', v_usage, 'rateLimit', v_rate));
    end if;
    return workflows_private.refusal(429, 'RATE_LIMIT_EXCEEDED',
      format('Rate limit exceeded: %s %s runs a minute; retry in %s s', v_rate ->> 'limit', v_bucket, v_rate ->> 'retryAfter'),
      jsonb_build_object('retryAfter', (v_rate ->> 'retryAfter')::integer, 'rateLimit', v_rate, 'usage', v_usage));
  end if;

  -- The run and its base charge, in one statement.
  if p_mode = 'async' then
    select * into v_message_id from pgmq.send('workflow_runs', jsonb_build_object('executionId', v_execution_id));
  end if;
  with run as (
    insert into public.workflow_executions (
      id, workspace_id, workflow_id, billing_account_id, deployment_id, deployment_version, snapshot_id, trigger, mode, status,
      api_key_id, triggered_by, input, created_at, started_at, lease_expires_at, attempt, queue_message_id, cost_total
    ) values (
      v_execution_id, v_workspace, p_workflow_id, v_account, (v_deployment ->> 'id')::uuid, (v_deployment ->> 'version')::integer,
      v_snapshot.id, p_trigger::public.workflow_trigger, p_mode::public.workflow_run_mode,
      case p_mode when 'sync' then 'running'::public.workflow_run_status else 'queued'::public.workflow_run_status end,
      v_key.id, coalesce(v_key.user_id, p_user_id), case when p_mode = 'async' then p_input end, v_now,
      case when p_mode = 'sync' then v_now end,
      -- A queued run must start within 24 hours; a running one is alive until its lease ends.
      v_now + case when p_mode = 'sync' then make_interval(secs => p_lease_seconds) else interval '24 hours' end,
      case when p_mode = 'sync' then 1 else 0 end, v_message_id, (v_spend.meter).execution_charge
    )
    returning *
  ),
  charge as (
    insert into public.usage_ledger (execution_id, kind, billing_account_id, period_id, workspace_id, workflow_id, amount, created_at)
    select run.id, 'execution', run.billing_account_id, (v_spend.meter).period_id, run.workspace_id, run.workflow_id, run.cost_total, v_now
    from run
  )
  select * into v_run from run;
  if (v_spend.meter).bills_overage then
    perform workflows_private.bill_threshold_if_due(v_spend.meter, v_now);
  end if;

  if p_mode = 'async' then
    return jsonb_build_object('status', 202, 'outcome', 'admitted', 'executionId', v_execution_id, 'runStatus', 'queued',
      'trigger', p_trigger, 'mode', p_mode, 'createdAt', v_now,
      'workflow', jsonb_build_object('id', p_workflow_id, 'name', v_workflow_name, 'workspaceId', v_workspace),
      'rateLimit', v_rate, 'usage', v_usage);
  end if;
  return jsonb_build_object('status', 200, 'outcome', 'admitted', 'createdAt', v_now, 'rateLimit', v_rate, 'usage', v_usage)
    || workflows_private.run_payload(v_run, v_workflow_name, v_deployment,
      case when v_snapshot.id is not null then jsonb_build_object('id', v_snapshot.id, 'state', v_snapshot.state) end,
      workflows_private.environment_payload(v_workspace, v_environment_version, p_environment_version));
end;
$$;
comment on function public.admit_workflow_run(uuid, text, text, text, uuid, jsonb, text, text, uuid[], bigint, integer) is 'Admits a workflow run in one call: authentication, access, idempotency, deployment, usage and rate limits, the run record and everything it needs. Service role only; refusals are returned, not raised.';
