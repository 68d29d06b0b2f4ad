-- Workflow service, part 7: schedules that overlap, jitter and backfill (docs/triggers.md,
-- "Schedules"). The tables and the ticker are in …032000_workflows-schedules.sql; this file is how
-- one occurrence is fired, which the ticker, a backfill and the end of a run all use:
-- - fire_schedule_occurrence records an occurrence once, under the unique key (workflow, block,
--   slot), and applies the schedule's overlap policy (skip, buffer_one, allow_all, cancel_running);
-- - start_schedule_run admits its run, delayed by the occurrence's jitter (schedule_jitter, a hash,
--   so stable and auditable) through the queue message's visibility, so no worker waits for it;
-- - release_buffered_occurrence starts a buffered occurrence when the run it waits for ends;
-- - backfill_workflow_schedule lets an editor fire the occurrences of a past range (30 days, 500
--   occurrences at most); the shared key means a backfill and the ticker never run one slot twice.

/**
 * The jitter of one occurrence, 0 to `p_max` seconds: the first 60 bits of
 * sha256('<workflow id>:<block id>:<slot in Unix seconds>') modulo `p_max` + 1. Derived rather than
 * drawn, so an occurrence always gets the same delay (whoever fires it, however often it is asked),
 * anyone can recompute it (`printf '%s:%s:%s' <workflow> <block> <epoch> | sha256sum`), and a
 * schedule's slots still spread evenly over the range.
 */
create function workflows_private.schedule_jitter(p_workflow_id uuid, p_block_id text, p_slot timestamptz, p_max integer)
returns integer
language sql
immutable
set search_path = ''
as $$
  select case when coalesce(p_max, 0) <= 0 then 0 else
    (('x' || left(encode(sha256(convert_to(format('%s:%s:%s', p_workflow_id, p_block_id, extract(epoch from p_slot)::bigint), 'UTF8')), 'hex'), 15))::bit(60)::bigint
      % (p_max + 1))::integer
  end;
$$;
comment on function workflows_private.schedule_jitter(uuid, text, timestamptz, integer) is 'The stable jitter of a schedule occurrence: sha256 of workflow:block:slot-epoch, modulo the maximum plus one.';

/**
 * Starts the run of one occurrence: admits an async schedule run told its slot, expression, time
 * zone and jitter, and, when the slot plus the jitter is still ahead of `p_now`, delays the run's
 * queue message until then (pgmq's visibility time), so no worker holds it while it waits. The run
 * becomes the schedule's latest. Returns {outcome: started, executionId, jitterSeconds, startsAt},
 * or {outcome: skipped, reason} with the admission's refusal (the usage limit).
 */
create function workflows_private.start_schedule_run(p_schedule public.workflow_schedules, p_slot timestamptz, p_now timestamptz)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_jitter integer := workflows_private.schedule_jitter(p_schedule.workflow_id, p_schedule.block_id, p_slot, p_schedule.jitter_seconds);
  v_starts_at timestamptz := greatest(p_slot + make_interval(secs => v_jitter), p_now);
  v_answer jsonb;
  v_execution uuid;
begin
  begin
    v_answer := public.admit_trigger_run('schedule', p_schedule.workflow_id, p_schedule.block_id, 'async',
      jsonb_build_object('scheduledFor', p_slot, 'cronExpression', p_schedule.cron_expression, 'timezone', p_schedule.timezone, 'jitterSeconds', v_jitter));
  exception when others then
    -- One schedule's fault must not stop the others' ticks: it is recorded and the tick goes on.
    v_answer := jsonb_build_object('outcome', 'refused', 'code', 'ADMISSION_FAILED', 'error', sqlerrm);
  end;
  if v_answer ->> 'outcome' is distinct from 'admitted' then
    return jsonb_build_object('outcome', 'skipped', 'reason', format('%s: %s', v_answer ->> 'code', v_answer ->> 'error'));
  end if;
  v_execution := (v_answer ->> 'executionId')::uuid;
  if v_starts_at > p_now then
    perform pgmq.set_vt('workflow_runs', e.queue_message_id, ceil(extract(epoch from v_starts_at - p_now))::integer)
    from public.workflow_executions e where e.id = v_execution;
  end if;
  update public.workflow_schedules s set last_run_at = greatest(s.last_run_at, p_slot), last_execution_id = v_execution
  where s.id = p_schedule.id;
  return jsonb_build_object('outcome', 'started', 'executionId', v_execution, 'jitterSeconds', v_jitter, 'startsAt', v_starts_at);
end;
$$;
comment on function workflows_private.start_schedule_run(public.workflow_schedules, timestamptz, timestamptz) is 'Admits the run of one schedule occurrence, its queue message delayed by the occurrence''s jitter.';

/**
 * Fires one occurrence (slot `p_slot`) of a schedule whose row the caller has locked: records it
 * under the unique key (workflow, block, slot) and applies the schedule's overlap policy when its
 * latest run is still queued or running: `skip` records it skipped; `buffer_one` records it
 * buffered (started when that run ends, by release_buffered_occurrence), or skipped when one is
 * already buffered; `allow_all` starts it; `cancel_running` cancels that run through
 * cancel_workflow_run and starts it. Returns the ticker's entry {scheduleId, workflowId, blockId,
 * scheduledFor, outcome: started | skipped | buffered, executionId?, reason?, jitterSeconds?,
 * startsAt?, cancelledExecutionId?}, or null when the occurrence was already recorded (by another
 * ticker or a backfill): no slot runs twice.
 */
create function workflows_private.fire_schedule_occurrence(p_schedule_id uuid, p_slot timestamptz, p_now timestamptz, p_source text)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_schedule public.workflow_schedules;
  v_previous uuid;
  v_previous_status text;
  v_started jsonb := '{}'::jsonb;
  v_outcome text := 'skipped';
  v_reason text;
  v_cancelled uuid;
begin
  select * into v_schedule from public.workflow_schedules s where s.id = p_schedule_id;
  insert into public.workflow_schedule_runs (workflow_id, block_id, scheduled_for, workspace_id, fired_at, outcome, source)
  values (v_schedule.workflow_id, v_schedule.block_id, p_slot, v_schedule.workspace_id, p_now, 'skipped', p_source)
  on conflict do nothing;
  if not found then
    return null;
  end if;
  select e.id, e.status into v_previous, v_previous_status from public.workflow_executions e
  where e.id = v_schedule.last_execution_id and e.status in ('queued', 'running');
  if v_previous is null or v_schedule.overlap = 'allow_all' then
    v_started := workflows_private.start_schedule_run(v_schedule, p_slot, p_now);
  elsif v_schedule.overlap = 'skip' then
    v_reason := format('the previous run (%s) was still going', v_previous);
  elsif v_schedule.overlap = 'buffer_one' then
    select format('the previous run (%s) was still going and the occurrence of %s was already waiting for it', v_previous, r.scheduled_for)
    into v_reason
    from public.workflow_schedule_runs r
    where r.workflow_id = v_schedule.workflow_id and r.block_id = v_schedule.block_id and r.outcome = 'buffered';
    if v_reason is null then
      v_outcome := 'buffered';
      v_reason := format('waiting for the previous run (%s) to end', v_previous);
    end if;
  else
    begin
      perform public.cancel_workflow_run(v_previous);
      v_cancelled := v_previous;
    exception when deadlock_detected then
      -- Its worker was finishing it at this very moment and waits for this schedule's row: it
      -- ends anyway, so the new run starts all the same.
      null;
    end;
    v_started := workflows_private.start_schedule_run(v_schedule, p_slot, p_now);
  end if;
  if v_started ? 'outcome' then
    v_outcome := v_started ->> 'outcome';
    v_reason := coalesce(v_started ->> 'reason', case when v_cancelled is not null
      then format('cancelled the previous run (%s), which was still %s', v_cancelled, v_previous_status) end);
  end if;
  update public.workflow_schedule_runs r set outcome = v_outcome, reason = v_reason, execution_id = (v_started ->> 'executionId')::uuid,
    jitter_seconds = (v_started ->> 'jitterSeconds')::integer, starts_at = (v_started ->> 'startsAt')::timestamptz,
    cancelled_execution_id = v_cancelled
  where r.workflow_id = v_schedule.workflow_id and r.block_id = v_schedule.block_id and r.scheduled_for = p_slot;
  return jsonb_strip_nulls(jsonb_build_object('scheduleId', v_schedule.id, 'workflowId', v_schedule.workflow_id, 'blockId', v_schedule.block_id,
    'scheduledFor', p_slot, 'outcome', v_outcome, 'reason', v_reason, 'cancelledExecutionId', v_cancelled)
    || (v_started - 'outcome' - 'reason'));
end;
$$;
comment on function workflows_private.fire_schedule_occurrence(uuid, timestamptz, timestamptz, text) is 'Records one schedule occurrence once and applies the overlap policy: started, skipped, buffered, or started after cancelling the previous run.';

/**
 * Starts a schedule's buffered occurrence (overlap buffer_one) when the run it waits for, the
 * schedule's latest, ends, however it ends; its jitter still counts from its slot. When the
 * schedule was paused (this very end may have paused it: its trigger fires first, by name) or
 * removed meanwhile, the occurrence is skipped instead, saying so.
 */
create function workflows_private.release_buffered_occurrence()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_slot timestamptz;
  v_schedule public.workflow_schedules;
  v_started jsonb;
begin
  -- The schedule's lock first: a ticker or backfill buffering an occurrence behind this run holds
  -- it until it commits, so waiting here means the next statement sees that occurrence.
  select * into v_schedule from public.workflow_schedules s where s.workflow_id = new.workflow_id and s.block_id = new.trigger_block_id for update;
  select r.scheduled_for into v_slot from public.workflow_schedule_runs r
  where r.workflow_id = new.workflow_id and r.block_id = new.trigger_block_id and r.outcome = 'buffered';
  if v_slot is null then
    return null;
  end if;
  if v_schedule.id is not null and v_schedule.last_execution_id is distinct from new.id then
    -- It waits for the schedule's latest run, which is another one.
    return null;
  end if;
  if v_schedule.id is null or v_schedule.status <> 'active' then
    v_started := jsonb_build_object('outcome', 'skipped', 'reason', format('the schedule was %s before the previous run (%s) ended',
      case when v_schedule.id is null then 'removed' else 'paused' end, new.id));
  else
    v_started := workflows_private.start_schedule_run(v_schedule, v_slot, now());
  end if;
  update public.workflow_schedule_runs r set outcome = v_started ->> 'outcome', execution_id = (v_started ->> 'executionId')::uuid,
    jitter_seconds = (v_started ->> 'jitterSeconds')::integer, starts_at = (v_started ->> 'startsAt')::timestamptz,
    reason = coalesce(v_started ->> 'reason', format('waited for the previous run (%s) to end', new.id))
  where r.workflow_id = new.workflow_id and r.block_id = new.trigger_block_id and r.scheduled_for = v_slot;
  return null;
end;
$$;
comment on function workflows_private.release_buffered_occurrence() is 'Trigger: when a schedule run ends, starts the occurrence buffered behind it (or skips it if the schedule was paused or removed).';

create trigger workflow_executions_release_buffered_schedule_runs
  after update of status on public.workflow_executions
  for each row
  when (new.trigger = 'schedule' and old.status in ('queued', 'running') and new.status in ('completed', 'failed', 'cancelled'))
  execute function workflows_private.release_buffered_occurrence();

/**
 * Backfill (editors): fires the occurrences of a schedule from `p_from` to `p_to` (both included),
 * oldest first, each under the schedule's overlap policy and with its slot as `scheduledFor`, as
 * the ticker would have (fire_schedule_occurrence); a slot already recorded, by the ticker or an
 * earlier backfill, is left alone. A paused schedule may be backfilled: the pause stops the ticker,
 * not an editor. Refused with 22023 (HTTP 400): a missing, reversed or future range, one starting
 * more than 30 days ago (occurrences are recorded 30 days, and the record is what keeps a slot
 * from running twice), one holding more than 500 occurrences (a run's admission costs a few
 * milliseconds, and the data API gives a signed-in caller's statement 8 s). A schedule the caller cannot see
 * is PT404, a viewer's call 42501. Returns {scheduleId, from, to, occurrences, started, buffered,
 * skipped, alreadyRecorded}; the occurrences are in workflow_schedule_runs with source backfill.
 */
create function public.backfill_workflow_schedule(p_schedule_id uuid, p_from timestamptz, p_to timestamptz)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_now timestamptz := now();
  v_schedule public.workflow_schedules;
  v_slots timestamptz[] := '{}'::timestamptz[];
  v_slot timestamptz;
  v_outcome text;
  v_counts jsonb := '{"started": 0, "buffered": 0, "skipped": 0, "alreadyRecorded": 0}'::jsonb;
begin
  select * into v_schedule from public.workflow_schedules s where s.id = p_schedule_id for update;
  if not found or (auth.role() is distinct from 'service_role' and not workflows_private.has_workspace_role(v_schedule.workspace_id, 'viewer')) then
    raise exception 'Schedule % not found', p_schedule_id using errcode = 'PT404';
  end if;
  if auth.role() is distinct from 'service_role' then
    perform workflows_private.require_workspace_role(v_schedule.workspace_id, 'editor', 'backfill schedules');
  end if;
  if p_from is null or p_to is null then
    raise exception 'A backfill needs both p_from and p_to (ISO 8601 times)' using errcode = '22023';
  end if;
  if p_from > p_to then
    raise exception 'The range is reversed: p_from (%) is after p_to (%)', p_from, p_to using errcode = '22023';
  end if;
  if p_to > v_now then
    raise exception 'A backfill runs past occurrences only: p_to (%) is after now (%)', p_to, v_now using errcode = '22023';
  end if;
  if p_from < v_now - interval '30 days' then
    raise exception 'A backfill reaches back 30 days at most (occurrences are recorded for 30 days, so an older slot could run twice): p_from (%) is before %',
      p_from, v_now - interval '30 days' using errcode = '22023';
  end if;
  v_slot := workflows_private.cron_next(v_schedule.cron_expression, v_schedule.timezone, p_from - interval '1 microsecond');
  while v_slot is not null and v_slot <= p_to loop
    if cardinality(v_slots) = 500 then
      raise exception 'The range holds more than 500 occurrences of this schedule: backfill at most 500 per call' using errcode = '22023',
        hint = format('Split the range; the first 500 end at %s.', v_slots[500]);
    end if;
    v_slots := v_slots || v_slot;
    v_slot := workflows_private.cron_next(v_schedule.cron_expression, v_schedule.timezone, v_slot);
  end loop;
  foreach v_slot in array v_slots loop
    v_outcome := coalesce(workflows_private.fire_schedule_occurrence(p_schedule_id, v_slot, v_now, 'backfill') ->> 'outcome', 'alreadyRecorded');
    v_counts := jsonb_set(v_counts, array[v_outcome], to_jsonb((v_counts ->> v_outcome)::integer + 1));
  end loop;
  return jsonb_build_object('scheduleId', p_schedule_id, 'from', p_from, 'to', p_to, 'occurrences', cardinality(v_slots)) || v_counts;
end;
$$;
comment on function public.backfill_workflow_schedule(uuid, timestamptz, timestamptz) is 'Backfill (editors): fires a schedule''s occurrences in a past range (30 days, 500 occurrences at most) under its overlap policy, each slot once.';

-- Access -------------------------------------------------------------------------------------------

revoke execute on function
  workflows_private.schedule_jitter(uuid, text, timestamptz, integer),
  workflows_private.start_schedule_run(public.workflow_schedules, timestamptz, timestamptz),
  workflows_private.fire_schedule_occurrence(uuid, timestamptz, timestamptz, text),
  workflows_private.release_buffered_occurrence()
  from public, anon, authenticated, service_role;
revoke execute on function public.backfill_workflow_schedule(uuid, timestamptz, timestamptz) from public, anon;
grant execute on function public.backfill_workflow_schedule(uuid, timestamptz, timestamptz) to authenticated, service_role;
