-- Workflow service, part 2: the run lifecycle in SQL, one round trip per step, so an edge function
-- is parse → admit → execute → finish (and an async worker claim → execute → finish):
--
-- - admit_workflow_run: authenticates the caller, checks access, the deployment, idempotency, the
--   usage limit and the rate limit, records the run (and queues it, for async runs) and returns
--   everything the run needs. Refusals are answers, not exceptions.
-- - finish_workflow_run: records how the run ended, prices its model usage, charges it, bills a
--   reached threshold. Idempotent: the second finish of a run changes nothing.
-- - claim_workflow_runs / heartbeat_workflow_run: the async worker's side: take queued runs (a run
--   whose worker died is taken again under the same execution id), keep a long run's lease.
-- - cancel_workflow_run, and the sweeper that fails runs whose worker is gone (pg_cron, every minute).
--
-- All of them are security definer and executable by the service role only: the edge functions
-- call them after (or instead of) authenticating the request themselves. docs/workflow-runs.md
-- describes every argument and answer.

-- Helpers ----------------------------------------------------------------------------------------

/** A refusal: what the endpoint answers ({error, code} with its HTTP status), plus extras. */
create function workflows_private.refusal(p_status integer, p_code text, p_error text, p_extra jsonb default '{}'::jsonb)
returns jsonb
language plpgsql
immutable
set search_path = ''
as $$
begin
  return jsonb_build_object('status', p_status, 'outcome', 'refused', 'code', p_code, 'error', p_error) || p_extra;
end;
$$;
comment on function workflows_private.refusal(integer, text, text, jsonb) is 'The answer of a refused request: {status, outcome: refused, code, error, ...extras}.';

/**
 * The 401 answer for a request whose API key is missing (null or blank) or authenticates nothing
 * (unknown or revoked), saying which.
 */
create function workflows_private.api_key_refusal(p_api_key text)
returns jsonb
language plpgsql
immutable
set search_path = ''
as $$
begin
  if p_api_key is null or btrim(p_api_key) = '' then
    return workflows_private.refusal(401, 'UNAUTHORIZED', 'API key required: send it in the X-API-Key header');
  end if;
  return workflows_private.refusal(401, 'UNAUTHORIZED', 'Invalid API key: it does not exist or was revoked');
end;
$$;
comment on function workflows_private.api_key_refusal(text) is 'The 401 refusal for a missing or invalid API key.';

/**
 * The spec's cost object of a run: {total, base, input, output, tokens {prompt, completion, total},
 * models {...}} from its base charge and its priced model usage (price_model_usage; null when it
 * used no model).
 */
create function workflows_private.run_cost(p_base numeric, p_models jsonb)
returns jsonb
language plpgsql
immutable
set search_path = ''
as $$
begin
  return coalesce(p_models, jsonb_build_object('input', 0, 'output', 0, 'tokens', jsonb_build_object('prompt', 0, 'completion', 0, 'total', 0), 'models', '{}'::jsonb))
    || jsonb_build_object('total', trim_scale(p_base + coalesce((p_models ->> 'total')::numeric, 0)), 'base', trim_scale(p_base));
end;
$$;
comment on function workflows_private.run_cost(numeric, jsonb) is 'The spec''s cost object from a run''s base charge and its priced model usage.';

/**
 * Ends a run that will not finish normally, and clears its parking; a waiting run stops waiting and
 * a run holding concurrency slots gives them back (starting the next waiter).
 */
create function workflows_private.close_run(p_execution_id uuid, p_status text, p_code text, p_message text, p_now timestamptz)
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
  delete from workflows_private.run_waiters w where w.execution_id = p_execution_id;
  perform workflows_private.release_slots(p_execution_id);
end;
$$;
comment on function workflows_private.close_run(uuid, text, text, text, timestamptz) is 'Closes a run that will not finish normally (failed or cancelled), keeping its base charge, drops its queue message and its place among waiters, and gives back its concurrency slots.';

/** A draft state without editor layout (block positions): what manual-run snapshots hash and keep. */
create function workflows_private.state_without_layout(p_state jsonb)
returns jsonb
language plpgsql
immutable
set search_path = ''
as $$
begin
  if jsonb_typeof(p_state -> 'blocks') is distinct from 'object' then
    return p_state;
  end if;
  return jsonb_set(p_state, '{blocks}', coalesce(
    (select jsonb_object_agg(b.key, case when jsonb_typeof(b.value) = 'object' then b.value - 'position' else b.value end) from jsonb_each(p_state -> 'blocks') b),
    '{}'::jsonb));
end;
$$;
comment on function workflows_private.state_without_layout(jsonb) is 'The state with every block''s position removed.';

/**
 * The snapshot of a workflow's current draft, stored once per distinct content. New content is
 * validated in deploy mode as it is stored (workflows_private.snapshot_issues): the draft was saved
 * in save mode, and a run needs what a deploy needs (an enabled trigger). A snapshot never
 * changes, so a draft run again costs no second validation.
 */
create function workflows_private.draft_snapshot(p_workflow_id uuid)
returns public.workflow_execution_snapshots
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_snapshot public.workflow_execution_snapshots;
  v_state jsonb;
  v_workspace uuid;
  v_hash bytea;
begin
  select workflows_private.state_without_layout(w.state), w.workspace_id into v_state, v_workspace from public.workflows w where w.id = p_workflow_id;
  v_hash := pg_catalog.sha256(pg_catalog.convert_to(v_state::text, 'UTF8'));
  select * into v_snapshot from public.workflow_execution_snapshots s where s.workflow_id = p_workflow_id and s.state_hash = v_hash;
  if found then
    return v_snapshot;
  end if;
  -- Two first runs of the same content at once both get here; the unique key keeps one snapshot.
  insert into public.workflow_execution_snapshots (workflow_id, workspace_id, state_hash, state)
  values (p_workflow_id, v_workspace, v_hash, v_state)
  on conflict (workflow_id, state_hash) do update set state_hash = excluded.state_hash
  returning * into v_snapshot;
  insert into workflows_private.snapshot_issues (snapshot_id, issues)
  values (v_snapshot.id, workflows_private.state_issues(v_state, 'deploy'))
  on conflict (snapshot_id) do nothing;
  return v_snapshot;
end;
$$;
comment on function workflows_private.draft_snapshot(uuid) is 'Stores (or finds) the content-hashed snapshot of a workflow''s draft, validating new content in deploy mode once.';

/**
 * A manual run's snapshot as admit and claim hand it over: id, state and the issues that keep it
 * from running (draft_snapshot's). The edge function refuses a run with any (400 INVALID_WORKFLOW,
 * listing them) and validates nothing itself.
 */
create function workflows_private.snapshot_payload(p_snapshot public.workflow_execution_snapshots)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select jsonb_build_object('id', p_snapshot.id, 'state', p_snapshot.state,
    'issues', (select i.issues from workflows_private.snapshot_issues i where i.snapshot_id = p_snapshot.id));
$$;
comment on function workflows_private.snapshot_payload(public.workflow_execution_snapshots) is 'A manual run''s snapshot for the run payload: id, state and its deploy-mode validation issues.';

/**
 * What a run needs to execute, as admit and claim return it: run (with the trigger block it starts
 * from when one was recorded), workflow (with the billing account it is charged to), deployment or
 * snapshot, environment, and its trace context (so outbound calls carry `traceparent`).
 */
create function workflows_private.run_payload(
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
    'environment', p_environment,
    'trace', jsonb_strip_nulls(jsonb_build_object('traceId', p_run.trace_id, 'spanId', p_run.trace_span_id,
      'parentSpanId', p_run.trace_parent_span_id, 'traceState', p_run.trace_state)))
    || case when p_run.trigger_block_id is null then '{}'::jsonb else jsonb_build_object('triggerBlockId', p_run.trigger_block_id) end;
end;
$$;
comment on function workflows_private.run_payload(public.workflow_executions, text, jsonb, jsonb, jsonb) is 'The execution context admit and claim return: run (with its trigger block when one was recorded), workflow with its billing account, deployment or snapshot, environment.';

/**
 * The answer to a repeated Idempotency-Key (docs/workflow-runs.md). A sync
 * first request whose lease has run out (its edge function died) is ended here, as the sweeper
 * would end it (failed, WORKER_LOST), and answered from that ending instead of 409
 * IDEMPOTENCY_KEY_IN_USE. A finish in flight holds the row lock: it is waited for, and wins.
 */
create function workflows_private.idempotent_replay(p_key workflows_private.idempotency_keys, p_request_hash text)
returns jsonb
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_run public.workflow_executions;
  v_paused boolean;
begin
  if p_key.request_hash is distinct from p_request_hash then
    return workflows_private.refusal(409, 'IDEMPOTENCY_KEY_REUSED',
      'This Idempotency-Key was already used with a different request body; use a new key for a new request',
      jsonb_build_object('executionId', p_key.execution_id));
  end if;
  select * into v_run from public.workflow_executions e where e.id = p_key.execution_id;
  if v_run.mode = 'sync' and v_run.status in ('queued', 'running') and v_run.lease_expires_at < now() then
    select * into v_run from public.workflow_executions e where e.id = p_key.execution_id for update;
    if v_run.status in ('queued', 'running') and v_run.lease_expires_at < now() and workflows_private.end_expired_run(v_run, now()) then
      select * into v_run from public.workflow_executions e where e.id = p_key.execution_id;
    end if;
  end if;
  if v_run.mode = 'sync' and v_run.status in ('queued', 'running') then
    return workflows_private.refusal(409, 'IDEMPOTENCY_KEY_IN_USE',
      'A request with this Idempotency-Key is still running; retry when it has finished',
      jsonb_build_object('executionId', v_run.id));
  end if;
  -- A sync request answered paused at an approval handed its run to the async path
  -- (pause_sync_workflow_run, …033150_workflows-sync-pause.sql), keeping that answer: the only async
  -- run with a response. Its retry is answered as the sync request it was: that answer while the run
  -- goes on, the run's ending (its output, or its failure) once it has ended.
  v_paused := v_run.mode = 'async' and v_run.response is not null;
  return jsonb_build_object(
    'status', case
      when v_paused and v_run.ended_at is null then (v_run.response ->> 'status')::integer
      when v_run.mode = 'async' and not v_paused then 202
      when v_run.response ? 'status' and not v_paused then (v_run.response ->> 'status')::integer
      when v_run.status = 'completed' then 200
      when v_run.error_code = 'RUN_TIMEOUT' then 408
      else 500 end,
    'outcome', 'replay',
    'executionId', v_run.id,
    'runStatus', v_run.status,
    'mode', case when v_paused then 'sync' else v_run.mode::text end,
    'response', case when v_paused and v_run.ended_at is not null then null else v_run.response end,
    'output', v_run.output,
    'error', case when v_run.error_code is null then null
      else jsonb_build_object('message', v_run.error_message, 'code', v_run.error_code, 'failedBlock', v_run.failed_block) end,
    'createdAt', v_run.created_at);
end;
$$;
comment on function workflows_private.idempotent_replay(workflows_private.idempotency_keys, text) is 'Answers a repeated Idempotency-Key from the first execution (ending a sync one whose lease ran out), or refuses with 409.';

/** Bills a threshold invoice when the meter (just updated under its row lock) says one is due. */
create function workflows_private.bill_threshold_if_due(p_meter workflows_private.account_meters, p_now timestamptz)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  if p_meter.bills_overage
    and greatest(0, p_meter.period_cost - p_meter.included_usage) - p_meter.billed_overage >= p_meter.overage_threshold then
    perform workflows_private.bill_threshold(p_meter.billing_account_id, p_now);
  end if;
end;
$$;
comment on function workflows_private.bill_threshold_if_due(workflows_private.account_meters, timestamptz) is 'Cheap check on a just-updated meter; calls bill_threshold when the unbilled overage reached the threshold.';

-- Admit ------------------------------------------------------------------------------------------

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
 *      seconds);
 *   8. the account's concurrent runs (…034000_workflows-concurrency.sql): a sync run takes a slot or
 *      is refused (429 CONCURRENCY_LIMIT_EXCEEDED with retryAfter, checked before 6 and 7 so a
 *      refused run spends nothing); an async run takes one or waits (admitted, without a queue
 *      message, as a waiter that a release starts). The same for the concurrency key of the
 *      workflow's flow control (…034100_workflows-flow-control.sql), resolved over the trigger's
 *      input, with 429 CONCURRENCY_KEY_LIMIT_EXCEEDED; its priority ranks the run among waiters.
 * Then it records the run (`running` for sync, `queued` and sent to the queue for async), with its
 * input whatever the mode (re-runs need it), charges the base price to the account's open period and
 * returns the run. Arguments the edge function should have validated (trigger, mode, lease) raise 22023.
 *
 * A re-run (`p_rerun_of`, POST /api/v2/runs/{runId}/rerun; sync, api trigger, no workflow id) names
 * the run it re-runs instead of a workflow: check 2 is that run's workflow (404 "Run … not found"
 * for a run the caller may not see), then workflows_private.rerun_refusal's checks, and check 5 is
 * the deployment the original ran (410 DEPLOYMENT_GONE), whether or not it is still the active one.
 * The re-run keeps the original's trigger and trigger block, takes its input unless `p_input` gives
 * a new one, spends the sync bucket and is linked to it (rerun_of); with `p_rerun_from_block` its
 * answer also holds the original's completed checkpoints, for the executor to replay.
 *
 * `p_trace` is the caller's W3C trace context when it sent a valid `traceparent` ({traceId,
 * parentSpanId, traceState}, checked by the edge function's propagator): the run joins that trace.
 * Without it the run starts a trace of its own (the columns' defaults, docs/tracing.md).
 */
create function public.admit_workflow_run(
  p_workflow_id uuid default null,
  p_trigger text default 'api',
  p_mode text default 'sync',
  p_api_key text default null,
  p_user_id uuid default null,
  p_input jsonb default null,
  p_idempotency_key text default null,
  p_request_hash text default null,
  p_cached_deployment_ids uuid[] default null,
  p_environment_version bigint default null,
  p_lease_seconds integer default 360,
  p_rerun_of uuid default null,
  p_rerun_from_block text default null,
  p_trace jsonb default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := now();
  v_workflow_id uuid := p_workflow_id;
  v_original public.workflow_executions;
  v_refusal jsonb;
  v_input jsonb := p_input;
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
  v_scopes text[];
  v_limits integer[];
  v_blocked text;
  v_flow jsonb;
  v_flow_key text;
  v_priority smallint;
begin
  if p_trigger is null or p_trigger not in ('manual', 'api', 'webhook', 'schedule', 'chat')
    or p_mode is null or p_mode not in ('sync', 'async') or (p_trigger = 'manual' and p_mode <> 'sync')
    or p_lease_seconds is null or p_lease_seconds not between 1 and 86400 then
    raise exception 'admit_workflow_run: trigger must be manual, api, webhook, schedule or chat; mode sync or async (manual runs are sync); lease 1 to 86400 s'
      using errcode = '22023';
  end if;
  if (p_workflow_id is null) = (p_rerun_of is null) or (p_rerun_of is not null and (p_trigger <> 'api' or p_mode <> 'sync' or p_idempotency_key is not null))
    or (p_rerun_from_block is not null and (p_rerun_of is null or p_input is not null)) then
    raise exception 'admit_workflow_run: a workflow, or the run a re-run re-runs (sync, api, no Idempotency-Key; fromBlock only with the original input)'
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

  if p_rerun_of is not null then
    select * into v_original from public.workflow_executions e where e.id = p_rerun_of;
    v_workflow_id := v_original.workflow_id;
  end if;

  -- 2. and 3. The workflow and whether the caller may run it; with what it runs and the
  -- environment version, in one query.
  select w.name, w.workspace_id, ws.billing_account_id, m.role,
    case when d.id is not null then jsonb_build_object('id', d.id, 'version', d.version)
      || case when p_mode = 'async' or d.id = any(p_cached_deployment_ids) then '{}'::jsonb else jsonb_build_object('state', d.state) end end,
    coalesce(ev.version, 0), d.flow_control
  into v_workflow_name, v_workspace, v_account, v_role, v_deployment, v_environment_version, v_flow
  from public.workflows w
  join public.workspaces ws on ws.id = w.workspace_id
  left join public.workspace_members m on m.workspace_id = w.workspace_id and m.user_id = coalesce(v_key.user_id, p_user_id)
  left join public.workflow_deployments d on d.workflow_id = w.id and d.is_active and p_trigger <> 'manual'
  left join workflows_private.environment_versions ev on ev.workspace_id = w.workspace_id
  where w.id = v_workflow_id;
  if found and (v_key.id is not null or p_user_id is not null) then
    v_access := workflows_private.access_verdict(v_key, v_role, v_workspace, 'editor');
  end if;
  if v_workspace is null or v_access = 'not_found' then
    -- A re-run of a run that expired answers 410 RUN_EXPIRED (docs/retention.md).
    return workflows_private.missing_run_refusal(v_key, p_user_id, p_rerun_of, null, workflows_private.refusal(404, 'NOT_FOUND',
      case when p_rerun_of is null then format('Workflow %s not found', p_workflow_id) else format('Run %s not found', p_rerun_of) end));
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

  -- 5. What runs: the active deployment, or the draft for manual runs (a new draft is validated
  -- here, before the account's meter is locked below); for a re-run, what its original ran.
  if p_rerun_of is not null then
    v_refusal := workflows_private.rerun_refusal(v_original, p_input is not null, p_rerun_from_block is not null);
    if v_refusal is not null then
      return v_refusal;
    end if;
    v_input := coalesce(p_input, v_original.input);
    select jsonb_build_object('id', d.id, 'version', d.version)
      || case when d.id = any(p_cached_deployment_ids) then '{}'::jsonb else jsonb_build_object('state', d.state) end,
      d.flow_control
    into v_deployment, v_flow
    from public.workflow_deployments d where d.id = v_original.deployment_id and d.workflow_id = v_workflow_id;
    if v_deployment is null then
      return workflows_private.refusal(410, 'DEPLOYMENT_GONE',
        format('Version %s of this workflow, which run %s ran, no longer exists', v_original.deployment_version, p_rerun_of));
    end if;
  elsif p_trigger = 'manual' then
    v_snapshot := workflows_private.draft_snapshot(p_workflow_id);
    v_flow := v_snapshot.state #> '{settings,flowControl}';
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

  -- 8. a slot (of the account, and of the flow control's key): a sync run without one answers 429
  -- before anything is spent; an async one waits (below). The key and priority are resolved over the trigger's input (…034100).
  if v_flow ? 'concurrency' then
    v_flow_key := workflows_private.resolve_flow_template(v_flow #>> '{concurrency,key}', v_input);
  end if;
  v_priority := workflows_private.resolve_flow_priority(v_flow -> 'priority', v_input);
  select s.scopes, s.limits into v_scopes, v_limits
  from workflows_private.run_scopes(v_account, v_workflow_id, v_flow_key, (v_flow #>> '{concurrency,limit}')::integer) s;
  -- Slots are locked before the account's meter in every mode, the order finish_workflow_run
  -- releases and spends in too: a sync and an async admission (or a finish) of one account never
  -- wait on each other crosswise, which deadlocked them when the async one spent first.
  v_blocked := workflows_private.acquire_slots(v_scopes, v_limits);
  if p_mode = 'sync' then
    if v_blocked is not null then
      if p_idempotency_key is not null then
        delete from workflows_private.idempotency_keys k where k.workflow_id = p_workflow_id and k.key = p_idempotency_key and k.execution_id = v_execution_id;
      end if;
      if v_blocked like 'key:%' then
        return workflows_private.refusal(429, 'CONCURRENCY_KEY_LIMIT_EXCEEDED',
          format('Concurrency limit reached for key "%s": this workflow runs at most %s runs of one key at once; retry when one has finished', v_flow_key, v_limits[2]),
          jsonb_build_object('retryAfter', 1, 'concurrency', jsonb_build_object('key', v_flow_key, 'limit', v_limits[2])));
      end if;
      return workflows_private.refusal(429, 'CONCURRENCY_LIMIT_EXCEEDED',
        format('Concurrency limit reached: this workspace''s billing account runs at most %s runs at once; retry when one has finished', v_limits[1]),
        jsonb_build_object('retryAfter', 1, 'concurrency', jsonb_build_object('limit', v_limits[1])));
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
    if v_blocked is null then
      -- The slot taken above, given back in the same transaction: no waiter can have seen it.
      update workflows_private.concurrency_slots c set in_use = c.in_use - 1 where c.scope = any(v_scopes);
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

  -- The run and its base charge, in one statement. An async run over a limit gets no queue message:
  -- it waits (8).
  if p_mode = 'async' then
    if v_blocked is null then
      select * into v_message_id from pgmq.send('workflow_runs', jsonb_build_object('executionId', v_execution_id));
    end if;
  end if;
  with run as (
    insert into public.workflow_executions (
      id, workspace_id, workflow_id, billing_account_id, deployment_id, deployment_version, snapshot_id, trigger, mode, status,
      api_key_id, triggered_by, input, created_at, started_at, lease_expires_at, attempt, queue_message_id, cost_total,
      trigger_block_id, rerun_of, rerun_from_block, trace_id, trace_parent_span_id, trace_state,
      concurrency_key, concurrency_key_limit, priority
    ) values (
      v_execution_id, v_workspace, v_workflow_id, v_account, (v_deployment ->> 'id')::uuid, (v_deployment ->> 'version')::integer,
      v_snapshot.id, coalesce(v_original.trigger, p_trigger::public.workflow_trigger), p_mode::public.workflow_run_mode,
      case p_mode when 'sync' then 'running'::public.workflow_run_status else 'queued'::public.workflow_run_status end,
      v_key.id, coalesce(v_key.user_id, p_user_id), v_input, v_now,
      case when p_mode = 'sync' then v_now end,
      -- A queued run must start within 24 hours; a running one is alive until its lease ends.
      v_now + case when p_mode = 'sync' then make_interval(secs => p_lease_seconds) else interval '24 hours' end,
      case when p_mode = 'sync' then 1 else 0 end, v_message_id, (v_spend.meter).execution_charge,
      v_original.trigger_block_id, p_rerun_of, p_rerun_from_block,
      coalesce(p_trace ->> 'traceId', workflows_private.new_trace_id()), p_trace ->> 'parentSpanId', p_trace ->> 'traceState',
      v_flow_key, case when v_flow_key is not null then v_limits[2] end, v_priority
    )
    returning *
  ),
  charge as (
    insert into public.usage_ledger (execution_id, kind, billing_account_id, period_id, workspace_id, workflow_id, amount, created_at)
    select run.id, 'execution', run.billing_account_id, (v_spend.meter).period_id, run.workspace_id, run.workflow_id, run.cost_total, v_now
    from run
  )
  select * into v_run from run;
  if v_blocked is null then
    insert into workflows_private.run_slots (execution_id, scopes, acquired_at) values (v_execution_id, v_scopes, v_now);
  else
    perform workflows_private.file_waiter(v_execution_id, v_blocked, v_scopes, v_limits, v_priority, v_now);
  end if;
  if (v_spend.meter).bills_overage then
    perform workflows_private.bill_threshold_if_due(v_spend.meter, v_now);
  end if;

  if p_mode = 'async' then
    return jsonb_build_object('status', 202, 'outcome', 'admitted', 'executionId', v_execution_id, 'runStatus', 'queued',
      'trigger', p_trigger, 'mode', p_mode, 'createdAt', v_now, 'waiting', v_blocked is not null,
      'workflow', jsonb_build_object('id', v_workflow_id, 'name', v_workflow_name, 'workspaceId', v_workspace),
      'rateLimit', v_rate, 'usage', v_usage);
  end if;
  return jsonb_build_object('status', 200, 'outcome', 'admitted', 'createdAt', v_now, 'rateLimit', v_rate, 'usage', v_usage)
    || workflows_private.run_payload(v_run, v_workflow_name, v_deployment,
      case when v_snapshot.id is not null then workflows_private.snapshot_payload(v_snapshot) end,
      workflows_private.environment_payload(v_workspace, v_environment_version, p_environment_version))
    || case when p_rerun_of is null then '{}'::jsonb else jsonb_build_object('rerunOf', p_rerun_of, 'fromBlock', p_rerun_from_block,
      'checkpoints', case when p_rerun_from_block is not null then workflows_private.completed_checkpoints(p_rerun_of) end) end;
end;
$$;
comment on function public.admit_workflow_run(uuid, text, text, text, uuid, jsonb, text, text, uuid[], bigint, integer, uuid, text, jsonb) is 'Admits a workflow run in one call: authentication, access, idempotency, deployment, usage and rate limits, the run record and everything it needs. Service role only; refusals are returned, not raised.';

-- Finish -----------------------------------------------------------------------------------------

/**
 * Records how a run ended, in one call: `p_status` completed, failed (a timeout is failed with
 * error code RUN_TIMEOUT) or cancelled; output, error ({message, code, failedBlock}), trace spans,
 * files, the executor's duration, and what the endpoint answered (`p_response`, replayed for a
 * repeated Idempotency-Key). Prices `p_model_usage` ([{model, promptTokens, completionTokens,
 * ownKey?}]), charges it to the account's open period (never refused: the work is done) and bills
 * a threshold invoice when one is due. Idempotent: finishing a finished (or swept, or cancelled
 * while queued) run changes nothing and answers `already_finished` with the recorded cost. Unknown
 * execution ids and malformed arguments raise (P0002, 22023).
 *
 * `p_checkpoints` are the outcomes a sync run collected in memory as it went (executor/durable.ts's
 * collecting checkpointer), stored in the same call (store_run_checkpoints), so a sync run keeps them
 * for fromBlock re-runs at the price of one write; an async run recorded its own as it went.
 */
create function public.finish_workflow_run(
  p_execution_id uuid,
  p_status text,
  p_output jsonb default null,
  p_error jsonb default null,
  p_trace_spans jsonb default null,
  p_files jsonb default null,
  p_model_usage jsonb default null,
  p_duration_ms integer default null,
  p_response jsonb default null,
  p_checkpoints jsonb default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := now();
  v_run public.workflow_executions;
  v_models jsonb;
  v_model_cost numeric := 0;
  v_level text;
  v_cost jsonb;
  v_message_id bigint;
  v_account uuid;
  v_attempt integer;
  v_usage jsonb;
  v_spend workflows_private.spend_outcome;
begin
  if p_status is null or p_status not in ('completed', 'failed', 'cancelled') then
    raise exception 'finish_workflow_run: status must be completed, failed or cancelled, not %', coalesce(p_status, 'null') using errcode = '22023';
  end if;
  if p_error is not null and (jsonb_typeof(p_error) <> 'object' or jsonb_typeof(p_error -> 'message') is distinct from 'string') then
    raise exception 'finish_workflow_run: error must be {message, code?, failedBlock?}' using errcode = '22023';
  end if;
  if p_duration_ms < 0 then
    raise exception 'finish_workflow_run: duration cannot be negative' using errcode = '22023';
  end if;
  if p_checkpoints is not null and jsonb_typeof(p_checkpoints) <> 'array' then
    raise exception 'finish_workflow_run: checkpoints must be an array' using errcode = '22023';
  end if;
  if p_model_usage is not null and p_model_usage <> '[]'::jsonb then
    v_models := public.price_model_usage(p_model_usage, v_now);
    v_model_cost := (v_models ->> 'total')::numeric;
  end if;

  -- Only a run in flight changes: a second finish (or one after the sweeper or a cancellation
  -- closed the run) finds nothing to update. The account's usage is read in the same statement.
  update public.workflow_executions e set
    status = p_status::public.workflow_run_status,
    level = case when p_status = 'failed' then 'error'::public.workflow_log_level else 'info'::public.workflow_log_level end,
    started_at = coalesce(e.started_at, v_now),
    ended_at = v_now,
    duration_ms = coalesce(p_duration_ms, greatest(0, (extract(epoch from v_now - coalesce(e.started_at, v_now)) * 1000)::integer)),
    cost_total = e.cost_total + v_model_cost,
    cost = workflows_private.run_cost(e.cost_total, v_models),
    output = p_output,
    error_code = p_error ->> 'code',
    error_message = p_error ->> 'message',
    failed_block = p_error -> 'failedBlock',
    trace_spans = p_trace_spans,
    files = p_files,
    -- A run answered paused within its request keeps that answer (idempotent_replay reads it).
    response = coalesce(p_response, e.response),
    lease_expires_at = null
  where e.id = p_execution_id and e.status in ('queued', 'running')
  returning e.level, e.cost, e.queue_message_id, e.billing_account_id, e.attempt,
    (select workflows_private.usage_state(m) from workflows_private.account_meters m where m.billing_account_id = e.billing_account_id)
  into v_level, v_cost, v_message_id, v_account, v_attempt, v_usage;
  if not found then
    select * into v_run from public.workflow_executions e where e.id = p_execution_id;
    if not found then
      raise exception 'finish_workflow_run: no execution %', p_execution_id using errcode = 'P0002';
    end if;
    return jsonb_build_object('outcome', 'already_finished', 'executionId', v_run.id, 'runStatus', v_run.status,
      'level', v_run.level, 'cost', v_run.cost);
  end if;
  if v_message_id is not null then
    perform pgmq.delete('workflow_runs', v_message_id);
  end if;
  perform workflows_private.release_slots(p_execution_id);
  if p_checkpoints is not null then
    perform workflows_private.store_run_checkpoints(p_execution_id, v_attempt, p_checkpoints);
  end if;

  if v_model_cost > 0 then
    v_spend := workflows_private.spend(v_account, null, false, v_model_cost, v_now);
    insert into public.usage_ledger (execution_id, kind, billing_account_id, period_id, workspace_id, workflow_id, amount, created_at)
    select e.id, 'models', e.billing_account_id, (v_spend.meter).period_id, e.workspace_id, e.workflow_id, v_model_cost, v_now
    from public.workflow_executions e where e.id = p_execution_id;
    if (v_spend.meter).bills_overage then
      perform workflows_private.bill_threshold_if_due(v_spend.meter, v_now);
    end if;
    v_usage := workflows_private.usage_state(v_spend.meter);
  end if;

  return jsonb_build_object('outcome', 'finished', 'executionId', p_execution_id, 'runStatus', p_status,
    'level', v_level, 'cost', v_cost, 'usage', v_usage);
end;
$$;
comment on function public.finish_workflow_run(uuid, text, jsonb, jsonb, jsonb, jsonb, jsonb, integer, jsonb, jsonb) is 'Records the end of a run, prices and charges its model usage, bills a due threshold; idempotent. Service role only.';

-- The async worker -------------------------------------------------------------------------------

/**
 * A worker takes up to `p_batch_size` queued runs (docs/workflow-runs.md), and also runs
 * whose parking ended and runs whose worker died: those (attempt 2 and later) come back with
 * `checkpoints`, their history, so they resume from what completed. A parked run's message is delayed
 * until its due time; one read earlier is hidden again until then. Attempts count from the last
 * park, so a run that parks often is not given up for it.
 */
create function public.claim_workflow_runs(
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
    -- A run that parked gave its concurrency slots back (an approval's decision may have cleared
    -- parked_until since): it takes them again, or waits for one.
    if not exists (select 1 from workflows_private.run_slots s where s.execution_id = v_run.id)
      and not workflows_private.take_slots_or_wait(v_run, v_message.msg_id, v_now) then
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
      case when s.id is not null then workflows_private.snapshot_payload(s) end,
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

/**
 * Keeps a run alive (docs/workflow-runs.md). A sync run whose lease has
 * already run out is not renewed: the heartbeat ends it as the sweeper would (WORKER_LOST) and
 * answers alive false, since a retry of its request may already have been told it was lost.
 */
create function public.heartbeat_workflow_run(p_execution_id uuid, p_attempt integer default null, p_lease_seconds integer default 120)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := now();
  v_run public.workflow_executions;
  v_alive boolean;
begin
  if p_lease_seconds is null or p_lease_seconds not between 1 and 43200 then
    raise exception 'heartbeat_workflow_run: lease 1 to 43200 s' using errcode = '22023';
  end if;
  select * into v_run from public.workflow_executions e where e.id = p_execution_id for update;
  if not found then
    raise exception 'heartbeat_workflow_run: no execution %', p_execution_id using errcode = 'P0002';
  end if;
  if v_run.mode = 'sync' and v_run.status = 'running' and v_run.lease_expires_at < v_now then
    perform workflows_private.end_expired_run(v_run, v_now);
    select * into v_run from public.workflow_executions e where e.id = p_execution_id;
  end if;
  v_alive := coalesce(v_run.status = 'running' and v_run.parked_until is null and (p_attempt is null or p_attempt = v_run.attempt), false);
  if v_alive then
    update public.workflow_executions e set lease_expires_at = v_now + make_interval(secs => p_lease_seconds)
    where e.id = p_execution_id returning * into v_run;
    if v_run.queue_message_id is not null then
      perform pgmq.set_vt('workflow_runs', v_run.queue_message_id, p_lease_seconds);
    end if;
  end if;
  return jsonb_build_object('alive', v_alive, 'runStatus', v_run.status, 'attempt', v_run.attempt,
    'leaseExpiresAt', v_run.lease_expires_at, 'cancelRequested', v_run.cancel_requested_at is not null);
end;
$$;
comment on function public.heartbeat_workflow_run(uuid, integer, integer) is 'Extends a running run''s lease (a sync run''s only while it has not run out); tells its worker whether to go on and whether cancellation was requested. Service role only.';

/**
 * Cancels a run (docs/workflow-runs.md, "Leases"), through workflows_private.cancel_run: a queued or
 * parked run ends at once, a running one is signalled to stop. `p_reason` is kept as why (at most
 * 500 characters); who is the key, or the user, given. Idempotent: an ended run is left as it is.
 */
create function public.cancel_workflow_run(p_execution_id uuid, p_api_key text default null, p_user_id uuid default null, p_reason text default null)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
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
  perform workflows_private.cancel_run(v_run, workflows_private.canceller(v_key, p_user_id), p_reason, now());
  select * into v_run from public.workflow_executions e where e.id = p_execution_id;
  return jsonb_build_object('status', 200, 'body', jsonb_build_object('executionId', v_run.id, 'status', v_run.status,
    -- A run still waiting for its worker to stop; a queued or parked one has already ended.
    'cancelRequested', v_run.status = 'running' and v_run.cancel_requested_at is not null));
end;
$$;
comment on function public.cancel_workflow_run(uuid, text, uuid, text) is 'Cancels a queued or parked run at once, signals a running one to stop, recording who and why. Service role only.';

-- The sweeper ------------------------------------------------------------------------------------

/**
 * Fails (or cancels) in-flight runs whose worker is gone (docs/workflow-runs.md), each through
 * end_expired_run, then repairs concurrency slots (repair_slots).
 */
create function workflows_private.sweep_workflow_runs(p_now timestamptz default now())
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
    if workflows_private.end_expired_run(v_run, p_now) then
      v_closed := v_closed + 1;
    end if;
  end loop;
  perform workflows_private.repair_slots();
  return v_closed;
end;
$$;
comment on function workflows_private.sweep_workflow_runs(timestamptz) is 'Fails (or cancels) in-flight runs whose worker is gone, leaving parked runs until they are due; pg_cron runs it every minute.';

select cron.schedule('workflows-sweep-runs', '* * * * *', $$select workflows_private.sweep_workflow_runs()$$);

-- Access -----------------------------------------------------------------------------------------

revoke execute on function
  public.admit_workflow_run(uuid, text, text, text, uuid, jsonb, text, text, uuid[], bigint, integer, uuid, text, jsonb),
  public.finish_workflow_run(uuid, text, jsonb, jsonb, jsonb, jsonb, jsonb, integer, jsonb, jsonb),
  public.claim_workflow_runs(integer, integer, uuid[], jsonb),
  public.heartbeat_workflow_run(uuid, integer, integer),
  public.cancel_workflow_run(uuid, text, uuid, text),
  workflows_private.refusal(integer, text, text, jsonb),
  workflows_private.api_key_refusal(text),
  workflows_private.run_cost(numeric, jsonb),
  workflows_private.close_run(uuid, text, text, text, timestamptz),
  workflows_private.state_without_layout(jsonb),
  workflows_private.draft_snapshot(uuid),
  workflows_private.snapshot_payload(public.workflow_execution_snapshots),
  workflows_private.run_payload(public.workflow_executions, text, jsonb, jsonb, jsonb),
  workflows_private.idempotent_replay(workflows_private.idempotency_keys, text),
  workflows_private.bill_threshold_if_due(workflows_private.account_meters, timestamptz),
  workflows_private.sweep_workflow_runs(timestamptz)
  from public, anon, authenticated, service_role;
grant execute on function
  public.admit_workflow_run(uuid, text, text, text, uuid, jsonb, text, text, uuid[], bigint, integer, uuid, text, jsonb),
  public.finish_workflow_run(uuid, text, jsonb, jsonb, jsonb, jsonb, jsonb, integer, jsonb, jsonb),
  public.claim_workflow_runs(integer, integer, uuid[], jsonb),
  public.heartbeat_workflow_run(uuid, integer, integer),
  public.cancel_workflow_run(uuid, text, uuid, text)
  to service_role;
-- Sync leases (docs/workflow-runs.md, "Leases") -----------------------------------------------------
-- Sync runs are admitted with a short lease that the serving instance renews with
-- heartbeat_workflow_run while the run is alive; whoever first sees a sync run's lease run out ends
-- the run as the sweeper would (failed, WORKER_LOST): workflows_private.end_expired_run is that
-- decision, shared by idempotent_replay, heartbeat_workflow_run and sweep_workflow_runs.

/**
 * Ends an in-flight run whose lease has run out, the way the sweeper does: a queued run failed
 * NOT_STARTED, a run asked to stop cancelled, a sync run (its edge function is gone), an async run
 * out of attempts or one no worker took within 15 minutes of its lease failed WORKER_LOST. Returns
 * false, changing nothing, for an async run the queue may still hand out again. The caller holds
 * the row lock and has checked the lease.
 */
create function workflows_private.end_expired_run(p_run public.workflow_executions, p_now timestamptz)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
begin
  if p_run.status = 'queued' then
    perform workflows_private.close_run(p_run.id, 'failed', 'NOT_STARTED', 'No worker started the run within 24 hours of its admission', p_now);
  elsif p_run.cancel_requested_at is not null then
    perform workflows_private.close_run(p_run.id, 'cancelled', null, null, p_now);
  elsif p_run.mode = 'sync' or (p_run.parked_until is null and p_run.attempt - p_run.park_attempt >= p_run.max_attempts)
    or p_run.lease_expires_at < p_now - interval '15 minutes' then
    perform workflows_private.close_run(p_run.id, 'failed', 'WORKER_LOST', 'The worker running this run stopped before finishing it', p_now);
  else
    return false;
  end if;
  return true;
end;
$$;
comment on function workflows_private.end_expired_run(public.workflow_executions, timestamptz) is 'The sweeper''s ending of one in-flight run whose lease ran out (false when an async run is left to the queue); shared by the sweeper, admission and the heartbeat.';
revoke execute on function workflows_private.end_expired_run(public.workflow_executions, timestamptz) from public, anon, authenticated, service_role;
