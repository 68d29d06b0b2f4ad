-- Workflow service, issue 32 item 6: alerts (Sim's workspace alerts). A rule watches one workflow,
-- or every workflow of a workspace, for one condition:
--
-- - consecutive_failures: the last `threshold` runs that ended completed or failed all failed;
-- - failure_rate:         of the runs started in the window (at least `min_runs`), the share that
--                         failed is `threshold` (0 to 1) or more;
-- - p95_duration:         of those runs (at least `min_runs`), the 95th percentile of their
--                         duration is over `threshold` milliseconds;
-- - cost_per_run:         a run started in the window cost more than `threshold`;
-- - no_runs:              no run was admitted in the window (a rule younger than its window waits).
--
-- pg_cron evaluates every enabled rule once a minute (evaluate_alert_rules, with an explicit
-- p_now so tests move the clock). A rule whose condition holds fires, at most once per cooldown:
-- an event is recorded in workflow_alert_events and a message queued for the `workflow-alerts`
-- function, which e-mails its recipients through Resend or POSTs a signed event to a webhook
-- subscription's receiver. Each condition is one indexed read per rule (the workflow's or the
-- workspace's runs by time), so an evaluation is bounded by the number of rules, not of runs.
--
-- Rules are managed through the data API: members read them, editors write them; events are read
-- by members and written only here.

create type public.workflow_alert_kind as enum ('consecutive_failures', 'failure_rate', 'p95_duration', 'cost_per_run', 'no_runs');
comment on type public.workflow_alert_kind is 'What an alert rule watches: consecutive_failures, failure_rate, p95_duration, cost_per_run or no_runs.';
create type public.workflow_alert_channel as enum ('email', 'webhook');
comment on type public.workflow_alert_channel is 'How an alert is delivered: email (through Resend) or webhook (a signed POST to a webhook subscription''s receiver).';
create type public.workflow_alert_delivery as enum ('pending', 'sent', 'failed');
create type public.workflow_alert_source as enum ('rule', 'schedule_paused', 'subscription_switched_off');
comment on type public.workflow_alert_source is 'What raised an alert event: an alert rule, or the service telling an owner that it paused their schedule or switched off their webhook subscription.';
comment on type public.workflow_alert_delivery is 'pending (queued for the alerts worker), sent, or failed (every attempt used; last_error says why).';

create table public.workflow_alert_rules (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  workflow_id uuid,
  name text not null,
  kind public.workflow_alert_kind not null,
  threshold numeric,
  window_minutes integer not null default 60,
  min_runs integer not null default 10,
  cooldown_minutes integer not null default 60,
  channel public.workflow_alert_channel not null,
  email_to text[] not null default '{}',
  webhook_subscription_id uuid references public.webhook_subscriptions (id) on delete restrict,
  enabled boolean not null default true,
  firing boolean not null default false,
  last_fired_at timestamptz,
  created_by uuid default auth.uid() references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (workspace_id, workflow_id) references public.workflows (workspace_id, id) on delete cascade,
  constraint workflow_alert_rules_name_length check (char_length(name) between 1 and 100),
  constraint workflow_alert_rules_window_range check (window_minutes between 1 and 10080),
  constraint workflow_alert_rules_min_runs_range check (min_runs between 1 and 10000),
  constraint workflow_alert_rules_cooldown_range check (cooldown_minutes between 1 and 10080)
);
comment on table public.workflow_alert_rules is 'Alert rules of a workspace: a condition on one workflow''s runs (or every workflow''s), and where to send it. Members read, editors write; evaluate_alert_rules fires them.';
comment on column public.workflow_alert_rules.id is 'Rule id.';
comment on column public.workflow_alert_rules.workspace_id is 'The workspace (taken from the workflow when one is given).';
comment on column public.workflow_alert_rules.workflow_id is 'The workflow watched; null watches every workflow of the workspace together.';
comment on column public.workflow_alert_rules.name is 'A name for people (1 to 100 characters), in the alert''s subject.';
comment on column public.workflow_alert_rules.kind is 'The condition: consecutive_failures, failure_rate, p95_duration, cost_per_run or no_runs.';
comment on column public.workflow_alert_rules.threshold is 'consecutive_failures: runs, 1 to 100; failure_rate: a share above 0, at most 1; p95_duration: milliseconds, 1 to 86,400,000; cost_per_run: above 0; no_runs: none (null).';
comment on column public.workflow_alert_rules.window_minutes is 'The window of failure_rate, p95_duration, cost_per_run and no_runs: 1 to 10,080 minutes (7 days), default 60.';
comment on column public.workflow_alert_rules.min_runs is 'failure_rate and p95_duration judge a window only with at least this many ended runs: 1 to 10,000, default 10.';
comment on column public.workflow_alert_rules.cooldown_minutes is 'After firing, the rule does not fire again for this long while its condition holds: 1 to 10,080 minutes, default 60.';
comment on column public.workflow_alert_rules.channel is 'email or webhook.';
comment on column public.workflow_alert_rules.email_to is 'The recipients of an email rule: 1 to 10 addresses.';
comment on column public.workflow_alert_rules.webhook_subscription_id is 'A webhook rule''s receiver: a subscription of the same workspace, whose URL and secret sign and carry the alert (it cannot be deleted while a rule uses it).';
comment on column public.workflow_alert_rules.enabled is 'False stops evaluating the rule.';
comment on column public.workflow_alert_rules.firing is 'Whether its condition held at the last evaluation (the evaluator''s to write). Read-only.';
comment on column public.workflow_alert_rules.last_fired_at is 'When it last fired (the evaluator''s to write). Read-only.';
comment on column public.workflow_alert_rules.created_by is 'Who created it.';
comment on column public.workflow_alert_rules.created_at is 'When it was created.';
comment on column public.workflow_alert_rules.updated_at is 'When it last changed.';

create index workflow_alert_rules_workspace_idx on public.workflow_alert_rules (workspace_id);
create index workflow_alert_rules_workflow_idx on public.workflow_alert_rules (workflow_id);
create index workflow_alert_rules_subscription_idx on public.workflow_alert_rules (webhook_subscription_id);
create index workflow_alert_rules_enabled_idx on public.workflow_alert_rules (id) where enabled;

create table public.workflow_alert_events (
  id uuid primary key default gen_random_uuid(),
  source public.workflow_alert_source not null default 'rule',
  rule_id uuid references public.workflow_alert_rules (id) on delete cascade,
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  workflow_id uuid,
  kind public.workflow_alert_kind,
  observed numeric,
  channel public.workflow_alert_channel not null,
  email_to text[] not null default '{}',
  webhook_subscription_id uuid references public.webhook_subscriptions (id) on delete cascade,
  subject text not null,
  message text not null,
  data jsonb not null default '{}',
  fired_at timestamptz not null,
  delivery public.workflow_alert_delivery not null default 'pending',
  attempts integer not null default 0,
  last_error text,
  sent_at timestamptz
);
comment on table public.workflow_alert_events is 'Every alert sent or to send: a rule that fired, or an owner told that the service paused their schedule or switched off their subscription; each holds where it goes, as it was when raised. Written only by the alert functions; members read them.';
comment on column public.workflow_alert_events.source is 'rule, schedule_paused or subscription_switched_off.';
comment on column public.workflow_alert_events.channel is 'email or webhook, as the rule (or the owner notice: email) said when it was raised.';
comment on column public.workflow_alert_events.email_to is 'The recipients of an e-mail.';
comment on column public.workflow_alert_events.webhook_subscription_id is 'The receiver of a webhook alert.';
comment on column public.workflow_alert_events.subject is 'The e-mail''s subject.';
comment on column public.workflow_alert_events.data is 'The webhook event''s data (and what an e-mail reports), fixed when it was raised.';
comment on column public.workflow_alert_events.id is 'Event id (the delivered alert''s id and Idempotency-Key).';
comment on column public.workflow_alert_events.rule_id is 'The rule that fired (null for an owner notice).';
comment on column public.workflow_alert_events.workspace_id is 'The workspace (row-level security reads it).';
comment on column public.workflow_alert_events.workflow_id is 'The rule''s workflow (null for a workspace rule).';
comment on column public.workflow_alert_events.kind is 'The rule''s kind when it fired (null for an owner notice).';
comment on column public.workflow_alert_events.observed is 'What was measured: failed runs in a row, the failure share, the p95 in ms, the highest cost, or 0 runs.';
comment on column public.workflow_alert_events.message is 'The alert in words, as delivered.';
comment on column public.workflow_alert_events.fired_at is 'When it was raised.';
comment on column public.workflow_alert_events.delivery is 'pending, sent or failed.';
comment on column public.workflow_alert_events.attempts is 'Delivery attempts made.';
comment on column public.workflow_alert_events.last_error is 'Why the latest attempt failed.';
comment on column public.workflow_alert_events.sent_at is 'When it was delivered.';

create index workflow_alert_events_rule_idx on public.workflow_alert_events (rule_id, fired_at desc);
create index workflow_alert_events_subscription_idx on public.workflow_alert_events (webhook_subscription_id);
create index workflow_alert_events_workspace_idx on public.workflow_alert_events (workspace_id, fired_at desc);

-- Writing rules ----------------------------------------------------------------------------------------

/**
 * Trigger, before a rule's settings are written: takes the workspace from the workflow when one
 * is named (refusing an API user who may not edit it with 42501, whether or not it exists; the
 * service role is trusted), and checks the threshold against the kind and the channel's settings
 * (23514, naming the field). The evaluation record (firing, last fired) is not among the columns
 * API users may write, and the evaluator's updates of it do not fire this trigger.
 */
create function workflows_private.prepare_alert_rule()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_api_user boolean := (select auth.role()) in ('authenticated', 'anon');
begin
  if new.workflow_id is not null then
    select w.workspace_id into new.workspace_id from public.workflows w where w.id = new.workflow_id;
  elsif tg_op = 'UPDATE' then
    new.workspace_id := old.workspace_id;
  end if;
  if new.workspace_id is null or (v_api_user and not workflows_private.has_workspace_role(new.workspace_id, 'editor')) then
    raise exception 'Only an editor of the workspace may manage its alert rules' using errcode = '42501';
  end if;

  if new.kind = 'no_runs' then
    if new.threshold is not null then
      raise exception 'A no_runs rule takes no threshold: it fires when the window had no run' using errcode = '23514';
    end if;
  elsif new.threshold is null then
    raise exception 'A % rule needs a threshold', new.kind using errcode = '23514';
  elsif new.kind = 'consecutive_failures' and (new.threshold <> trunc(new.threshold) or new.threshold not between 1 and 100) then
    raise exception 'The threshold of a consecutive_failures rule is a whole number of runs, 1 to 100' using errcode = '23514';
  elsif new.kind = 'failure_rate' and not (new.threshold > 0 and new.threshold <= 1) then
    raise exception 'The threshold of a failure_rate rule is a share above 0 and at most 1 (0.25 is 25%%)' using errcode = '23514';
  elsif new.kind = 'p95_duration' and new.threshold not between 1 and 86400000 then
    raise exception 'The threshold of a p95_duration rule is milliseconds, 1 to 86,400,000 (a day)' using errcode = '23514';
  elsif new.kind = 'cost_per_run' and not new.threshold > 0 then
    raise exception 'The threshold of a cost_per_run rule is a cost above 0' using errcode = '23514';
  end if;

  if new.channel = 'email' then
    if cardinality(new.email_to) not between 1 and 10
      or exists (select 1 from unnest(new.email_to) a where a !~ '^[^@[:space:][:cntrl:]]+@[^@[:space:][:cntrl:]]+\.[^@[:space:][:cntrl:]]+$' or char_length(a) > 254) then
      raise exception 'An email rule sends to 1 to 10 e-mail addresses (email_to)' using errcode = '23514';
    end if;
    new.webhook_subscription_id := null;
  else
    if not exists (select 1 from public.webhook_subscriptions s where s.id = new.webhook_subscription_id and s.workspace_id = new.workspace_id) then
      raise exception 'A webhook rule names a webhook subscription of the same workspace (webhook_subscription_id)' using errcode = '23514';
    end if;
    new.email_to := '{}';
  end if;

  if tg_op = 'UPDATE' then
    new.updated_at := now();
  end if;
  return new;
end;
$$;
comment on function workflows_private.prepare_alert_rule() is 'Trigger: fills the workspace, checks the writer, the threshold for the kind and the channel settings, and keeps the evaluation record.';

create trigger workflow_alert_rules_prepare
  before insert or update of workspace_id, workflow_id, name, kind, threshold, window_minutes, min_runs, cooldown_minutes,
    channel, email_to, webhook_subscription_id, enabled
  on public.workflow_alert_rules
  for each row execute function workflows_private.prepare_alert_rule();

-- Evaluating rules -------------------------------------------------------------------------------------

/**
 * The runs `p_rule` watches that were admitted after `p_since` and up to `p_until`, newest first,
 * at most `p_limit` (null: all), only those that ended completed or failed when `p_ended_only`.
 * One range of the index by workflow, or by workspace, and admission time; the two scopes are two
 * statements so that each keeps its index and its cached plan.
 */
create function workflows_private.alert_scope_runs(p_rule public.workflow_alert_rules, p_since timestamptz, p_until timestamptz,
  p_ended_only boolean, p_limit integer)
returns table (status public.workflow_run_status, duration_ms integer, cost_total numeric)
language plpgsql
stable
set search_path = ''
as $$
begin
  if p_rule.workflow_id is not null then
    return query select e.status, e.duration_ms, e.cost_total from public.workflow_executions e
      where e.workflow_id = p_rule.workflow_id and e.created_at > p_since and e.created_at <= p_until
        and (not p_ended_only or e.status in ('completed', 'failed'))
      order by e.created_at desc limit p_limit;
  else
    return query select e.status, e.duration_ms, e.cost_total from public.workflow_executions e
      where e.workspace_id = p_rule.workspace_id and e.created_at > p_since and e.created_at <= p_until
        and (not p_ended_only or e.status in ('completed', 'failed'))
      order by e.created_at desc limit p_limit;
  end if;
end;
$$;
comment on function workflows_private.alert_scope_runs(public.workflow_alert_rules, timestamptz, timestamptz, boolean, integer) is
  'The runs an alert rule watches in a time range, newest first (status, duration, cost).';

/**
 * What `p_rule` measures at `p_now`: failed runs among its last `threshold` ended ones, the failure
 * share, the p95 duration in ms, the highest cost, or whether a run was admitted (0 or 1), over the
 * rule's workflow or its workspace. Null when the window holds fewer than `min_runs` ended runs
 * (failure_rate, p95_duration). Only the rule's own kind is read.
 */
create function workflows_private.alert_observation(p_rule public.workflow_alert_rules, p_now timestamptz)
returns numeric
language sql
stable
set search_path = ''
as $$
  select case p_rule.kind
    when 'consecutive_failures' then (
      select count(*) filter (where r.status = 'failed')
      from workflows_private.alert_scope_runs(p_rule, '-infinity', p_now, true, p_rule.threshold::integer) r)
    when 'no_runs' then (
      select count(*) from workflows_private.alert_scope_runs(p_rule, p_now - make_interval(mins => p_rule.window_minutes), p_now, false, 1) r)
    else (
      select case
        when p_rule.kind <> 'cost_per_run' and count(*) < p_rule.min_runs then null
        when p_rule.kind = 'failure_rate' then (count(*) filter (where r.status = 'failed'))::numeric / count(*)
        when p_rule.kind = 'p95_duration' then (percentile_cont(0.95) within group (order by r.duration_ms))::numeric
        else max(r.cost_total) end
      from workflows_private.alert_scope_runs(p_rule, p_now - make_interval(mins => p_rule.window_minutes), p_now, true, null) r)
  end;
$$;
comment on function workflows_private.alert_observation(public.workflow_alert_rules, timestamptz) is 'What an alert rule measures at a time (null when its window has too few runs to judge).';

/** Whether `p_observed` breaks `p_rule` (a no_runs rule only once it is older than its window). */
create function workflows_private.alert_breached(p_rule public.workflow_alert_rules, p_observed numeric, p_now timestamptz)
returns boolean
language sql
immutable
set search_path = ''
as $$
  select coalesce(case p_rule.kind
    when 'consecutive_failures' then p_observed >= p_rule.threshold
    when 'failure_rate' then p_observed >= p_rule.threshold
    when 'p95_duration' then p_observed > p_rule.threshold
    when 'cost_per_run' then p_observed > p_rule.threshold
    when 'no_runs' then p_observed = 0 and p_rule.created_at <= p_now - make_interval(mins => p_rule.window_minutes)
  end, false);
$$;
comment on function workflows_private.alert_breached(public.workflow_alert_rules, numeric, timestamptz) is 'Whether an observation breaks its rule.';

/** The alert in words, as e-mails and webhooks carry it. */
create function workflows_private.alert_message(p_rule public.workflow_alert_rules, p_observed numeric)
returns text
language sql
stable
set search_path = ''
as $$
  select format('%s: %s', coalesce(format('Workflow "%s"', (select w.name from public.workflows w where w.id = p_rule.workflow_id)), 'Every workflow of the workspace'),
    case p_rule.kind
      when 'consecutive_failures' then format('the last %s runs failed', p_observed)
      when 'failure_rate' then format('%s%% of the runs of the last %s minutes failed (threshold %s%%)',
        round(p_observed * 100, 1), p_rule.window_minutes, round(p_rule.threshold * 100, 1))
      when 'p95_duration' then format('the p95 duration of the last %s minutes is %s ms (threshold %s ms)', p_rule.window_minutes, round(p_observed), p_rule.threshold)
      when 'cost_per_run' then format('a run of the last %s minutes cost %s (threshold %s)', p_rule.window_minutes, trim_scale(p_observed), p_rule.threshold)
      else format('no run in the last %s minutes', p_rule.window_minutes)
    end);
$$;
comment on function workflows_private.alert_message(public.workflow_alert_rules, numeric) is 'An alert''s message, naming the workflow and what was measured against the threshold.';

/**
 * Evaluates every enabled rule at `p_now` (pg_cron, every minute): records whether its condition
 * holds (`firing`), and fires those whose condition holds and that have not fired within their
 * cooldown: an event in workflow_alert_events and a message on the `workflow_alerts` queue for
 * the alerts worker. Rules are claimed with SKIP LOCKED, so two evaluations at once never fire a
 * rule twice. Returns how many fired.
 */
create function workflows_private.evaluate_alert_rules(p_now timestamptz default now())
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_fired integer;
begin
  with evaluated as (
    select r as rule, o.observed, b.breached,
      b.breached and (r.last_fired_at is null or r.last_fired_at <= p_now - make_interval(mins => r.cooldown_minutes)) as fire
    from public.workflow_alert_rules r
    cross join lateral (select workflows_private.alert_observation(r, p_now) as observed) o
    cross join lateral (select workflows_private.alert_breached(r, o.observed, p_now) as breached) b
    where r.enabled
    for update of r skip locked
  ),
  recorded as (
    -- Only what changed is written: a quiet rule costs its reads and no write.
    update public.workflow_alert_rules r set firing = a.breached,
      last_fired_at = case when a.fire then p_now else r.last_fired_at end
    from evaluated a where r.id = (a.rule).id and (a.fire or r.firing is distinct from a.breached)
  ),
  fired as (
    insert into public.workflow_alert_events (source, rule_id, workspace_id, workflow_id, kind, observed, channel, email_to, webhook_subscription_id,
      subject, message, data, fired_at)
    select 'rule', (a.rule).id, (a.rule).workspace_id, (a.rule).workflow_id, (a.rule).kind, a.observed, (a.rule).channel, (a.rule).email_to,
      (a.rule).webhook_subscription_id, format('[Orbita alert] %s', (a.rule).name), m.message,
      jsonb_build_object('ruleId', (a.rule).id, 'ruleName', (a.rule).name, 'kind', (a.rule).kind, 'workspaceId', (a.rule).workspace_id,
        'workflowId', (a.rule).workflow_id, 'observed', a.observed, 'threshold', (a.rule).threshold, 'windowMinutes', (a.rule).window_minutes,
        'message', m.message, 'firedAt', p_now),
      p_now
    from evaluated a
    cross join lateral (select workflows_private.alert_message(a.rule, a.observed) as message) m
    where a.fire
    returning id
  )
  select count(*) into v_fired from fired f cross join lateral pgmq.send('workflow_alerts', jsonb_build_object('eventId', f.id)) m;
  return v_fired;
end;
$$;
comment on function workflows_private.evaluate_alert_rules(timestamptz) is 'Evaluates every enabled alert rule at a time and fires those due (event + queue message). Returns how many fired.';

-- Telling owners -----------------------------------------------------------------------------------------

/** Who owns a workflow: its creator, or when that user is gone, its workspace's creator. */
create function workflows_private.workflow_owner(p_workflow_id uuid)
returns uuid
language sql
stable
set search_path = ''
as $$
  select coalesce(w.created_by, ws.created_by) from public.workflows w join public.workspaces ws on ws.id = w.workspace_id where w.id = p_workflow_id;
$$;
comment on function workflows_private.workflow_owner(uuid) is 'The user who owns a workflow: its creator, else its workspace''s creator.';

/**
 * Tells `p_user_id` by e-mail that the service changed something of theirs on its own (paused a
 * schedule, switched off a webhook subscription): an alert event to their address, delivered by
 * the alerts worker as a fired rule is, in the transaction that made the change. Nothing when the
 * user is gone or has no address. Returns the event id, or null.
 */
create function workflows_private.notify_owner(p_source public.workflow_alert_source, p_workspace_id uuid, p_workflow_id uuid,
  p_user_id uuid, p_subject text, p_message text, p_data jsonb)
returns uuid
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_email text;
  v_id uuid;
begin
  select u.email into v_email from auth.users u where u.id = p_user_id;
  if v_email is null then
    return null;
  end if;
  insert into public.workflow_alert_events (source, workspace_id, workflow_id, channel, email_to, subject, message, data, fired_at)
  values (p_source, p_workspace_id, p_workflow_id, 'email', array[v_email], p_subject, p_message,
    p_data || jsonb_build_object('workspaceId', p_workspace_id, 'workflowId', p_workflow_id, 'message', p_message, 'firedAt', now()), now())
  returning id into v_id;
  perform pgmq.send('workflow_alerts', jsonb_build_object('eventId', v_id));
  return v_id;
end;
$$;
comment on function workflows_private.notify_owner(public.workflow_alert_source, uuid, uuid, uuid, text, text, jsonb) is
  'E-mails a user that the service paused their schedule or switched off their subscription (an alert event for the alerts worker).';

-- Delivering alerts ------------------------------------------------------------------------------------

/**
 * The alerts worker takes up to `p_batch_size` alert events (pgmq.read on workflow_alerts, hidden
 * for `p_visibility_timeout` seconds), each with what its delivery needs: {messageId, eventId,
 * attempt, channel, emailTo (email), url and secret (webhook: the subscription's, the secret
 * decrypted or null), subject, message, event (the webhook event's data, with its source)}.
 * Messages of events already delivered or given up, or gone with their workspace, are dropped; an event on
 * its sixth read is given up (failed, last_error kept) rather than tried for ever. Service role only.
 */
create function public.claim_alert_deliveries(p_batch_size integer default 20, p_visibility_timeout integer default 60)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_message_ids bigint[];
  v_reads integer[];
  v_event_ids uuid[];
  v_alerts jsonb;
begin
  if p_batch_size is null or p_batch_size not between 1 and 100 or p_visibility_timeout is null or p_visibility_timeout not between 1 and 43200 then
    raise exception 'claim_alert_deliveries: batch size 1 to 100, visibility timeout 1 to 43200 s' using errcode = '22023';
  end if;
  select coalesce(array_agg(m.msg_id), '{}'), coalesce(array_agg(m.read_ct), '{}'),
    coalesce(array_agg(case when m.message ->> 'eventId' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then (m.message ->> 'eventId')::uuid end), '{}')
  into v_message_ids, v_reads, v_event_ids
  from pgmq.read('workflow_alerts', p_visibility_timeout, p_batch_size) m;
  if cardinality(v_message_ids) = 0 then
    return jsonb_build_object('alerts', '[]'::jsonb);
  end if;

  update public.workflow_alert_events e set delivery = 'failed', last_error = coalesce(e.last_error, 'not delivered') || '; gave up after 5 attempts'
  from unnest(v_event_ids, v_reads) as c (event_id, read_ct)
  where c.event_id = e.id and c.read_ct > 5 and e.delivery = 'pending';
  perform pgmq.delete('workflow_alerts', array_agg(c.msg_id))
  from unnest(v_message_ids, v_event_ids) as c (msg_id, event_id)
  left join public.workflow_alert_events e on e.id = c.event_id
  where e.id is null or e.delivery <> 'pending'
  having count(*) > 0;

  with claimed as (
    update public.workflow_alert_events e set attempts = e.attempts + 1
    from unnest(v_message_ids, v_event_ids) as c (msg_id, event_id)
    where c.event_id = e.id and e.delivery = 'pending'
    returning e.*, c.msg_id
  )
  select jsonb_agg(jsonb_build_object(
      'messageId', c.msg_id, 'eventId', c.id, 'attempt', c.attempts, 'channel', c.channel, 'emailTo', to_jsonb(c.email_to),
      'url', s.url, 'secret', case when s.has_secret then workflows_private.webhook_secret(s.id) end,
      'subject', c.subject, 'message', c.message, 'event', c.data || jsonb_build_object('source', c.source))
    order by c.fired_at)
  into v_alerts
  from claimed c
  left join public.webhook_subscriptions s on s.id = c.webhook_subscription_id;
  return jsonb_build_object('alerts', coalesce(v_alerts, '[]'::jsonb));
end;
$$;
comment on function public.claim_alert_deliveries(integer, integer) is 'The alerts worker takes fired alerts with what their delivery needs (the webhook secret included). Service role only.';

/**
 * Records how the worker's deliveries went: `p_results` is [{eventId, messageId, ok, error}]. A
 * delivered alert is sent and its message deleted; a failed one keeps its error and its message,
 * which comes back after the visibility timeout for another attempt (claim gives up after five).
 * Returns how many were recorded sent.
 */
create function public.record_alert_deliveries(p_results jsonb)
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_sent integer;
begin
  if jsonb_typeof(p_results) is distinct from 'array' or exists (
    select 1 from jsonb_to_recordset(p_results) as r ("eventId" uuid, "messageId" bigint, ok boolean)
    where r."eventId" is null or r."messageId" is null or r.ok is null
  ) then
    raise exception 'record_alert_deliveries: an array of {eventId, messageId, ok, error}' using errcode = '22023';
  end if;
  with results as (
    select r."eventId" as event_id, r."messageId" as message_id, r.ok, left(r.error, 1000) as error
    from jsonb_to_recordset(p_results) as r ("eventId" uuid, "messageId" bigint, ok boolean, error text)
  ),
  recorded as (
    update public.workflow_alert_events e set
      delivery = case when x.ok then 'sent' else e.delivery end::public.workflow_alert_delivery,
      sent_at = case when x.ok then clock_timestamp() else e.sent_at end,
      last_error = case when x.ok then null else x.error end
    from results x where x.event_id = e.id and e.delivery = 'pending'
    returning e.id, x.ok, x.message_id
  )
  select count(*) filter (where ok) into v_sent from recorded;
  perform pgmq.delete('workflow_alerts', array_agg(r."messageId"))
  from jsonb_to_recordset(p_results) as r ("messageId" bigint, ok boolean) where r.ok having count(*) > 0;
  return v_sent;
end;
$$;
comment on function public.record_alert_deliveries(jsonb) is 'The alerts worker records sent and failed deliveries. Service role only.';

-- Access -----------------------------------------------------------------------------------------------

revoke all on public.workflow_alert_rules, public.workflow_alert_events from public, anon, authenticated;
-- API users write a rule's settings; its evaluation record and dates are the service's.
grant select, delete on public.workflow_alert_rules to authenticated;
grant insert (workspace_id, workflow_id, name, kind, threshold, window_minutes, min_runs, cooldown_minutes, channel, email_to, webhook_subscription_id, enabled),
  update (workspace_id, workflow_id, name, kind, threshold, window_minutes, min_runs, cooldown_minutes, channel, email_to, webhook_subscription_id, enabled)
  on public.workflow_alert_rules to authenticated;
grant select on public.workflow_alert_events to authenticated;
grant all on public.workflow_alert_rules, public.workflow_alert_events to service_role;
alter table public.workflow_alert_rules enable row level security;
alter table public.workflow_alert_events enable row level security;

create policy "Members can read their workspaces' alert rules" on public.workflow_alert_rules
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));
create policy "Editors can add alert rules" on public.workflow_alert_rules
  for insert to authenticated
  with check (workspace_id in (select workflows_private.member_workspace_ids('editor')));
create policy "Editors can change alert rules" on public.workflow_alert_rules
  for update to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('editor')))
  with check (workspace_id in (select workflows_private.member_workspace_ids('editor')));
create policy "Editors can delete alert rules" on public.workflow_alert_rules
  for delete to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('editor')));
create policy "Members can read their workspaces' alert events" on public.workflow_alert_events
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));

revoke execute on function
  workflows_private.workflow_owner(uuid),
  workflows_private.notify_owner(public.workflow_alert_source, uuid, uuid, uuid, text, text, jsonb),
  workflows_private.prepare_alert_rule(),
  workflows_private.alert_scope_runs(public.workflow_alert_rules, timestamptz, timestamptz, boolean, integer),
  workflows_private.alert_observation(public.workflow_alert_rules, timestamptz),
  workflows_private.alert_breached(public.workflow_alert_rules, numeric, timestamptz),
  workflows_private.alert_message(public.workflow_alert_rules, numeric),
  workflows_private.evaluate_alert_rules(timestamptz),
  public.claim_alert_deliveries(integer, integer),
  public.record_alert_deliveries(jsonb)
  from public, anon, authenticated, service_role;
grant execute on function public.claim_alert_deliveries(integer, integer), public.record_alert_deliveries(jsonb) to service_role;

-- The queue and the clock ------------------------------------------------------------------------------
-- Messages are {eventId}; the event holds the rest. The workflow-alerts function drains them.

select pgmq.create('workflow_alerts');
insert into platform.queue_workers (queue_name, function_name, batch_size, visibility_timeout)
values ('workflow_alerts', 'workflow-alerts', 20, 60)
on conflict (queue_name) do nothing;

select cron.schedule('workflows-evaluate-alerts', '* * * * *', $$select workflows_private.evaluate_alert_rules()$$);
