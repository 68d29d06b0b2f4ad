-- Workflow service, issue 32 item 1: concurrent executions per billing account, by plan
-- (decision 14; docs/workflow-limits.md, "Concurrent runs"; docs/flow-control.md).
--
-- - billing_plans.concurrent_runs (and billing_account_overrides.concurrent_runs): the limit, Free
--   10, Pro 50, Team 200, Enterprise 1,000.
-- - concurrency_slots: one counter row per scope ('account:<id>', and 'key:<workflow id>:<key>' for
--   the flow-control keys of issue 32 item 2, …034100_workflows-flow-control.sql). Admission and release update one row under its
--   lock: no count(*) over executions on the hot path.
-- - run_slots: which scopes a run holds. A run holds its slots while it is queued for a worker or
--   running; it gives them back when it ends (finish_workflow_run, close_run: completed, failed,
--   cancelled, swept) and when it parks (park_workflow_run: a Wait or an approval holds no slot).
--   A parked run takes a slot again when its worker claims it.
-- - run_waiters: async, webhook, schedule and chat-async runs admitted over a limit, and parked runs
--   due while the account is full. They have no queue message until a release promotes them. The
--   index is (scope, rank desc): promoting the next waiter is one index probe, whatever the number
--   of waiters. rank = priority × 60 − admission epoch seconds, so a run waiting 60 s longer
--   outranks one a priority point higher: higher priority starts first, and none starves.
--
-- A sync or streamed run (manual, api, chat, re-runs) over the limit is refused: 429
-- CONCURRENCY_LIMIT_EXCEEDED with retryAfter, in the rate limit's refusal shape.
--
-- A crashed sync run's slot comes back when its lease runs out (the sweeper, or the next heartbeat
-- or replay, ends it through close_run). A crashed async run keeps its slot for its next attempt,
-- which the queue hands out when its lease runs out, and gives it back when it ends. The sweeper
-- also repairs what a bug or a deleted run could leave behind (a slot of an ended run, a scope with
-- room and waiters), off the hot path.

-- Limits -----------------------------------------------------------------------------------------

alter table public.billing_plans add column concurrent_runs integer not null default 10 check (concurrent_runs > 0);
comment on column public.billing_plans.concurrent_runs is 'Runs of the account in flight at once (queued for a worker or running; parked runs excluded). Beyond it sync runs answer 429 CONCURRENCY_LIMIT_EXCEEDED and async runs wait.';
update public.billing_plans p set concurrent_runs = v.limit_
from (values ('free', 10), ('pro', 50), ('team', 200), ('enterprise', 1000)) v(plan, limit_)
where p.plan = v.plan;

alter table public.billing_account_overrides add column concurrent_runs integer check (concurrent_runs > 0);
comment on column public.billing_account_overrides.concurrent_runs is 'Replaces the plan''s concurrent runs.';

-- Runs: how long each waited -----------------------------------------------------------------------

alter table public.workflow_executions
  add column waiting_since timestamptz,
  add column waited_ms integer not null default 0 check (waited_ms >= 0);
comment on column public.workflow_executions.waiting_since is 'Since when the run waits for a concurrency slot (null when it does not wait).';
comment on column public.workflow_executions.waited_ms is 'Milliseconds the run has waited for concurrency slots, all waits together.';

-- Slots and waiters --------------------------------------------------------------------------------

create table workflows_private.concurrency_slots (
  scope text primary key,
  in_use integer not null default 0 check (in_use >= 0)
) with (fillfactor = 50);
comment on table workflows_private.concurrency_slots is 'Slots in use per concurrency scope (account:<billing account id>). Updated under its row lock by every admission and release; low fillfactor keeps the updates HOT.';
comment on column workflows_private.concurrency_slots.scope is 'What the slots are counted for: account:<billing account id>.';
comment on column workflows_private.concurrency_slots.in_use is 'Runs holding a slot of the scope now.';
alter table workflows_private.concurrency_slots enable row level security;

create table workflows_private.run_slots (
  execution_id uuid primary key,
  scopes text[] not null,
  acquired_at timestamptz not null
);
comment on table workflows_private.run_slots is 'The concurrency slots a run holds. No foreign key on purpose: a run deleted with its workspace leaves its row, which the sweeper gives back.';
comment on column workflows_private.run_slots.execution_id is 'The run.';
comment on column workflows_private.run_slots.scopes is 'The scopes whose slots it holds.';
comment on column workflows_private.run_slots.acquired_at is 'When it took them.';
alter table workflows_private.run_slots enable row level security;

create table workflows_private.run_waiters (
  execution_id uuid primary key references public.workflow_executions (id) on delete cascade,
  scope text not null,
  scopes text[] not null,
  limits integer[] not null,
  rank double precision not null,
  enqueued_at timestamptz not null,
  check (cardinality(scopes) = cardinality(limits) and cardinality(scopes) > 0)
);
comment on table workflows_private.run_waiters is 'Runs waiting for a concurrency slot, filed under the scope that is full. The next to start is the highest rank of the scope.';
comment on column workflows_private.run_waiters.execution_id is 'The waiting run.';
comment on column workflows_private.run_waiters.scope is 'The full scope it waits on (one of scopes).';
comment on column workflows_private.run_waiters.scopes is 'Every scope it needs a slot of to start.';
comment on column workflows_private.run_waiters.limits is 'The limit of each scope, as at admission.';
comment on column workflows_private.run_waiters.rank is 'priority × 60 − admission epoch seconds: higher starts first; 60 s of waiting is worth one priority point (aging).';
comment on column workflows_private.run_waiters.enqueued_at is 'When it started waiting this time.';
create index run_waiters_next on workflows_private.run_waiters (scope, rank desc, execution_id);
alter table workflows_private.run_waiters enable row level security;

-- Functions ----------------------------------------------------------------------------------------

/** The account's concurrent-run limit: its override, else its plan's. */
create function workflows_private.account_concurrency_limit(p_account_id uuid)
returns integer
language sql
stable
set search_path = ''
as $$
  select coalesce(o.concurrent_runs, p.concurrent_runs)
  from public.billing_accounts a
  join public.billing_plans p on p.plan = a.plan
  left join public.billing_account_overrides o on o.billing_account_id = a.id
  where a.id = p_account_id;
$$;
comment on function workflows_private.account_concurrency_limit(uuid) is 'The billing account''s concurrent runs: its override, else its plan''s.';

/**
 * Takes one slot of every scope (`p_limits[i]` is `p_scopes[i]`'s limit), all or none. Answers null
 * when taken, else the first full scope (nothing taken). Scopes are locked in sorted order, so two
 * admissions needing the same scopes cannot deadlock. A full scope stays locked until the caller
 * commits: a release of it waits, and then sees the waiter the caller files. The caller records the
 * run in run_slots.
 */
create function workflows_private.acquire_slots(p_scopes text[], p_limits integer[])
returns text
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_scope text;
  v_limit integer;
  v_in_use integer;
  v_taken text[] := '{}'::text[];
begin
  for v_scope, v_limit in
    select s.scope, s.limit_ from unnest(p_scopes, p_limits) s(scope, limit_) order by s.scope
  loop
    select c.in_use into v_in_use from workflows_private.concurrency_slots c where c.scope = v_scope for update;
    if not found then
      insert into workflows_private.concurrency_slots (scope, in_use) values (v_scope, 0) on conflict (scope) do nothing;
      select c.in_use into v_in_use from workflows_private.concurrency_slots c where c.scope = v_scope for update;
    end if;
    if v_in_use >= v_limit then
      update workflows_private.concurrency_slots c set in_use = c.in_use - 1 where c.scope = any(v_taken);
      return v_scope;
    end if;
    update workflows_private.concurrency_slots c set in_use = c.in_use + 1 where c.scope = v_scope;
    v_taken := v_taken || v_scope;
  end loop;
  return null;
end;
$$;
comment on function workflows_private.acquire_slots(text[], integer[]) is 'Takes a slot of every scope or none; null when taken, else the first full scope (left locked until commit).';

/**
 * Gives back the slots a run holds (none: nothing happens, so ending a run twice is harmless) and
 * starts the next waiter of each scope freed.
 */
create function workflows_private.release_slots(p_execution_id uuid)
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_scopes text[];
  v_scope text;
begin
  delete from workflows_private.run_slots s where s.execution_id = p_execution_id returning s.scopes into v_scopes;
  if not found then
    return;
  end if;
  for v_scope in select s from unnest(v_scopes) s order by s
  loop
    update workflows_private.concurrency_slots c set in_use = greatest(0, c.in_use - 1) where c.scope = v_scope;
  end loop;
  for v_scope in select s from unnest(v_scopes) s order by s
  loop
    perform workflows_private.promote_waiter(v_scope);
  end loop;
end;
$$;
comment on function workflows_private.release_slots(uuid) is 'Gives back a run''s slots and starts the next waiter of each freed scope.';

/**
 * Starts the highest-ranked waiter of `p_scope` that can take all its slots: sends its queue message
 * (which wakes a worker, platform.wake_queue_worker) and records how long it waited. A waiter that
 * the scope would let through but another of its scopes holds back is filed under that one instead,
 * and the next is tried, a few at most: the bound keeps a release cheap; what it leaves is picked up
 * by that scope's own releases or by the sweeper. Answers whether a run was started.
 */
create function workflows_private.promote_waiter(p_scope text)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_waiter workflows_private.run_waiters;
  v_blocked text;
  v_message_id bigint;
  v_now timestamptz := now();
begin
  for i in 1..4 loop
    -- The waiter's run is locked with it (or skipped): a cancellation holding the run and wanting the
    -- waiter row could otherwise deadlock with this release.
    select w.* into v_waiter from workflows_private.run_waiters w join public.workflow_executions e on e.id = w.execution_id
    where w.scope = p_scope order by w.rank desc, w.execution_id limit 1 for update of w, e skip locked;
    if not found then
      return false;
    end if;
    v_blocked := workflows_private.acquire_slots(v_waiter.scopes, v_waiter.limits);
    if v_blocked is null then
      delete from workflows_private.run_waiters w where w.execution_id = v_waiter.execution_id;
      insert into workflows_private.run_slots (execution_id, scopes, acquired_at) values (v_waiter.execution_id, v_waiter.scopes, v_now);
      select * into v_message_id from pgmq.send('workflow_runs', jsonb_build_object('executionId', v_waiter.execution_id));
      -- A parked run that waited is due now: its lease ends at once so the claim takes it.
      update public.workflow_executions e set
        queue_message_id = v_message_id,
        waited_ms = e.waited_ms + greatest(0, (extract(epoch from v_now - coalesce(e.waiting_since, v_now)) * 1000)::integer),
        waiting_since = null,
        lease_expires_at = case when e.status = 'running' then v_now else e.lease_expires_at end
      where e.id = v_waiter.execution_id;
      return true;
    end if;
    if v_blocked = p_scope then
      return false;
    end if;
    update workflows_private.run_waiters w set scope = v_blocked where w.execution_id = v_waiter.execution_id;
  end loop;
  return false;
end;
$$;
comment on function workflows_private.promote_waiter(text) is 'Starts the next waiter of a scope that can take all its slots (bounded tries); true when one started.';

/**
 * The scopes a run needs a slot of, with their limits, the account's first: the billing account's
 * (its concurrent-run limit) and, when the workflow's flow control gave the run a concurrency key
 * (…034100_workflows-flow-control.sql), `key:<workflow id>:<key>` with the workflow's limit.
 */
create function workflows_private.run_scopes(p_account_id uuid, p_workflow_id uuid, p_key text, p_key_limit integer, out scopes text[], out limits integer[])
language sql
stable
set search_path = ''
as $$
  select array['account:' || p_account_id] || case when p_key is not null then array['key:' || p_workflow_id || ':' || p_key] else '{}'::text[] end,
    array[workflows_private.account_concurrency_limit(p_account_id)] || case when p_key is not null then array[p_key_limit] else '{}'::integer[] end;
$$;
comment on function workflows_private.run_scopes(uuid, uuid, text, integer) is 'The concurrency scopes (and limits) a run needs a slot of: its account''s, and its concurrency key''s when it has one.';

/**
 * Files a run that has no queue message as a waiter under `p_scope`, the full one of `p_scopes`:
 * rank from its priority and admission time (see the file's comment), `waiting_since` and a lease of
 * 24 hours (past it the sweeper ends the run as never started).
 */
create function workflows_private.file_waiter(p_run_id uuid, p_scope text, p_scopes text[], p_limits integer[], p_priority double precision, p_now timestamptz)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- A parked run that waits is no longer parked: nothing but a release wakes it.
  update public.workflow_executions e set queue_message_id = null, waiting_since = p_now, lease_expires_at = p_now + interval '24 hours',
    parked_until = null
  where e.id = p_run_id;
  insert into workflows_private.run_waiters (execution_id, scope, scopes, limits, rank, enqueued_at)
  select p_run_id, p_scope, p_scopes, p_limits, p_priority * 60 - extract(epoch from e.created_at), p_now
  from public.workflow_executions e where e.id = p_run_id
  on conflict (execution_id) do nothing;
end;
$$;
comment on function workflows_private.file_waiter(uuid, text, text[], integer[], double precision, timestamptz) is 'Files a run as a waiter for a slot of a full scope, with its rank and a 24-hour lease.';

/**
 * The claim of a parked run that is due (it gave its slots back when it parked): takes its slots
 * (true) or, when a scope is full, drops its queue message and files it as a waiter (false).
 */
create function workflows_private.take_slots_or_wait(p_run public.workflow_executions, p_message_id bigint, p_now timestamptz)
returns boolean
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_scopes text[];
  v_limits integer[];
  v_blocked text;
begin
  select s.scopes, s.limits into v_scopes, v_limits
  from workflows_private.run_scopes(p_run.billing_account_id, p_run.workflow_id, p_run.concurrency_key, p_run.concurrency_key_limit) s;
  v_blocked := workflows_private.acquire_slots(v_scopes, v_limits);
  if v_blocked is null then
    insert into workflows_private.run_slots (execution_id, scopes, acquired_at) values (p_run.id, v_scopes, p_now)
    on conflict (execution_id) do nothing;
    return true;
  end if;
  if p_message_id is not null then
    perform pgmq.delete('workflow_runs', p_message_id);
  end if;
  perform workflows_private.file_waiter(p_run.id, v_blocked, v_scopes, v_limits, p_run.priority, p_now);
  return false;
end;
$$;
comment on function workflows_private.take_slots_or_wait(public.workflow_executions, bigint, timestamptz) is 'Takes a due parked run''s slots, or files it as a waiter without a queue message; true when taken.';

/**
 * The sweeper's repair of slots (pg_cron, every minute, with sweep_workflow_runs): gives back slots
 * held by runs that ended or were deleted without going through release_slots, and starts waiters
 * of scopes with room. Bounded per call; the hot path never needs it.
 */
create function workflows_private.repair_slots()
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_id uuid;
  v_scope text;
  v_repaired integer := 0;
begin
  for v_id in
    select s.execution_id from workflows_private.run_slots s
    left join public.workflow_executions e on e.id = s.execution_id
    where e.id is null or e.status not in ('queued', 'running') or e.parked_until > now()
    limit 1000
  loop
    perform workflows_private.release_slots(v_id);
    v_repaired := v_repaired + 1;
  end loop;
  for v_scope in select distinct w.scope from workflows_private.run_waiters w
  loop
    while workflows_private.promote_waiter(v_scope) loop
      v_repaired := v_repaired + 1;
    end loop;
  end loop;
  return v_repaired;
end;
$$;
comment on function workflows_private.repair_slots() is 'Gives back slots of ended or deleted runs and starts waiters of scopes with room; the sweeper''s safety net.';

revoke all on workflows_private.concurrency_slots, workflows_private.run_slots, workflows_private.run_waiters from public, anon, authenticated, service_role;
revoke execute on function
  workflows_private.account_concurrency_limit(uuid),
  workflows_private.acquire_slots(text[], integer[]),
  workflows_private.release_slots(uuid),
  workflows_private.promote_waiter(text),
  workflows_private.run_scopes(uuid, uuid, text, integer),
  workflows_private.file_waiter(uuid, text, text[], integer[], double precision, timestamptz),
  workflows_private.take_slots_or_wait(public.workflow_executions, bigint, timestamptz),
  workflows_private.repair_slots()
  from public, anon, authenticated, service_role;
