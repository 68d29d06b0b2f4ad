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
comment on type public.webhook_delivery_status is 'pending (an attempt is due or under way), delivered (a 2xx answer), failed (a dead letter: a final refusal, or every retry used; kept until redelivered).';
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
  last_response_excerpt text,
  delivered_at timestamptz,
  failed_at timestamptz,
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
comment on column public.webhook_deliveries.last_response_excerpt is 'The start of the latest answer''s body when it was not 2xx (at most 512 characters, control characters removed): what the receiver said.';
comment on column public.webhook_deliveries.delivered_at is 'When a 2xx answer was recorded.';
comment on column public.webhook_deliveries.failed_at is 'When it failed for good (a dead letter: every retry used, or a final refusal); cleared by a redelivery.';
comment on column public.webhook_deliveries.message_id is 'The pgmq message (queue webhook_deliveries) that carries its next attempt.';
comment on column public.webhook_deliveries.created_at is 'When the execution ended and the delivery was queued.';

create index webhook_deliveries_execution_id_idx on public.webhook_deliveries (execution_id);
create index webhook_deliveries_workspace_created_idx on public.webhook_deliveries (workspace_id, created_at desc);
create index webhook_deliveries_failed_idx on public.webhook_deliveries (subscription_id, created_at) where status = 'failed';
create index webhook_deliveries_dead_letters_idx on public.webhook_deliveries (workspace_id, failed_at desc) where status = 'failed';

create table public.webhook_delivery_attempts (
  id bigint generated always as identity primary key,
  delivery_id uuid not null references public.webhook_deliveries (id) on delete cascade,
  workspace_id uuid not null,
  attempt integer not null,
  started_at timestamptz not null,
  duration_ms integer,
  status_code integer,
  error text,
  response_excerpt text,
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
comment on column public.webhook_delivery_attempts.response_excerpt is 'The start of a non-2xx answer''s body (at most 512 characters, control characters removed); null for 2xx or no answer.';
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
 * (success, error, or cancelled), level, trigger, times, duration, cost, files and `error`
 * (run_error); with the subscription's include flags its final output (run_final_output), trace
 * spans, and the paying account's execution rate limits and usage at this moment.
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
comment on function workflows_private.webhook_event_data(public.workflow_executions, public.webhook_subscriptions, timestamptz) is 'The data object of a workflow.execution.completed event for one subscription.';

/**
 * The delivery worker takes up to `p_batch_size` deliveries (pgmq.read on webhook_deliveries,
 * hidden for `p_visibility_timeout` seconds). Each claimed delivery comes back with everything its
 * attempt needs: {deliveryId, attempt (its number overall), roundAttempt (its place in the retry
 * schedule), dueAt, url, secret (null when unsigned), data, links}, and is marked as under way. A
 * delivery whose previous attempt was never recorded (its worker stopped) gets that attempt
 * recorded as interrupted first. Messages of deliveries that no longer wait for an attempt are
 * dropped; deliveries of a subscription switched off fail; messages that surfaced more than a
 * second early (pgmq's whole-second delays) are hidden until due; a delivery being recorded or
 * redelivered this very moment is looked at again a second later. Returns {deliveries: [...]}, each with the run's trace
 * ids so the request carries `traceparent` (docs/tracing.md).
 *
 * Set-based: one statement per kind of outcome for the whole batch, and each subscription's secret
 * decrypted once, so a claim costs little more than its reads and writes.
 */
create function public.claim_webhook_deliveries(p_batch_size integer default 10, p_visibility_timeout integer default 60)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := clock_timestamp();
  v_message_ids bigint[];
  v_delivery_ids uuid[];
  v_locked uuid[];
  v_row record;
  v_stale bigint[] := '{}'::bigint[];
  v_busy bigint[] := '{}'::bigint[];
  v_switched_off uuid[] := '{}'::uuid[];
  v_due uuid[] := '{}'::uuid[];
  v_claimed jsonb;
begin
  if p_batch_size is null or p_batch_size not between 1 and 1000 or p_visibility_timeout is null or p_visibility_timeout not between 1 and 43200 then
    raise exception 'claim_webhook_deliveries: batch size 1 to 1000, visibility timeout 1 to 43200 s' using errcode = '22023';
  end if;
  select array_agg(m.msg_id order by m.msg_id),
    array_agg(case when jsonb_typeof(m.message -> 'deliveryId') = 'string'
      and m.message ->> 'deliveryId' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then (m.message ->> 'deliveryId')::uuid end order by m.msg_id)
  into v_message_ids, v_delivery_ids
  from pgmq.read('webhook_deliveries', p_visibility_timeout, p_batch_size) m;
  if v_message_ids is null then
    return jsonb_build_object('deliveries', '[]'::jsonb);
  end if;
  v_locked := array(select d.id from public.webhook_deliveries d where d.id = any(v_delivery_ids) for update skip locked);

  for v_row in
    select m.message_id, d.id, d.status, d.message_id as current_message, d.next_attempt_at, s.active,
      m.delivery_id is not null and d.id is null and exists (select 1 from public.webhook_deliveries x where x.id = m.delivery_id) as busy
    from unnest(v_message_ids, v_delivery_ids) as m (message_id, delivery_id)
    left join public.webhook_deliveries d on d.id = m.delivery_id and d.id = any(v_locked)
    left join public.webhook_subscriptions s on s.id = d.subscription_id
  loop
    if v_row.busy then
      v_busy := v_busy || v_row.message_id;
    elsif v_row.id is null or v_row.status <> 'pending' or v_row.current_message is distinct from v_row.message_id then
      v_stale := v_stale || v_row.message_id;
    elsif v_row.next_attempt_at > v_now + interval '1 second' then
      perform pgmq.set_vt('webhook_deliveries', v_row.message_id, greatest(1, floor(extract(epoch from v_row.next_attempt_at - v_now))::integer));
    elsif not v_row.active then
      v_switched_off := v_switched_off || v_row.id;
      v_stale := v_stale || v_row.message_id;
    else
      v_due := v_due || v_row.id;
    end if;
  end loop;

  -- Rare: another call holds the delivery right now.
  perform pgmq.set_vt('webhook_deliveries', b, 1) from unnest(v_busy) b;
  if v_switched_off <> '{}' then
    update public.webhook_deliveries d set status = 'failed', failed_at = v_now, next_attempt_at = null, attempt_started_at = null, message_id = null,
      last_error = 'The subscription was switched off before this delivery was made'
    where d.id = any(v_switched_off);
  end if;
  if v_stale <> '{}' then
    perform pgmq.delete('webhook_deliveries', v_stale);
  end if;
  if v_due = '{}' then
    return jsonb_build_object('deliveries', '[]'::jsonb);
  end if;

  insert into public.webhook_delivery_attempts (delivery_id, workspace_id, attempt, started_at, error, outcome)
  select d.id, d.workspace_id, d.attempts, d.attempt_started_at,
    'The worker making this attempt stopped before it was recorded; whether it arrived is unknown', 'interrupted'
  from public.webhook_deliveries d
  where d.id = any(v_due) and d.attempt_started_at is not null
  on conflict (delivery_id, attempt) do nothing;

  with claimed as (
    update public.webhook_deliveries d set
      attempts = d.attempts + 1, round_attempts = d.round_attempts + 1, attempt_started_at = v_now, last_attempt_at = v_now
    where d.id = any(v_due)
    returning d.*
  ),
  secrets as materialized (
    select s.id, workflows_private.webhook_secret(s.id) as secret
    from public.webhook_subscriptions s
    where s.has_secret and s.id in (select c.subscription_id from claimed c)
  )
  select jsonb_agg(jsonb_build_object(
      'deliveryId', c.id,
      'attempt', c.attempts,
      'roundAttempt', c.round_attempts,
      'dueAt', c.next_attempt_at,
      'url', s.url,
      'secret', k.secret,
      'data', workflows_private.webhook_event_data(e, s, v_now),
      'trace', jsonb_build_object('traceId', e.trace_id, 'spanId', e.trace_span_id),
      'links', jsonb_build_object('log', format('/api/v1/logs/%s', e.id), 'execution', format('/api/v1/logs/executions/%s', e.id)))
    order by c.id)
  into v_claimed
  from claimed c
  join public.webhook_subscriptions s on s.id = c.subscription_id
  join public.workflow_executions e on e.id = c.execution_id
  left join secrets k on k.id = s.id;
  return jsonb_build_object('deliveries', coalesce(v_claimed, '[]'::jsonb));
end;
$$;
comment on function public.claim_webhook_deliveries(integer, integer) is 'The delivery worker takes due webhook deliveries with everything an attempt needs (the secret included). Service role only.';

/** The attempts a worker reports (record_webhook_attempts' argument) as rows, with when each retry is due. */
create function workflows_private.attempt_results(p_attempts jsonb, p_now timestamptz)
returns table (delivery_id uuid, attempt integer, started_at timestamptz, duration_ms integer, status_code integer, error text,
  response_excerpt text, outcome text, next_attempt_at timestamptz, retry_in_ms integer)
language sql
immutable
set search_path = ''
as $$
  select r."deliveryId", r.attempt, r."startedAt", r."durationMs", r."statusCode", left(r.error, 1000),
    nullif(left(regexp_replace(r."responseExcerpt", '[[:cntrl:]]+', ' ', 'g'), 512), ''), r.outcome,
    case when r.outcome = 'retry' then p_now + make_interval(secs => r."retryInMs" / 1000.0) end, r."retryInMs"
  from jsonb_to_recordset(p_attempts) as r ("deliveryId" uuid, attempt integer, "startedAt" timestamptz, "durationMs" integer, "statusCode" integer,
    error text, "responseExcerpt" text, outcome text, "retryInMs" integer);
$$;
comment on function workflows_private.attempt_results(jsonb, timestamptz) is 'A batch of reported delivery attempts as rows.';

/**
 * Records attempts the worker made: `p_attempts` is [{deliveryId, attempt, startedAt (ISO), durationMs,
 * statusCode, error, outcome: delivered | retry | failed, retryInMs (for a retry)}]. Each attempt is
 * kept; its delivery becomes delivered or failed, or waits for its retry (a new message, delayed,
 * replaces the old one). The message that carried the attempt is deleted only now, so an attempt
 * whose worker died is made again. An attempt reported after another one took over (its worker was
 * presumed dead) is kept in the history and changes nothing else. A delivery that dies (a dead
 * letter) extends its subscription's run of dead deliveries and one that arrives ends it; a
 * subscription whose run reaches its `disable_after_dead_deliveries`, having lasted its
 * `disable_after_dead_minutes`, is switched off, with the reason,
 * and its owner told by e-mail.
 * Set-based, one statement per step for the whole batch. Returns how many attempts were recorded.
 */
create function public.record_webhook_attempts(p_attempts jsonb)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := clock_timestamp();
  v_count integer;
  v_done bigint[];
  v_counted uuid[];
  v_switched_off public.webhook_subscriptions;
begin
  if jsonb_typeof(p_attempts) is distinct from 'array' or exists (
    select 1 from jsonb_to_recordset(p_attempts) as r ("deliveryId" uuid, attempt integer, "startedAt" timestamptz, outcome text, "retryInMs" integer)
    where r."deliveryId" is null or r.attempt is null or r."startedAt" is null or r.outcome is null or r.outcome not in ('delivered', 'retry', 'failed')
      or (r.outcome = 'retry' and (r."retryInMs" is null or r."retryInMs" < 0))
  ) then
    raise exception 'record_webhook_attempts: an array of attempts, each with deliveryId, attempt, startedAt and an outcome (delivered, retry with retryInMs, failed)'
      using errcode = '22023';
  end if;

  -- Lock the deliveries in id order, so two recording workers cannot deadlock.
  perform 1 from public.webhook_deliveries d where d.id in (select r.delivery_id from workflows_private.attempt_results(p_attempts, v_now) r) order by d.id for update;

  insert into public.webhook_delivery_attempts (delivery_id, workspace_id, attempt, started_at, duration_ms, status_code, error, response_excerpt, outcome, next_attempt_at)
  select r.delivery_id, d.workspace_id, r.attempt, r.started_at, r.duration_ms, r.status_code, r.error, r.response_excerpt, r.outcome::public.webhook_attempt_outcome, r.next_attempt_at
  from workflows_private.attempt_results(p_attempts, v_now) r join public.webhook_deliveries d on d.id = r.delivery_id
  on conflict (delivery_id, attempt) do update set
    duration_ms = excluded.duration_ms, status_code = excluded.status_code, error = excluded.error, response_excerpt = excluded.response_excerpt,
    outcome = excluded.outcome, next_attempt_at = excluded.next_attempt_at;
  get diagnostics v_count = row_count;

  -- Only the attempt under way moves its delivery on; a retry's message replaces the old one.
  with current_attempts as (
    select r.*, d.message_id as old_message
    from workflows_private.attempt_results(p_attempts, v_now) r join public.webhook_deliveries d on d.id = r.delivery_id
    where d.status = 'pending' and d.attempts = r.attempt and d.attempt_started_at is not null
  ),
  moved as (
    update public.webhook_deliveries d set
      status = case r.outcome when 'delivered' then 'delivered' when 'failed' then 'failed' else 'pending' end::public.webhook_delivery_status,
      next_attempt_at = r.next_attempt_at,
      attempt_started_at = null,
      last_status_code = r.status_code,
      last_error = case when r.outcome = 'delivered' then null else r.error end,
      last_response_excerpt = r.response_excerpt,
      delivered_at = case when r.outcome = 'delivered' then v_now end,
      failed_at = case when r.outcome = 'failed' then v_now end,
      message_id = case when r.outcome = 'retry' then
        (select m from pgmq.send('webhook_deliveries', jsonb_build_object('deliveryId', d.id), floor(r.retry_in_ms / 1000.0)::integer) m) end
    from current_attempts r
    where d.id = r.delivery_id
    returning r.old_message, d.id, d.subscription_id, r.outcome, r.error
  ),
  settled as (
    select m.subscription_id, m.outcome, m.id, m.error from moved m where m.outcome in ('delivered', 'failed')
  ),
  counted as (
    -- A delivery that arrives resets its subscription's run of dead ones; one that dies extends it.
    update public.webhook_subscriptions s set
      consecutive_dead_deliveries = case
        when exists (select 1 from settled x where x.subscription_id = s.id and x.outcome = 'delivered') then 0
        else s.consecutive_dead_deliveries + (select count(*) from settled x where x.subscription_id = s.id)::integer
      end,
      dead_since = case
        when exists (select 1 from settled x where x.subscription_id = s.id and x.outcome = 'delivered') then null
        else coalesce(s.dead_since, v_now)
      end
    where s.id in (select x.subscription_id from settled x)
    returning s.id
  )
  select array_agg(old_message) filter (where old_message is not null), (select array_agg(c.id) from counted c)
  into v_done, v_counted from moved;
  if v_done is not null then
    perform pgmq.delete('webhook_deliveries', v_done);
  end if;

  -- A receiver that keeps failing is switched off rather than sent every run for ever: its
  -- pending deliveries then fail at their next claim, and an editor switches it on again. Its
  -- owner (who made it, else the workflow's owner) is told by e-mail.
  for v_switched_off in
    update public.webhook_subscriptions s set
      active = false, disabled_at = v_now,
      disabled_reason = (
        select format('Switched off after %s dead deliveries in a row; the last (%s) failed: %s',
          s.consecutive_dead_deliveries, d.id, coalesce(d.last_error, 'no reason recorded'))
        from public.webhook_deliveries d
        where d.subscription_id = s.id and d.status = 'failed'
        order by d.failed_at desc nulls last
        limit 1
      )
    where s.id = any(v_counted) and s.active and s.consecutive_dead_deliveries >= s.disable_after_dead_deliveries
      and s.dead_since <= v_now - make_interval(mins => s.disable_after_dead_minutes)
    returning s.*
  loop
    perform workflows_private.notify_owner('subscription_switched_off', v_switched_off.workspace_id, v_switched_off.workflow_id,
      coalesce(v_switched_off.created_by, workflows_private.workflow_owner(v_switched_off.workflow_id)),
      format('[Orbita] Webhook switched off: %s', v_switched_off.url),
      format('Completion webhooks of workflow "%s" to %s were switched off. %s. Switch the subscription back on once the receiver is fixed, and replay its dead letters with redeliver_failed_webhooks.',
        (select w.name from public.workflows w where w.id = v_switched_off.workflow_id), v_switched_off.url, v_switched_off.disabled_reason),
      jsonb_build_object('subscriptionId', v_switched_off.id, 'url', v_switched_off.url, 'disabledReason', v_switched_off.disabled_reason));
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
    delivered_at = null, failed_at = null, message_id = (select m from pgmq.send('webhook_deliveries', jsonb_build_object('deliveryId', d.id)) m)
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
 * Replays a subscription's dead letters: its failed deliveries of runs that ended from `p_since`
 * until `p_until` (each bound optional, inclusive), oldest first, at most 1,000 a call (call again
 * until it answers 0), as redeliver_webhook does one: for after a receiver was down longer than
 * the retry schedule. Editors of the workspace (or the service role); PT404 for a subscription the
 * caller may not see; 22023 for a range that ends before it starts. Returns how many were queued.
 */
create function public.redeliver_failed_webhooks(p_subscription_id uuid, p_since timestamptz default null, p_until timestamptz default null)
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
  if p_until < p_since then
    raise exception 'The range ends (%) before it starts (%)', p_until, p_since using errcode = '22023';
  end if;
  for v_id in
    select d.id from public.webhook_deliveries d
    where d.subscription_id = p_subscription_id and d.status = 'failed'
      and (p_since is null or d.created_at >= p_since) and (p_until is null or d.created_at <= p_until)
    order by d.created_at, d.id
    limit 1000
    for update
  loop
    perform workflows_private.restart_delivery(v_id);
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$;
comment on function public.redeliver_failed_webhooks(uuid, timestamptz, timestamptz) is 'Replays a subscription''s dead letters in a time range, up to 1,000 a call (same ids). Editors.';

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
  public.redeliver_failed_webhooks(uuid, timestamptz, timestamptz),
  workflows_private.queue_webhook_deliveries(),
  workflows_private.webhook_event_data(public.workflow_executions, public.webhook_subscriptions, timestamptz),
  workflows_private.restart_delivery(uuid),
  workflows_private.attempt_results(jsonb, timestamptz)
  from public, anon, authenticated, service_role;
grant execute on function
  public.claim_webhook_deliveries(integer, integer),
  public.record_webhook_attempts(jsonb)
  to service_role;
grant execute on function
  public.redeliver_webhook(uuid),
  public.redeliver_failed_webhooks(uuid, timestamptz, timestamptz)
  to authenticated, service_role;
