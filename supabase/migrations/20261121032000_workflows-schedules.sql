-- Workflow service, part 5: schedules.
--
-- - public.workflow_schedules: one row per enabled schedule block of a workflow's ACTIVE snapshot,
--   kept by a trigger on workflow_deployments (deploy, promote, roll back, undeploy). Its cron
--   expression (a preset is turned into one here) and time zone are checked at deploy: an invalid
--   one refuses the deploy with the reason (23514, HTTP 400). Members read next and last run times,
--   status and why a schedule was paused through the data API.
-- - workflows_private.fire_due_schedules(p_now): the ticker, run by pg_cron every minute. It claims
--   due schedules with FOR UPDATE SKIP LOCKED, records each occurrence under the unique key
--   (workflow, block, scheduled time) in public.workflow_schedule_runs, so no occurrence ever runs
--   twice, even with two tickers, and admits an async run through admit_trigger_run; the
--   workflow-worker function runs it.
-- - Overlap (the block's `overlap`): an occurrence whose schedule's previous run is still queued or
--   running is skipped (`skip`, the default), waits for it, at most one at a time (`buffer_one`),
--   runs anyway (`allow_all`), or cancels it through cancel_workflow_run and runs (`cancel_running`);
--   its record says which. Misfire: after downtime a schedule fires once, for the first slot it
--   missed, and continues with the first slot after the tick, not once per missed slot.
-- - Jitter (the block's `jitterSeconds`, 0-3600): each occurrence's run starts at its slot plus a
--   delay derived from a hash of (workflow, block, slot), so it is stable and anyone can recompute
--   it; the run's queue message is made visible then, so no worker waits for it.
-- - How one occurrence is fired under the overlap policy and its jitter, and backfill, are in
--   …032800_workflows-schedule-overlap.sql (fire_schedule_occurrence, backfill_workflow_schedule).
-- - A run that ends failed counts towards the schedule's consecutive failures (a completed one
--   resets them); at `max_consecutive_failures` (the block's `maxConsecutiveFailures`, default 3)
--   the schedule is paused, saying why, until resume_workflow_schedule or the next deploy.

create type public.workflow_schedule_status as enum ('active', 'paused');
comment on type public.workflow_schedule_status is 'active: fires at next_run_at; paused: after too many consecutive failures, until resumed or redeployed.';

create table public.workflow_schedules (
  id uuid primary key default gen_random_uuid(),
  workflow_id uuid not null,
  workspace_id uuid not null,
  deployment_id uuid not null references public.workflow_deployments (id) on delete cascade,
  block_id text not null,
  block_name text not null,
  cron_expression text not null,
  timezone text not null,
  status public.workflow_schedule_status not null default 'active',
  paused_reason text,
  paused_at timestamptz,
  next_run_at timestamptz,
  last_run_at timestamptz,
  last_execution_id uuid,
  consecutive_failures integer not null default 0,
  max_consecutive_failures integer not null default 3,
  overlap text not null default 'skip' check (overlap in ('skip', 'buffer_one', 'allow_all', 'cancel_running')),
  jitter_seconds integer not null default 0 check (jitter_seconds between 0 and 3600),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workflow_id, block_id),
  foreign key (workspace_id, workflow_id) references public.workflows (workspace_id, id) on delete cascade
);
comment on table public.workflow_schedules is 'The schedules of active deployments, one per enabled schedule block; kept by deploys, activations and undeploys, fired by the ticker. Members read them.';
comment on column public.workflow_schedules.workflow_id is 'The workflow the schedule runs.';
comment on column public.workflow_schedules.workspace_id is 'Its workspace (row-level security reads it).';
comment on column public.workflow_schedules.deployment_id is 'The active snapshot the schedule block belongs to.';
comment on column public.workflow_schedules.block_id is 'The schedule block runs start from.';
comment on column public.workflow_schedules.block_name is 'Its name, for people reading the row.';
comment on column public.workflow_schedules.cron_expression is 'The five-field cron expression it runs on (a preset turned into one).';
comment on column public.workflow_schedules.timezone is 'The IANA time zone the expression is read in.';
comment on column public.workflow_schedules.status is 'active, or paused after max_consecutive_failures failed runs in a row.';
comment on column public.workflow_schedules.paused_reason is 'Why the schedule was paused, with the last failure.';
comment on column public.workflow_schedules.paused_at is 'When it was paused.';
comment on column public.workflow_schedules.next_run_at is 'The next slot it fires at (null while paused).';
comment on column public.workflow_schedules.last_run_at is 'The latest slot it started a run for (a backfill of earlier slots leaves it).';
comment on column public.workflow_schedules.last_execution_id is 'The run it started most recently: the previous run the overlap policy looks at.';
comment on column public.workflow_schedules.consecutive_failures is 'Failed runs in a row (a completed run resets it).';
comment on column public.workflow_schedules.max_consecutive_failures is 'Failed runs in a row that pause the schedule (the block''s maxConsecutiveFailures, default 3).';
comment on column public.workflow_schedules.overlap is 'What an occurrence does while the previous run is still queued or running: skip, buffer_one, allow_all or cancel_running (the block''s overlap).';
comment on column public.workflow_schedules.jitter_seconds is 'The most an occurrence''s start is delayed after its slot (the block''s jitterSeconds, 0-3600).';
comment on column public.workflow_schedules.created_at is 'When its deployment was activated.';
comment on column public.workflow_schedules.updated_at is 'Last change (a tick, a run ending, a pause or resume).';
create index workflow_schedules_due_idx on public.workflow_schedules (next_run_at) where status = 'active';
create index workflow_schedules_workspace_id_idx on public.workflow_schedules (workspace_id);
create index workflow_schedules_deployment_id_idx on public.workflow_schedules (deployment_id);

create trigger workflow_schedules_touch_updated_at before update on public.workflow_schedules
  for each row execute function workflows_private.touch_updated_at();

create table public.workflow_schedule_runs (
  workflow_id uuid not null,
  block_id text not null,
  scheduled_for timestamptz not null,
  workspace_id uuid not null,
  fired_at timestamptz not null,
  outcome text not null check (outcome in ('started', 'skipped', 'buffered')),
  reason text,
  execution_id uuid,
  source text not null default 'ticker' check (source in ('ticker', 'backfill')),
  jitter_seconds integer,
  starts_at timestamptz,
  cancelled_execution_id uuid,
  primary key (workflow_id, block_id, scheduled_for),
  foreign key (workspace_id, workflow_id) references public.workflows (workspace_id, id) on delete cascade
);
comment on table public.workflow_schedule_runs is 'Every occurrence a schedule fired, once: (workflow, block, scheduled time) is unique, so no occurrence runs twice. Kept 30 days; members read them.';
comment on column public.workflow_schedule_runs.workflow_id is 'The workflow.';
comment on column public.workflow_schedule_runs.block_id is 'The schedule block.';
comment on column public.workflow_schedule_runs.scheduled_for is 'The slot (the run''s <schedule.scheduledFor>).';
comment on column public.workflow_schedule_runs.workspace_id is 'Its workspace (row-level security reads it).';
comment on column public.workflow_schedule_runs.fired_at is 'When the ticker (or the backfill) took it.';
comment on column public.workflow_schedule_runs.outcome is 'started (a run was admitted), skipped (see reason) or buffered (waiting for the previous run to end; then started or skipped).';
comment on column public.workflow_schedule_runs.reason is 'Why it was skipped or buffered (the previous run still going, the admission''s refusal), or what it did first (waited for, or cancelled, the previous run).';
comment on column public.workflow_schedule_runs.execution_id is 'The run it started.';
comment on column public.workflow_schedule_runs.source is 'ticker (the slot came due) or backfill (an editor asked for a past range).';
comment on column public.workflow_schedule_runs.jitter_seconds is 'The delay after the slot its run was given (see workflows_private.schedule_jitter).';
comment on column public.workflow_schedule_runs.starts_at is 'When its run was due to start: the slot plus the jitter, or later when it waited or was backfilled.';
comment on column public.workflow_schedule_runs.cancelled_execution_id is 'The previous run it cancelled (overlap cancel_running).';
create index workflow_schedule_runs_workspace_id_idx on public.workflow_schedule_runs (workspace_id);
create index workflow_schedule_runs_scheduled_for_idx on public.workflow_schedule_runs (scheduled_for);
-- buffer_one keeps at most one occurrence waiting per schedule; the index makes that a fact, and
-- is how a run's end finds the one it releases.
create unique index workflow_schedule_runs_buffered_idx on public.workflow_schedule_runs (workflow_id, block_id) where outcome = 'buffered';

/**
 * The cron expression a schedule block's config runs on: `cronExpression` (scheduleType cron, the
 * default), or the preset's: minutes → a minute step of N (every N minutes), hourly → `M * * * *`, daily → `MM HH * * *`,
 * weekly → `MM HH * * D`. The block's JSON Schema and rules have already checked the fields.
 */
create function workflows_private.schedule_cron(p_config jsonb)
returns text
language plpgsql
immutable
set search_path = ''
as $$
declare
  v_time text[];
begin
  case coalesce(p_config ->> 'scheduleType', 'cron')
    when 'minutes' then
      return format('*/%s * * * *', (p_config ->> 'minutesInterval')::integer);
    when 'hourly' then
      return format('%s * * * *', coalesce((p_config ->> 'hourlyMinute')::integer, 0));
    when 'daily' then
      v_time := string_to_array(p_config ->> 'dailyTime', ':');
      return format('%s %s * * *', v_time[2]::integer, v_time[1]::integer);
    when 'weekly' then
      v_time := string_to_array(p_config ->> 'weeklyTime', ':');
      return format('%s %s * * %s', v_time[2]::integer, v_time[1]::integer,
        array_position(array['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'], p_config ->> 'weeklyDay') - 1);
    else
      return btrim(p_config ->> 'cronExpression');
  end case;
end;
$$;
comment on function workflows_private.schedule_cron(jsonb) is 'The cron expression of a schedule block''s config: its cronExpression or its preset''s.';

/** Raises 23514 (HTTP 400) for a deploy whose schedule block cannot run, as assert_valid_state words issues. */
create function workflows_private.refuse_schedule(p_block_id text, p_block jsonb, p_field text, p_reason text)
returns void
language plpgsql
immutable
set search_path = ''
as $$
declare
  v_issue jsonb := workflows_private.block_issue(p_block || jsonb_build_object('id', p_block_id), 'invalid_schedule', format('blocks.%s.config.%s', p_block_id, p_field), p_reason);
begin
  raise exception '%', v_issue ->> 'message' using errcode = '23514', detail = jsonb_build_array(v_issue)::text,
    hint = 'Fix the schedule block''s cron expression or time zone and deploy again.';
end;
$$;
comment on function workflows_private.refuse_schedule(text, jsonb, text, text) is 'Raises the 23514 that refuses a deploy with an unusable schedule, naming the block and field.';

/**
 * Keeps workflow_schedules in step with a workflow's active snapshot: a snapshot becoming active
 * gets a schedule per enabled schedule block (its next run after now; its last run as its earlier
 * occurrences say; active again, failures forgotten, so a redeploy resumes a paused schedule),
 * one becoming inactive loses them. An invalid expression or time zone, one that never runs, or a
 * jitter as long as the shortest gap among its next ten runs (jittered runs could then swap
 * order), refuses the activation (23514).
 */
create function workflows_private.sync_schedules()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_block record;
  v_config jsonb;
  v_cron text;
  v_timezone text;
  v_next timestamptz;
  v_last public.workflow_schedule_runs;
  v_kept text[] := '{}'::text[];
  v_jitter integer;
  v_at timestamptz;
  v_after timestamptz;
  v_gap integer;
begin
  if tg_op = 'UPDATE' and old.is_active and not new.is_active then
    delete from public.workflow_schedules s where s.deployment_id = new.id;
  end if;
  if not new.is_active or (tg_op = 'UPDATE' and old.is_active) then
    return null;
  end if;
  for v_block in
    select b.key as id, b.value as block from jsonb_each(coalesce(new.state -> 'blocks', '{}'::jsonb)) b
    where b.value ->> 'type' = 'schedule' and coalesce(b.value ->> 'enabled', 'true') <> 'false'
    order by b.key collate "C"
  loop
    v_config := coalesce(v_block.block -> 'config', '{}'::jsonb);
    v_timezone := coalesce(nullif(btrim(v_config ->> 'timezone'), ''), 'UTC');
    begin
      perform workflows_private.check_timezone(v_timezone);
    exception when invalid_parameter_value then
      perform workflows_private.refuse_schedule(v_block.id, v_block.block, 'timezone', sqlerrm);
    end;
    v_cron := workflows_private.schedule_cron(v_config);
    begin
      v_next := workflows_private.cron_next(v_cron, v_timezone, now());
    exception when invalid_parameter_value then
      perform workflows_private.refuse_schedule(v_block.id, v_block.block, 'cronExpression', format('cronExpression "%s": %s', v_cron, sqlerrm));
    end;
    if v_next is null then
      perform workflows_private.refuse_schedule(v_block.id, v_block.block, 'cronExpression', format('cronExpression "%s" never runs', v_cron));
    end if;
    v_jitter := coalesce((v_config ->> 'jitterSeconds')::integer, 0);
    if v_jitter > 0 then
      v_gap := null;
      v_at := v_next;
      for i in 1..10 loop
        v_after := workflows_private.cron_next(v_cron, v_timezone, v_at);
        exit when v_after is null;
        v_gap := least(v_gap, extract(epoch from v_after - v_at)::integer);
        v_at := v_after;
      end loop;
      if v_jitter >= v_gap then
        perform workflows_private.refuse_schedule(v_block.id, v_block.block, 'jitterSeconds',
          format('jitterSeconds %s must be shorter than the %s s between two of its runs', v_jitter, v_gap));
      end if;
    end if;
    select * into v_last from public.workflow_schedule_runs r
    where r.workflow_id = new.workflow_id and r.block_id = v_block.id and r.outcome = 'started'
    order by r.scheduled_for desc limit 1;
    insert into public.workflow_schedules as s (workflow_id, workspace_id, deployment_id, block_id, block_name, cron_expression, timezone,
      next_run_at, last_run_at, last_execution_id, max_consecutive_failures, overlap, jitter_seconds)
    values (new.workflow_id, new.workspace_id, new.id, v_block.id, coalesce(v_block.block ->> 'name', v_block.id), v_cron, v_timezone,
      v_next, v_last.scheduled_for, v_last.execution_id, coalesce((v_config ->> 'maxConsecutiveFailures')::integer, 3),
      coalesce(v_config ->> 'overlap', 'skip'), v_jitter)
    on conflict (workflow_id, block_id) do update set
      deployment_id = excluded.deployment_id, block_name = excluded.block_name, cron_expression = excluded.cron_expression,
      timezone = excluded.timezone, status = 'active', paused_reason = null, paused_at = null, next_run_at = excluded.next_run_at,
      consecutive_failures = 0, max_consecutive_failures = excluded.max_consecutive_failures,
      overlap = excluded.overlap, jitter_seconds = excluded.jitter_seconds;
    v_kept := v_kept || v_block.id;
  end loop;
  delete from public.workflow_schedules s where s.workflow_id = new.workflow_id and not (s.block_id = any(v_kept));
  return null;
end;
$$;
comment on function workflows_private.sync_schedules() is 'Trigger: creates the schedules of a snapshot becoming active (refusing unusable ones, 23514) and removes those of one becoming inactive.';

create trigger workflow_deployments_sync_schedules
  after insert or update of is_active on public.workflow_deployments
  for each row execute function workflows_private.sync_schedules();

/**
 * The ticker: fires every active schedule whose next run is due at `p_now` (at most `p_limit`
 * of them, oldest first), each occurrence once (fire_schedule_occurrence; see the migration's
 * comment for the overlap, jitter and misfire rules). Returns one entry per occurrence it handled.
 * pg_cron calls it every minute; `p_now` lets tests move the clock.
 */
create function workflows_private.fire_due_schedules(p_now timestamptz default now(), p_limit integer default 500)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_schedule public.workflow_schedules;
  v_entry jsonb;
  v_fired jsonb := '[]'::jsonb;
begin
  for v_schedule in
    select * from public.workflow_schedules s
    where s.status = 'active' and s.next_run_at <= p_now
    order by s.next_run_at
    limit p_limit
    for update skip locked
  loop
    v_entry := workflows_private.fire_schedule_occurrence(v_schedule.id, v_schedule.next_run_at, p_now, 'ticker');
    -- A null entry: another ticker or a backfill already took this occurrence; the schedule moves on.
    update public.workflow_schedules s
    set next_run_at = case when s.status = 'active' then workflows_private.cron_next(s.cron_expression, s.timezone, p_now) end
    where s.id = v_schedule.id;
    if v_entry is not null then
      v_fired := v_fired || v_entry;
    end if;
  end loop;
  return v_fired;
end;
$$;
comment on function workflows_private.fire_due_schedules(timestamptz, integer) is 'The schedule ticker (pg_cron, every minute): claims due schedules (SKIP LOCKED) and fires each due occurrence once under its overlap policy.';

/**
 * Counts a schedule run's end against its schedule: a failed run adds a consecutive failure and
 * pauses the schedule at its maximum (saying why, and telling the workflow's owner by e-mail), a
 * completed run resets the count; a cancelled run changes nothing.
 */
create function workflows_private.count_schedule_run()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_paused public.workflow_schedules;
begin
  update public.workflow_schedules s set
    consecutive_failures = case when new.status = 'failed' then s.consecutive_failures + 1 else 0 end,
    status = case when new.status = 'failed' and s.consecutive_failures + 1 >= s.max_consecutive_failures then 'paused'::public.workflow_schedule_status else s.status end,
    paused_at = case when new.status = 'failed' and s.consecutive_failures + 1 >= s.max_consecutive_failures then now() else s.paused_at end,
    paused_reason = case when new.status = 'failed' and s.consecutive_failures + 1 >= s.max_consecutive_failures
      then format('Paused after %s consecutive failed runs; the last (%s) failed with %s: %s', s.consecutive_failures + 1, new.id,
        coalesce(new.error_code, 'an error'), coalesce(new.error_message, 'no message'))
      else s.paused_reason end,
    next_run_at = case when new.status = 'failed' and s.consecutive_failures + 1 >= s.max_consecutive_failures then null else s.next_run_at end
  where s.workflow_id = new.workflow_id and s.block_id = new.trigger_block_id and s.status = 'active' and new.status <> 'cancelled'
  returning s.* into v_paused;
  if v_paused.status = 'paused' then
    perform workflows_private.notify_owner('schedule_paused', new.workspace_id, new.workflow_id, workflows_private.workflow_owner(new.workflow_id),
      format('[Orbita] Schedule paused: %s', (select w.name from public.workflows w where w.id = new.workflow_id)),
      format('The schedule of block "%s" of workflow "%s" was paused. %s. Resume it with resume_workflow_schedule once the cause is fixed.',
        v_paused.block_id, (select w.name from public.workflows w where w.id = new.workflow_id), v_paused.paused_reason),
      jsonb_build_object('scheduleId', v_paused.id, 'blockId', v_paused.block_id, 'pausedReason', v_paused.paused_reason));
  end if;
  return null;
end;
$$;
comment on function workflows_private.count_schedule_run() is 'Trigger: a schedule run''s end counts towards (or resets) its schedule''s consecutive failures, pausing it at the maximum.';

create trigger workflow_executions_count_schedule_runs
  after update of status on public.workflow_executions
  for each row
  when (new.trigger = 'schedule' and old.status in ('queued', 'running') and new.status in ('completed', 'failed', 'cancelled'))
  execute function workflows_private.count_schedule_run();

/**
 * Resumes a paused schedule (editors): active again, failures forgotten, next run the first slot
 * after now. Resuming an active schedule changes nothing. A schedule the caller cannot see is PT404.
 */
create function public.resume_workflow_schedule(p_schedule_id uuid)
returns public.workflow_schedules
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_schedule public.workflow_schedules;
begin
  select * into v_schedule from public.workflow_schedules s where s.id = p_schedule_id for update;
  if not found or (auth.role() is distinct from 'service_role' and not workflows_private.has_workspace_role(v_schedule.workspace_id, 'viewer')) then
    raise exception 'Schedule % not found', p_schedule_id using errcode = 'PT404';
  end if;
  if auth.role() is distinct from 'service_role' then
    perform workflows_private.require_workspace_role(v_schedule.workspace_id, 'editor', 'resume schedules');
  end if;
  if v_schedule.status = 'paused' then
    update public.workflow_schedules s set status = 'active', paused_reason = null, paused_at = null, consecutive_failures = 0,
      next_run_at = workflows_private.cron_next(s.cron_expression, s.timezone, now())
    where s.id = p_schedule_id returning * into v_schedule;
  end if;
  return v_schedule;
end;
$$;
comment on function public.resume_workflow_schedule(uuid) is 'Resumes a paused schedule (editors): active, no failures, next run after now.';

/** Deletes occurrences older than 30 days (pg_cron, daily); returns how many. Their slots are long past. */
create function workflows_private.expire_schedule_runs(p_now timestamptz default now())
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_count integer;
begin
  delete from public.workflow_schedule_runs r where r.scheduled_for < p_now - interval '30 days';
  get diagnostics v_count = row_count;
  return v_count;
end;
$$;
comment on function workflows_private.expire_schedule_runs(timestamptz) is 'Deletes schedule occurrences older than 30 days.';

select cron.schedule('workflows-fire-schedules', '* * * * *', $$select workflows_private.fire_due_schedules()$$);
select cron.schedule('workflows-expire-schedule-runs', '41 3 * * *', $$select workflows_private.expire_schedule_runs()$$);

-- Access -------------------------------------------------------------------------------------------

revoke all on public.workflow_schedules, public.workflow_schedule_runs from public, anon, authenticated;
grant select on public.workflow_schedules, public.workflow_schedule_runs to authenticated, service_role;
alter table public.workflow_schedules enable row level security;
alter table public.workflow_schedule_runs enable row level security;
create policy "Members can read their workspaces' schedules" on public.workflow_schedules
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));
create policy "Members can read their workspaces' schedule occurrences" on public.workflow_schedule_runs
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));

revoke execute on function
  workflows_private.schedule_cron(jsonb),
  workflows_private.refuse_schedule(text, jsonb, text, text),
  workflows_private.sync_schedules(),
  workflows_private.fire_due_schedules(timestamptz, integer),
  workflows_private.count_schedule_run(),
  workflows_private.expire_schedule_runs(timestamptz)
  from public, anon, authenticated, service_role;
revoke execute on function public.resume_workflow_schedule(uuid) from public, anon;
grant execute on function public.resume_workflow_schedule(uuid) to authenticated, service_role;
