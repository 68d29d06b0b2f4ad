-- Workflow service, part 4: completion webhooks that are never lost.
--
-- An outbox: the statement that ends an execution record (finish_workflow_run, or the sweeper and
-- cancellation through close_run) fires a trigger that, in the same transaction, records one
-- delivery per active subscription whose level and trigger filters match and sends its message to
-- the pgmq queue `webhook_deliveries`. Either the run is recorded as ended and its deliveries are
-- queued, or neither is: a process dying right after the commit loses nothing.
--
-- The queue's worker, the `webhook-deliveries` edge function, claims deliveries
-- (claim_webhook_deliveries), POSTs the signed event and records each attempt
-- (record_webhook_attempts). A message stays in the queue until its attempt is recorded, so a
-- worker killed mid-delivery leaves it to reappear when its visibility timeout ends, and the next
-- worker sends the same delivery (same id) again: at-least-once. Retries are new messages sent with
-- a delay (decisions item 6: 5 s, 15 s, 1 min, 3 min, 10 min, each plus up to 10% jitter, on 5xx,
-- 429, timeouts and connection failures; the worker's retry policy decides, this records). pgmq
-- delays are whole seconds, so a message may surface up to a second before its attempt is due;
-- the claim hands it over with the time it is due and the worker waits out the rest.
--
-- - webhook_deliveries: one row per (subscription, execution): status pending → delivered | failed.
-- - webhook_delivery_attempts: every attempt, with time, status code, duration, error, outcome.
-- - redeliver_webhook / redeliver_failed_webhooks: send finished deliveries again (same ids).
-- Members of the workspace read deliveries and attempts; only these functions write them.

create type public.webhook_delivery_status as enum ('pending', 'delivered', 'failed');
comment on type public.webhook_delivery_status is 'pending (an attempt is due or under way), delivered (a 2xx answer), failed (a final refusal, or every retry used).';
create type public.webhook_attempt_outcome as enum ('delivered', 'retry', 'failed', 'interrupted');
comment on type public.webhook_attempt_outcome is 'What an attempt led to: delivered, a retry, the final failure, or nothing known (its worker stopped mid-attempt; the delivery was sent again).';

create table public.webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  subscription_id uuid not null references public.webhook_subscriptions (id) on delete cascade,
  workspace_id uuid not null,
  workflow_id uuid not null,
  execution_id uuid not null references public.workflow_executions (id) on delete cascade,
  status public.webhook_delivery_status not null default 'pending',
  attempts integer not null default 0,
  round_attempts integer not null default 0,
  redeliveries integer not null default 0,
  next_attempt_at timestamptz,
  attempt_started_at timestamptz,
  last_attempt_at timestamptz,
  last_status_code integer,
  last_error text,
  delivered_at timestamptz,
  message_id bigint,
  created_at timestamptz not null default now(),
  unique (subscription_id, execution_id)
);
comment on table public.webhook_deliveries is 'One workflow.execution.completed delivery per subscription and execution; its id is the service-delivery-id and Idempotency-Key receivers see on every attempt. Written only by the delivery functions; members read them.';
comment on column public.webhook_deliveries.id is 'The delivery id (service-delivery-id, Idempotency-Key, and the event''s id), the same on every attempt and redelivery.';
comment on column public.webhook_deliveries.subscription_id is 'Where it goes.';
comment on column public.webhook_deliveries.workspace_id is 'The workspace (row-level security reads it).';
comment on column public.webhook_deliveries.workflow_id is 'The workflow that ran.';
comment on column public.webhook_deliveries.execution_id is 'The execution announced.';
comment on column public.webhook_deliveries.status is 'pending, delivered or failed.';
comment on column public.webhook_deliveries.attempts is 'Attempts made in all (every one is in webhook_delivery_attempts).';
comment on column public.webhook_deliveries.round_attempts is 'Attempts since the delivery was queued or last redelivered: the position in the retry schedule.';
comment on column public.webhook_deliveries.redeliveries is 'How many times it was redelivered by hand.';
comment on column public.webhook_deliveries.next_attempt_at is 'When the next attempt is due (pending deliveries).';
comment on column public.webhook_deliveries.attempt_started_at is 'When the attempt under way started (null when none is).';
comment on column public.webhook_deliveries.last_attempt_at is 'When the latest attempt started.';
comment on column public.webhook_deliveries.last_status_code is 'The HTTP status of the latest answer (null: no answer).';
comment on column public.webhook_deliveries.last_error is 'Why the latest attempt did not deliver.';
comment on column public.webhook_deliveries.delivered_at is 'When a 2xx answer was recorded.';
comment on column public.webhook_deliveries.message_id is 'The pgmq message (queue webhook_deliveries) that carries its next attempt.';
comment on column public.webhook_deliveries.created_at is 'When the execution ended and the delivery was queued.';

create index webhook_deliveries_execution_id_idx on public.webhook_deliveries (execution_id);
create index webhook_deliveries_workspace_created_idx on public.webhook_deliveries (workspace_id, created_at desc);
create index webhook_deliveries_failed_idx on public.webhook_deliveries (subscription_id, created_at) where status = 'failed';

create table public.webhook_delivery_attempts (
  id bigint generated always as identity primary key,
  delivery_id uuid not null references public.webhook_deliveries (id) on delete cascade,
  workspace_id uuid not null,
  attempt integer not null,
  started_at timestamptz not null,
  duration_ms integer,
  status_code integer,
  error text,
  outcome public.webhook_attempt_outcome not null,
  next_attempt_at timestamptz,
  unique (delivery_id, attempt)
);
comment on table public.webhook_delivery_attempts is 'Every attempt of every webhook delivery. Written only by the delivery functions; members read them.';
comment on column public.webhook_delivery_attempts.delivery_id is 'The delivery.';
comment on column public.webhook_delivery_attempts.workspace_id is 'The workspace (row-level security reads it).';
comment on column public.webhook_delivery_attempts.attempt is 'Its number: 1 for the first, counting on across retries and redeliveries.';
comment on column public.webhook_delivery_attempts.started_at is 'When the request was sent (its service-timestamp).';
comment on column public.webhook_delivery_attempts.duration_ms is 'Until the answer''s status arrived, or the failure.';
comment on column public.webhook_delivery_attempts.status_code is 'The HTTP status answered (null: none, see error).';
comment on column public.webhook_delivery_attempts.error is 'Why it did not deliver: the status, a timeout, a connection failure, a refused address.';
comment on column public.webhook_delivery_attempts.outcome is 'delivered, retry, failed or interrupted.';
comment on column public.webhook_delivery_attempts.next_attempt_at is 'When the retry it led to was due.';
comment on column public.webhook_delivery_attempts.id is 'Row id.';
create index webhook_delivery_attempts_workspace_id_idx on public.webhook_delivery_attempts (workspace_id);

-- The queue ----------------------------------------------------------------------------------------
-- Messages are {deliveryId}; the row holds the rest. The visibility timeout (60 s) outlasts an
-- attempt (30 s at most), so only a worker that died lets a message reappear.

select pgmq.create('webhook_deliveries');
insert into platform.queue_workers (queue_name, function_name, batch_size, visibility_timeout)
values ('webhook_deliveries', 'webhook-deliveries', 50, 60)
on conflict (queue_name) do nothing;

-- The outbox ---------------------------------------------------------------------------------------

/** Trigger: a run just ended; queue a delivery for each active subscription its level and trigger match. */
create function workflows_private.queue_webhook_deliveries()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into public.webhook_deliveries (id, subscription_id, workspace_id, workflow_id, execution_id, next_attempt_at, message_id, created_at)
  select d.id, d.subscription_id, new.workspace_id, new.workflow_id, new.id, now(),
    (select m from pgmq.send('webhook_deliveries', jsonb_build_object('deliveryId', d.id)) m), now()
  from (
    select gen_random_uuid() as id, s.id as subscription_id
    from public.webhook_subscriptions s
    where s.workflow_id = new.workflow_id and s.active and new.level = any(s.level_filter) and new.trigger = any(s.trigger_filter)
  ) d;
  return null;
end;
$$;
comment on function workflows_private.queue_webhook_deliveries() is 'Trigger: the outbox. Records and queues the deliveries of a run that just ended, in its own transaction.';

-- Whoever ends a run (finish, the sweeper, a cancellation) ends it with this update.
create trigger workflow_executions_queue_webhooks
  after update of ended_at on public.workflow_executions
  for each row
  when (old.ended_at is null and new.ended_at is not null)
  execute function workflows_private.queue_webhook_deliveries();

-- The worker's side --------------------------------------------------------------------------------

/**
 * The `data` of a delivery's event, as the spec's Events section lists it: the run's ids, status
 * (success, error, or cancelled), level, trigger, times, duration, cost and files; with the
 * subscription's include flags its final output, trace spans, and the paying account's execution
 * rate limits and usage at this moment.
 */
create function workflows_private.webhook_event_data(e public.workflow_executions, s public.webhook_subscriptions, p_now timestamptz)
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
    'files', e.files);
begin
  if s.include_final_output then
    v_data := v_data || jsonb_build_object('finalOutput', e.output);
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
comment on function workflows_private.webhook_event_data(public.workflow_executions, public.webhook_subscriptions, timestamptz) is 'The data object of a workflow.execution.completed event for one subscription.';

/**
 * The delivery worker takes up to `p_batch_size` deliveries (pgmq.read on webhook_deliveries,
 * hidden for `p_visibility_timeout` seconds). Each claimed delivery comes back with everything its
 * attempt needs: {deliveryId, attempt (its number overall), roundAttempt (its place in the retry
 * schedule), dueAt, url, secret (null when unsigned), data, links}, and is marked as under way. A
 * delivery whose previous attempt was never recorded (its worker stopped) gets that attempt
 * recorded as interrupted first. Messages of deliveries that no longer wait for an attempt are
 * dropped; deliveries of a subscription switched off fail; messages that surfaced more than a
 * second early (pgmq's whole-second delays) are hidden until due. Returns {deliveries: [...]}.
 */
create function public.claim_webhook_deliveries(p_batch_size integer default 10, p_visibility_timeout integer default 60)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := clock_timestamp();
  v_message record;
  v_delivery public.webhook_deliveries;
  v_subscription public.webhook_subscriptions;
  v_run public.workflow_executions;
  v_claimed jsonb := '[]'::jsonb;
begin
  if p_batch_size is null or p_batch_size not between 1 and 1000 or p_visibility_timeout is null or p_visibility_timeout not between 1 and 43200 then
    raise exception 'claim_webhook_deliveries: batch size 1 to 1000, visibility timeout 1 to 43200 s' using errcode = '22023';
  end if;
  for v_message in select * from pgmq.read('webhook_deliveries', p_visibility_timeout, p_batch_size)
  loop
    v_delivery := null;
    if jsonb_typeof(v_message.message -> 'deliveryId') = 'string' and v_message.message ->> 'deliveryId' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
      select * into v_delivery from public.webhook_deliveries d where d.id = (v_message.message ->> 'deliveryId')::uuid for update skip locked;
      if not found and exists (select 1 from public.webhook_deliveries d where d.id = (v_message.message ->> 'deliveryId')::uuid) then
        -- Being recorded or redelivered this very moment: look again in a second.
        perform pgmq.set_vt('webhook_deliveries', v_message.msg_id, 1);
        continue;
      end if;
    end if;
    if v_delivery.id is null or v_delivery.status <> 'pending' or v_delivery.message_id is distinct from v_message.msg_id then
      perform pgmq.delete('webhook_deliveries', v_message.msg_id);
      continue;
    end if;
    if v_delivery.next_attempt_at > v_now + interval '1 second' then
      perform pgmq.set_vt('webhook_deliveries', v_message.msg_id, greatest(1, floor(extract(epoch from v_delivery.next_attempt_at - v_now))::integer));
      continue;
    end if;
    select * into v_subscription from public.webhook_subscriptions s where s.id = v_delivery.subscription_id;
    if not v_subscription.active then
      update public.webhook_deliveries d set status = 'failed', next_attempt_at = null, attempt_started_at = null, message_id = null,
        last_error = 'The subscription was switched off before this delivery was made'
      where d.id = v_delivery.id;
      perform pgmq.delete('webhook_deliveries', v_message.msg_id);
      continue;
    end if;
    if v_delivery.attempt_started_at is not null then
      insert into public.webhook_delivery_attempts (delivery_id, workspace_id, attempt, started_at, error, outcome)
      values (v_delivery.id, v_delivery.workspace_id, v_delivery.attempts, v_delivery.attempt_started_at,
        'The worker making this attempt stopped before it was recorded; whether it arrived is unknown', 'interrupted')
      on conflict (delivery_id, attempt) do nothing;
    end if;
    update public.webhook_deliveries d set
      attempts = d.attempts + 1, round_attempts = d.round_attempts + 1, attempt_started_at = v_now, last_attempt_at = v_now
    where d.id = v_delivery.id
    returning * into v_delivery;
    select * into v_run from public.workflow_executions e where e.id = v_delivery.execution_id;
    v_claimed := v_claimed || jsonb_build_array(jsonb_build_object(
      'deliveryId', v_delivery.id,
      'attempt', v_delivery.attempts,
      'roundAttempt', v_delivery.round_attempts,
      'dueAt', v_delivery.next_attempt_at,
      'url', v_subscription.url,
      'secret', case when v_subscription.has_secret then workflows_private.webhook_secret(v_subscription.id) end,
      'data', workflows_private.webhook_event_data(v_run, v_subscription, v_now),
      'links', jsonb_build_object('log', format('/api/v1/logs/%s', v_run.id), 'execution', format('/api/v1/logs/executions/%s', v_run.id))));
  end loop;
  return jsonb_build_object('deliveries', v_claimed);
end;
$$;
comment on function public.claim_webhook_deliveries(integer, integer) is 'The delivery worker takes due webhook deliveries with everything an attempt needs (the secret included). Service role only.';

/**
 * Records attempts the worker made: `p_attempts` is [{deliveryId, attempt, startedAt (ISO), durationMs,
 * statusCode, error, outcome: delivered | retry | failed, retryInMs (for a retry)}]. Each attempt is
 * kept; its delivery becomes delivered or failed, or waits for its retry (a new message, delayed,
 * replaces the old one). The message that carried the attempt is deleted only now, so an attempt
 * whose worker died is made again. An attempt reported after another one took over (its worker was
 * presumed dead) is kept in the history and changes nothing else. Returns how many were recorded.
 */
create function public.record_webhook_attempts(p_attempts jsonb)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := clock_timestamp();
  v_result record;
  v_delivery public.webhook_deliveries;
  v_next timestamptz;
  v_message bigint;
  v_count integer := 0;
begin
  if jsonb_typeof(p_attempts) is distinct from 'array' then
    raise exception 'record_webhook_attempts: an array of attempts' using errcode = '22023';
  end if;
  for v_result in
    select * from jsonb_to_recordset(p_attempts) as r (
      "deliveryId" uuid, attempt integer, "startedAt" timestamptz, "durationMs" integer, "statusCode" integer, error text, outcome text, "retryInMs" integer)
  loop
    if v_result."deliveryId" is null or v_result.attempt is null or v_result."startedAt" is null or v_result.outcome is null
      or v_result.outcome not in ('delivered', 'retry', 'failed') or (v_result.outcome = 'retry' and (v_result."retryInMs" is null or v_result."retryInMs" < 0)) then
      raise exception 'record_webhook_attempts: each attempt needs deliveryId, attempt, startedAt and an outcome (delivered, retry with retryInMs, failed)'
        using errcode = '22023';
    end if;
    select * into v_delivery from public.webhook_deliveries d where d.id = v_result."deliveryId" for update;
    if not found then
      continue;
    end if;
    v_next := case when v_result.outcome = 'retry' then v_now + make_interval(secs => v_result."retryInMs" / 1000.0) end;
    insert into public.webhook_delivery_attempts (delivery_id, workspace_id, attempt, started_at, duration_ms, status_code, error, outcome, next_attempt_at)
    values (v_delivery.id, v_delivery.workspace_id, v_result.attempt, v_result."startedAt", v_result."durationMs", v_result."statusCode",
      left(v_result.error, 1000), v_result.outcome::public.webhook_attempt_outcome, v_next)
    on conflict (delivery_id, attempt) do update set
      duration_ms = excluded.duration_ms, status_code = excluded.status_code, error = excluded.error, outcome = excluded.outcome,
      next_attempt_at = excluded.next_attempt_at;
    v_count := v_count + 1;
    if v_delivery.status <> 'pending' or v_delivery.attempts <> v_result.attempt or v_delivery.attempt_started_at is null then
      continue;
    end if;
    if v_delivery.message_id is not null then
      perform pgmq.delete('webhook_deliveries', v_delivery.message_id);
    end if;
    v_message := null;
    if v_result.outcome = 'retry' then
      select m into v_message from pgmq.send('webhook_deliveries', jsonb_build_object('deliveryId', v_delivery.id), floor(v_result."retryInMs" / 1000.0)::integer) m;
    end if;
    update public.webhook_deliveries d set
      status = case v_result.outcome when 'delivered' then 'delivered' when 'failed' then 'failed' else 'pending' end::public.webhook_delivery_status,
      next_attempt_at = v_next,
      attempt_started_at = null,
      last_status_code = v_result."statusCode",
      last_error = case when v_result.outcome = 'delivered' then null else left(v_result.error, 1000) end,
      delivered_at = case when v_result.outcome = 'delivered' then v_now end,
      message_id = v_message
    where d.id = v_delivery.id;
  end loop;
  return v_count;
end;
$$;
comment on function public.record_webhook_attempts(jsonb) is 'The delivery worker records attempts: delivered, a retry (queued with its delay) or failed. Service role only.';

-- Redelivery -----------------------------------------------------------------------------------------

/** Queues a finished delivery again, now, with a fresh retry schedule; the caller holds the row lock. */
create function workflows_private.restart_delivery(p_delivery_id uuid)
returns public.webhook_deliveries
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_delivery public.webhook_deliveries;
begin
  update public.webhook_deliveries d set
    status = 'pending', round_attempts = 0, redeliveries = d.redeliveries + 1, next_attempt_at = now(), attempt_started_at = null,
    delivered_at = null, message_id = (select m from pgmq.send('webhook_deliveries', jsonb_build_object('deliveryId', d.id)) m)
  where d.id = p_delivery_id
  returning * into v_delivery;
  return v_delivery;
end;
$$;
comment on function workflows_private.restart_delivery(uuid) is 'Requeues a delivered or failed delivery under the same id.';

/**
 * Sends a delivered or failed delivery again, under the same delivery id, starting a fresh retry
 * schedule (the attempts go on being numbered). Editors of the workspace (or the service role).
 * A delivery the caller may not see is PT404 (HTTP 404); one still being attempted is PT409.
 */
create function public.redeliver_webhook(p_delivery_id uuid)
returns public.webhook_deliveries
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_delivery public.webhook_deliveries;
begin
  select * into v_delivery from public.webhook_deliveries d where d.id = p_delivery_id for update;
  if not found or ((select auth.role()) is distinct from 'service_role' and not workflows_private.has_workspace_role(v_delivery.workspace_id, 'viewer')) then
    raise exception 'Webhook delivery % not found', p_delivery_id using errcode = 'PT404';
  end if;
  if (select auth.role()) is distinct from 'service_role' then
    perform workflows_private.require_workspace_role(v_delivery.workspace_id, 'editor', 'redeliver webhooks');
  end if;
  if v_delivery.status = 'pending' then
    raise exception 'Webhook delivery % is still being attempted; redeliver it once it has been delivered or has failed', p_delivery_id using errcode = 'PT409';
  end if;
  return workflows_private.restart_delivery(p_delivery_id);
end;
$$;
comment on function public.redeliver_webhook(uuid) is 'Sends a finished webhook delivery again with the same id and a fresh retry schedule. Editors.';

/**
 * Redelivers every failed delivery of a subscription (created since `p_since`, when given), as
 * redeliver_webhook does one: for after a receiver was down longer than the retry schedule.
 * Editors of the workspace (or the service role); PT404 for a subscription the caller may not see.
 * Returns how many were queued.
 */
create function public.redeliver_failed_webhooks(p_subscription_id uuid, p_since timestamptz default null)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_workspace uuid;
  v_id uuid;
  v_count integer := 0;
begin
  select s.workspace_id into v_workspace from public.webhook_subscriptions s where s.id = p_subscription_id;
  if v_workspace is null or ((select auth.role()) is distinct from 'service_role' and not workflows_private.has_workspace_role(v_workspace, 'viewer')) then
    raise exception 'Webhook subscription % not found', p_subscription_id using errcode = 'PT404';
  end if;
  if (select auth.role()) is distinct from 'service_role' then
    perform workflows_private.require_workspace_role(v_workspace, 'editor', 'redeliver webhooks');
  end if;
  for v_id in
    select d.id from public.webhook_deliveries d
    where d.subscription_id = p_subscription_id and d.status = 'failed' and (p_since is null or d.created_at >= p_since)
    order by d.created_at
    for update
  loop
    perform workflows_private.restart_delivery(v_id);
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$;
comment on function public.redeliver_failed_webhooks(uuid, timestamptz) is 'Sends every failed delivery of a subscription again (same ids). Editors.';

-- Access -------------------------------------------------------------------------------------------

revoke all on public.webhook_deliveries, public.webhook_delivery_attempts from public, anon, authenticated;
grant select on public.webhook_deliveries, public.webhook_delivery_attempts to authenticated, service_role;
alter table public.webhook_deliveries enable row level security;
alter table public.webhook_delivery_attempts enable row level security;

create policy "Members can read their workspaces' webhook deliveries" on public.webhook_deliveries
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));
create policy "Members can read their workspaces' webhook delivery attempts" on public.webhook_delivery_attempts
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));

revoke execute on function
  public.claim_webhook_deliveries(integer, integer),
  public.record_webhook_attempts(jsonb),
  public.redeliver_webhook(uuid),
  public.redeliver_failed_webhooks(uuid, timestamptz),
  workflows_private.queue_webhook_deliveries(),
  workflows_private.webhook_event_data(public.workflow_executions, public.webhook_subscriptions, timestamptz),
  workflows_private.restart_delivery(uuid)
  from public, anon, authenticated, service_role;
grant execute on function
  public.claim_webhook_deliveries(integer, integer),
  public.record_webhook_attempts(jsonb)
  to service_role;
grant execute on function
  public.redeliver_webhook(uuid),
  public.redeliver_failed_webhooks(uuid, timestamptz)
  to authenticated, service_role;
