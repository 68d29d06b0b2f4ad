-- Workflow service: run history retention (issue 34, item 2; decisions, "Log retention by plan").
--
-- A run and everything hanging off it are kept for its workspace's retention, then removed by a
-- pg_cron job in bounded batches, leaving a small tombstone so readers can answer "expired" (410
-- RUN_EXPIRED with the date) instead of a bare 404 (docs/retention.md):
--
-- - billing_plans.log_retention_days: the per-plan default (Free 7, Pro 30, Team 90, Enterprise 365),
--   the one source of truth for it.
-- - public.workspace_log_retention: a workspace's own figure, honoured only while its billing account
--   is on Enterprise (others are refused when they set it, and ignored if the plan later changes).
-- - workflows_private.workspace_retention_days: the effective figure, read by the expiry and readers.
-- - workflows_private.expired_runs: the tombstones (id, workspace, workflow, expired_at), kept a
--   year after the run expired. Run ids are random (gen_random_uuid, v4), so the time a run was
--   made cannot be computed from its id: the tombstone is what tells "expired" from "never existed".
-- - workflows_private.expire_workflow_history(p_now, p_max_rows): one batch of the expiry, on a
--   controllable clock; pg_cron calls it every minute.
-- - public.expired_run_file_names: what the workspace-file-sweeper removes from Storage for runs
--   that expired (their files go through the Storage API, as a deleted workspace's do).
-- - workflows_private.missing_run_refusal: the one place a reader turns "no such run" into 410 for a
--   run that expired.

-- Per-plan default -----------------------------------------------------------------------------------

alter table public.billing_plans
  add column log_retention_days integer not null default 7
  constraint billing_plans_log_retention_days_range check (log_retention_days between 1 and 3650);
comment on column public.billing_plans.log_retention_days is 'Days a run (its log, trace, files, deliveries, checkpoints, approvals, chat turns, idempotency keys) is kept after it started; decisions item 15. Enterprise workspaces may set their own (workspace_log_retention).';
update public.billing_plans p set log_retention_days = v.days
from (values ('free', 7), ('pro', 30), ('team', 90), ('enterprise', 365)) as v (plan, days)
where p.plan = v.plan;

-- Per-workspace override -----------------------------------------------------------------------------

create table public.workspace_log_retention (
  workspace_id uuid primary key references public.workspaces (id) on delete cascade,
  log_retention_days integer not null constraint workspace_log_retention_days_range check (log_retention_days between 1 and 3650),
  updated_by uuid default auth.uid() references auth.users (id) on delete set null,
  updated_at timestamptz not null default now()
);
comment on table public.workspace_log_retention is 'An Enterprise workspace''s own run retention, replacing its plan''s. Admins set it through the data API; a workspace on another plan is refused (23514), and a row left behind by a plan change is ignored until the account is on Enterprise again.';
comment on column public.workspace_log_retention.workspace_id is 'The workspace.';
comment on column public.workspace_log_retention.log_retention_days is 'Days its runs are kept after they started, 1 to 3650.';
comment on column public.workspace_log_retention.updated_by is 'The admin who last set it.';
comment on column public.workspace_log_retention.updated_at is 'When it was last set.';

/**
 * Trigger: refuses a retention override for a workspace whose billing account is not on Enterprise,
 * naming the plan and the figure that applies, since the decision allows overrides on Enterprise only.
 * Security definer because an admin of the workspace may not read the account's plan row directly
 * when someone else owns it.
 */
create function workflows_private.check_log_retention_override()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_plan public.billing_plans;
begin
  select p.* into v_plan
  from public.workspaces w
  join public.billing_accounts a on a.id = w.billing_account_id
  join public.billing_plans p on p.plan = a.plan
  where w.id = new.workspace_id;
  if v_plan.plan is distinct from 'enterprise' then
    raise exception 'A workspace sets its own log retention on the Enterprise plan only; this workspace is on %, which keeps runs % days',
      coalesce(v_plan.name, 'no plan'), v_plan.log_retention_days
      using errcode = 'check_violation', hint = 'Upgrade the billing account to Enterprise, or rely on the plan''s retention.';
  end if;
  new.updated_at := now();
  new.updated_by := auth.uid();
  return new;
end;
$$;
comment on function workflows_private.check_log_retention_override() is 'Trigger: a retention override is refused unless the workspace''s account is on Enterprise.';

create trigger workspace_log_retention_enterprise_only
  before insert or update on public.workspace_log_retention
  for each row execute function workflows_private.check_log_retention_override();

/**
 * The days a workspace keeps its runs: its own figure while its account is on Enterprise, else its
 * plan's. Null for a workspace that does not exist.
 */
create function workflows_private.workspace_retention_days(p_workspace_id uuid)
returns integer
language sql
stable
security definer
set search_path = ''
as $$
  select case when a.plan = 'enterprise' and o.log_retention_days is not null then o.log_retention_days else p.log_retention_days end
  from public.workspaces w
  join public.billing_accounts a on a.id = w.billing_account_id
  join public.billing_plans p on p.plan = a.plan
  left join public.workspace_log_retention o on o.workspace_id = w.id
  where w.id = p_workspace_id;
$$;
comment on function workflows_private.workspace_retention_days(uuid) is 'Effective run retention of a workspace in days: the Enterprise override, else the plan''s default.';

-- Tombstones -----------------------------------------------------------------------------------------

create table workflows_private.expired_runs (
  id uuid primary key,
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  workflow_id uuid not null,
  started_at timestamptz,
  expired_at timestamptz not null,
  retention_days integer not null
);
comment on table workflows_private.expired_runs is 'What is left of a run removed by retention, so readers answer 410 RUN_EXPIRED instead of 404. Kept 365 days after expiry (then the id answers 404); goes with its workspace.';
comment on column workflows_private.expired_runs.id is 'The run''s executionId.';
comment on column workflows_private.expired_runs.workspace_id is 'Its workspace: only callers who could read the run learn that it expired.';
comment on column workflows_private.expired_runs.workflow_id is 'Its workflow (the runs API''s workflow-scoped path checks it).';
comment on column workflows_private.expired_runs.started_at is 'When the run started.';
comment on column workflows_private.expired_runs.expired_at is 'When the expiry removed it (the clock the expiry ran on).';
comment on column workflows_private.expired_runs.retention_days is 'The retention that applied then.';
create index expired_runs_expired_at_idx on workflows_private.expired_runs (expired_at);

-- Deleting a run by id touches these by execution id; without the indexes each batch would scan them.
create index idempotency_keys_execution_id_idx on workflows_private.idempotency_keys (execution_id);
create index chat_turns_execution_id_idx on workflows_private.chat_turns (execution_id) where execution_id is not null;
create index run_approval_answers_approval_id_idx on workflows_private.run_approval_answers (approval_id);

-- The expiry -----------------------------------------------------------------------------------------

/**
 * One batch of the run history expiry, on the clock `p_now`: up to `p_max_rows` ended runs that
 * started more than their workspace's retention before `p_now` (oldest first, per workspace) are
 * removed with what hangs off them. Their trace spans and output are columns of the run; execution
 * models, webhook deliveries and attempts, checkpoints, approvals and their answers go by ON DELETE
 * CASCADE; idempotency keys and chat turns by execution id; their stored files are queued for the
 * workspace-file-sweeper (Storage keeps the bytes outside Postgres). A tombstone per run is left.
 * Runs still in flight are never touched, however old. The same call drops up to `p_max_rows`
 * tombstones older than 365 days and alert events older than their workspace's retention.
 *
 * One batch is one short transaction (docs/retention.md has its measured time); a backlog is worked
 * off by the next calls, so the expiry never holds locks for long. Answers {runs, tombstones,
 * alertEvents, more}: `more` says a full batch was taken and another call would find work.
 * `p_workspace_id` limits the runs and alert events to one workspace (an operator expiring a
 * workspace at once after lowering its retention; tests that must not touch other workspaces).
 */
create function workflows_private.expire_workflow_history(p_now timestamptz default now(), p_max_rows integer default 2000, p_workspace_id uuid default null)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_ids uuid[] := array[]::uuid[];
  v_workspace record;
  v_runs integer;
  v_tombstones integer;
  v_alerts integer := 0;
  v_count integer;
begin
  if p_now is null or p_max_rows is null or p_max_rows not between 1 and 100000 then
    raise exception 'expire_workflow_history: a time and a batch of 1 to 100000 rows' using errcode = '22023';
  end if;

  -- Per workspace, so each lookup walks workflow_executions_workspace_started_idx from its oldest end.
  -- The retention is read once per workspace, and each run's tombstone written as it is chosen.
  for v_workspace in
    select w.id, r.days, p_now - make_interval(days => r.days) as cutoff
    from public.workspaces w cross join lateral (select workflows_private.workspace_retention_days(w.id) as days) r
    where p_workspace_id is null or w.id = p_workspace_id
  loop
    exit when cardinality(v_ids) >= p_max_rows;
    with chosen as (
      insert into workflows_private.expired_runs (id, workspace_id, workflow_id, started_at, expired_at, retention_days)
      select e.id, e.workspace_id, e.workflow_id, e.started_at, p_now, v_workspace.days
      from public.workflow_executions e
      where e.workspace_id = v_workspace.id and e.started_at < v_workspace.cutoff and e.ended_at is not null
      order by e.started_at
      limit p_max_rows - cardinality(v_ids)
      on conflict (id) do update set expired_at = excluded.expired_at, retention_days = excluded.retention_days
      returning id)
    select v_ids || coalesce(array_agg(chosen.id), array[]::uuid[]) into v_ids from chosen;
    delete from public.workflow_alert_events a
    where a.id in (select a2.id from public.workflow_alert_events a2
                   where a2.workspace_id = v_workspace.id and a2.fired_at < v_workspace.cutoff limit p_max_rows);
    get diagnostics v_count = row_count;
    v_alerts := v_alerts + v_count;
  end loop;

  -- Their files, one sweep per workspace; the sweeper only ever removes files of tombstoned runs.
  perform pgmq.send('workspace_file_sweeps', jsonb_build_object('workspaceId', f.workspace_id, 'executionIds', f.ids))
  from (select e.workspace_id, jsonb_agg(e.id) as ids from public.workflow_executions e where e.id = any(v_ids) group by e.workspace_id) f;

  delete from workflows_private.idempotency_keys k where k.execution_id = any(v_ids);
  delete from workflows_private.chat_turns t where t.execution_id = any(v_ids);
  delete from public.workflow_executions e where e.id = any(v_ids);
  get diagnostics v_runs = row_count;

  delete from workflows_private.expired_runs t
  where t.id in (select t2.id from workflows_private.expired_runs t2 where t2.expired_at < p_now - interval '365 days' limit p_max_rows);
  get diagnostics v_tombstones = row_count;

  return jsonb_build_object('runs', v_runs, 'tombstones', v_tombstones, 'alertEvents', v_alerts, 'more', v_runs >= p_max_rows);
end;
$$;
comment on function workflows_private.expire_workflow_history(timestamptz, integer, uuid) is 'One bounded batch of retention: removes ended runs past their workspace''s retention with everything hanging off them, leaves tombstones, queues their files'' sweep; drops old tombstones and alert events.';

select cron.schedule('workflows-expire-history', '* * * * *', $$select workflows_private.expire_workflow_history()$$);

-- Readers ---------------------------------------------------------------------------------------------

/**
 * What a reader answers for a run id it did not find: 410 RUN_EXPIRED with `expiredAt` and the
 * retention when the id is a tombstone the principal may read (any member, or a key of the
 * workspace) and, with `p_workflow_id`, of that workflow; otherwise `p_not_found`, the reader's own
 * 404, so a run of a workspace the caller may not read stays indistinguishable from none. The 410
 * keeps the 404's other fields (its rateLimit).
 */
create function workflows_private.missing_run_refusal(p_key public.api_keys, p_user_id uuid, p_run_id uuid, p_workflow_id uuid, p_not_found jsonb)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  v_tombstone workflows_private.expired_runs;
begin
  select * into v_tombstone from workflows_private.expired_runs t where t.id = p_run_id;
  if not found or v_tombstone.workflow_id <> coalesce(p_workflow_id, v_tombstone.workflow_id)
    or (p_key.id is null and p_user_id is null)
    or workflows_private.principal_access(p_key, p_user_id, v_tombstone.workspace_id, 'viewer') <> 'allowed' then
    return p_not_found;
  end if;
  return p_not_found || jsonb_build_object('status', 410, 'code', 'RUN_EXPIRED',
    'error', format('Run %s expired on %s: its workspace keeps runs for %s day%s', p_run_id,
      to_char(v_tombstone.expired_at at time zone 'UTC', 'YYYY-MM-DD'), v_tombstone.retention_days,
      case when v_tombstone.retention_days = 1 then '' else 's' end),
    'expiredAt', to_char(v_tombstone.expired_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'retentionDays', v_tombstone.retention_days);
end;
$$;
comment on function workflows_private.missing_run_refusal(public.api_keys, uuid, uuid, uuid, jsonb) is 'A reader''s answer for a run it did not find: 410 RUN_EXPIRED for a tombstone the caller may read, else the reader''s 404.';

-- Files of expired runs ---------------------------------------------------------------------------------

/**
 * Up to `p_limit` (at most 1,000) names of run files left in `workflow-files` for the given runs of a
 * workspace, only for runs that expired (have a tombstone there), so the sweeper can never be pointed
 * at a live run's files. Files live under <workspace>/<workflow>/<execution>/<name>.
 */
create function public.expired_run_file_names(p_workspace_id uuid, p_execution_ids uuid[], p_limit integer default 1000)
returns text[]
language sql
stable
security definer
set search_path = ''
as $$
  select coalesce(array_agg(f.name order by f.name), '{}')
  from (
    select o.name
    from storage.objects o
    join workflows_private.expired_runs t on t.id::text = split_part(o.name, '/', 3) and t.workspace_id = p_workspace_id
    where o.bucket_id = 'workflow-files'
      and o.name like p_workspace_id::text || '/%'
      and t.id = any(p_execution_ids)
    order by o.name
    limit least(greatest(coalesce(p_limit, 1000), 1), 1000)
  ) f;
$$;
comment on function public.expired_run_file_names(uuid, uuid[], integer) is 'Service role: names of files still stored for expired runs of a workspace (none for live runs), at most 1,000.';

-- Access ------------------------------------------------------------------------------------------------

revoke all on public.workspace_log_retention from public, anon, authenticated;
grant select, delete on public.workspace_log_retention to authenticated;
grant insert (workspace_id, log_retention_days), update (log_retention_days) on public.workspace_log_retention to authenticated;
grant select, insert, update, delete on public.workspace_log_retention to service_role;
alter table public.workspace_log_retention enable row level security;
create policy "Members can read their workspaces' retention" on public.workspace_log_retention
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));
create policy "Admins can set their workspaces' retention" on public.workspace_log_retention
  for insert to authenticated
  with check (workspace_id in (select workflows_private.member_workspace_ids('admin')));
create policy "Admins can change their workspaces' retention" on public.workspace_log_retention
  for update to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('admin')))
  with check (workspace_id in (select workflows_private.member_workspace_ids('admin')));
create policy "Admins can remove their workspaces' retention" on public.workspace_log_retention
  for delete to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('admin')));

revoke all on workflows_private.expired_runs from public, anon, authenticated, service_role;
alter table workflows_private.expired_runs enable row level security;

revoke execute on function
  workflows_private.check_log_retention_override(),
  workflows_private.workspace_retention_days(uuid),
  workflows_private.expire_workflow_history(timestamptz, integer, uuid),
  workflows_private.missing_run_refusal(public.api_keys, uuid, uuid, uuid, jsonb),
  public.expired_run_file_names(uuid, uuid[], integer)
from public, anon, authenticated, service_role;
grant execute on function public.expired_run_file_names(uuid, uuid[], integer) to service_role;
