-- Workflow service, part 2: the record of every run, from every trigger (manual, api, webhook,
-- schedule, chat), and what the async path needs.
--
-- - workflow_executions: one row per run, its id the executionId clients see. Written only by the
--   lifecycle functions (admit, claim, heartbeat, finish, cancel, the sweeper); members of the
--   workspace read it through the data API. A run is `queued` (async, waiting for a worker),
--   `running`, then `completed`, `failed` or `cancelled`; a run that times out is `failed` with
--   error code RUN_TIMEOUT (the job-status API exposes exactly these five statuses). While a run is
--   in flight its lease says until when its worker is known to be alive; the sweeper fails runs
--   whose lease ran out, so no row is left `running` after its worker died.
-- - workflow_execution_snapshots: the draft a manual run executed, stored once per distinct
--   content (hash of the state without layout), as Sim does. Runs from the other triggers point at
--   the deployment they ran instead.
-- - workflows_private.snapshot_issues: what the validator finds in each snapshot in deploy mode,
--   computed once per content, so a manual run of a draft that cannot run is refused.
-- - workflows_private.idempotency_keys: Idempotency-Key → the first execution, for 24 hours.
-- - the pgmq queue `workflow_runs` of async runs, drained by the `workflow-worker` edge function.
-- - the private Storage bucket `workflow-files` for files a run receives or produces.

-- Closed value sets are enum types rather than CHECK constraints: every INSERT and UPDATE re-reads
-- and compiles a table's CHECK expressions (about 4 µs each), and these rows are written twice per
-- run; an enum costs nothing per statement.
create type public.workflow_trigger as enum ('manual', 'api', 'webhook', 'schedule', 'chat');
comment on type public.workflow_trigger is 'How a run was started (the spec''s five entry points).';
create type public.workflow_run_mode as enum ('sync', 'async');
comment on type public.workflow_run_mode is 'sync: answered within the request (streamed or not); async: queued for a worker.';
create type public.workflow_run_status as enum ('queued', 'running', 'completed', 'failed', 'cancelled');
comment on type public.workflow_run_status is 'The job-status API''s statuses: queued → running → completed | failed | cancelled.';
create type public.workflow_log_level as enum ('info', 'error');
comment on type public.workflow_log_level is 'The logs API''s level: error when the run failed.';

create table public.workflow_execution_snapshots (
  id uuid primary key default gen_random_uuid(),
  workflow_id uuid not null,
  workspace_id uuid not null,
  state_hash bytea not null,
  state jsonb not null,
  created_at timestamptz not null default now(),
  unique (workflow_id, state_hash),
  foreign key (workspace_id, workflow_id) references public.workflows (workspace_id, id) on delete cascade
);
comment on table public.workflow_execution_snapshots is 'Workflow states manual runs executed (the draft at the time), stored once per distinct content. Written by the run lifecycle; members read them.';
comment on column public.workflow_execution_snapshots.state_hash is 'sha256 of the state with block positions removed: two drafts that differ only in layout share a snapshot.';
comment on column public.workflow_execution_snapshots.state is 'The state as it ran.';
comment on column public.workflow_execution_snapshots.id is 'Snapshot id (workflow_executions.snapshot_id).';
comment on column public.workflow_execution_snapshots.workflow_id is 'The workflow whose draft it is.';
comment on column public.workflow_execution_snapshots.workspace_id is 'Copied from the workflow so row-level security needs no join.';
comment on column public.workflow_execution_snapshots.created_at is 'When this content first ran.';
create index workflow_execution_snapshots_workspace_id_idx on public.workflow_execution_snapshots (workspace_id);

create table workflows_private.snapshot_issues (
  snapshot_id uuid primary key references public.workflow_execution_snapshots (id) on delete cascade,
  issues jsonb not null
);
comment on table workflows_private.snapshot_issues is 'What the validator finds in a manual-run snapshot in deploy mode (workflows_private.state_issues), computed once when the content is first stored: a snapshot never changes. Kept out of workflow_execution_snapshots, which members read through the data API, since only the runtime needs it.';
comment on column workflows_private.snapshot_issues.snapshot_id is 'The snapshot (workflow_execution_snapshots.id).';
comment on column workflows_private.snapshot_issues.issues is 'Every issue that keeps the snapshot from running, [] when it can run; admit hands them over and a manual run with any is refused (400 INVALID_WORKFLOW).';

create table public.workflow_executions (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null,
  workflow_id uuid not null,
  billing_account_id uuid not null,
  deployment_id uuid,
  deployment_version integer,
  snapshot_id uuid,
  trigger public.workflow_trigger not null,
  mode public.workflow_run_mode not null,
  status public.workflow_run_status not null,
  level public.workflow_log_level not null default 'info',
  api_key_id uuid,
  triggered_by uuid,
  input jsonb,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  ended_at timestamptz,
  duration_ms integer,
  lease_expires_at timestamptz,
  attempt integer not null default 0,
  max_attempts integer not null default 3,
  queue_message_id bigint,
  cancel_requested_at timestamptz,
  cancel_requested_by jsonb,
  cancel_reason text,
  cost_total numeric(20, 10) not null default 0,
  cost jsonb,
  output jsonb,
  error_code text,
  error_message text,
  failed_block jsonb,
  trace_spans jsonb,
  files jsonb,
  response jsonb,
  foreign key (workspace_id, workflow_id) references public.workflows (workspace_id, id) on delete cascade,
  -- The one invariant kept as a constraint (see the enums above for why there are not more): a run
  -- has started unless queued, and has ended exactly when its status is final.
  constraint workflow_executions_timeline check (
    (status = 'queued') = (started_at is null) and (status in ('completed', 'failed', 'cancelled')) = (ended_at is not null)),
  trigger_block_id text,
  parked_until timestamptz,
  park_attempt integer not null default 0,
  rerun_of uuid,
  rerun_from_block text
);
comment on table public.workflow_executions is 'One row per workflow run from any trigger; id is the executionId. Written only by the run lifecycle functions (admit, claim, heartbeat, finish, cancel, sweeper); members of the workspace read them.';
comment on column public.workflow_executions.billing_account_id is 'The account the run was charged to when admitted.';
comment on column public.workflow_executions.id is 'The executionId.';
comment on column public.workflow_executions.workspace_id is 'The workflows workspace (row-level security reads it).';
comment on column public.workflow_executions.workflow_id is 'The workflow run.';
comment on column public.workflow_executions.deployment_id is 'The deployment snapshot the run executed (every trigger but manual). No foreign key: snapshots go only with their workflow, which takes its runs along, and admitting a run then needs no lock on the snapshot.';
comment on column public.workflow_executions.deployment_version is 'Its version number, kept should the snapshot go.';
comment on column public.workflow_executions.snapshot_id is 'The draft a manual run executed (workflow_execution_snapshots; no foreign key, as for deployment_id).';
comment on column public.workflow_executions.trigger is 'manual, api, webhook, schedule or chat.';
comment on column public.workflow_executions.mode is 'sync (answered in the request, streamed or not) or async (queued for a worker).';
comment on column public.workflow_executions.status is 'queued → running → completed | failed | cancelled. A timeout is failed with error_code RUN_TIMEOUT; a run whose worker died is failed with WORKER_LOST.';
comment on column public.workflow_executions.level is 'info, or error when the run failed (the logs API''s level).';
comment on column public.workflow_executions.api_key_id is 'The API key that started the run (no foreign key: the record outlives the key).';
comment on column public.workflow_executions.triggered_by is 'The user who started a manual run, or the owner of the personal key used.';
comment on column public.workflow_executions.input is 'The trigger input of every run (async, for its worker; all, for re-runs), kept as long as the run: it goes when the run goes.';
comment on column public.workflow_executions.created_at is 'When the run was admitted.';
comment on column public.workflow_executions.started_at is 'When the run started executing (null while queued).';
comment on column public.workflow_executions.ended_at is 'When the run ended (null while in flight).';
comment on column public.workflow_executions.duration_ms is 'How long the run executed, as the executor measured it.';
comment on column public.workflow_executions.lease_expires_at is 'While queued: the deadline to start. While running: until when the worker is known alive (heartbeats extend it). The sweeper fails runs past it.';
comment on column public.workflow_executions.attempt is 'How many times a worker has taken the run (sync runs: 1).';
comment on column public.workflow_executions.max_attempts is 'Attempts after which a run whose worker keeps dying is failed.';
comment on column public.workflow_executions.queue_message_id is 'The pgmq message of an async run in flight (queue workflow_runs).';
comment on column public.workflow_executions.cancel_requested_at is 'When cancellation was first asked for (a queued or parked run ends then; a running one is signalled at once and stops within moments, or at its next heartbeat).';
comment on column public.workflow_executions.cancel_requested_by is 'Who first asked: {apiKeyId, apiKeyName, userId} (the key and its name when a key was used, the user behind a personal key or a signed-in cancel); null when the platform cancelled on its own.';
comment on column public.workflow_executions.cancel_reason is 'Why, as the canceller wrote it (at most 500 characters), or null.';
comment on column public.workflow_executions.cost_total is 'USD charged for the run: the base charge from admission, plus its model cost once finished.';
comment on column public.workflow_executions.cost is 'The spec''s cost object {total, base, input, output, tokens {prompt, completion, total}, models {<model>: {input, output, total, tokens, priced}}}, once finished.';
comment on column public.workflow_executions.output is 'The run''s final output.';
comment on column public.workflow_executions.error_code is 'Why the run failed (the executor''s code, e.g. BLOCK_FAILED, RUN_TIMEOUT, or WORKER_LOST).';
comment on column public.workflow_executions.error_message is 'The failure, in words.';
comment on column public.workflow_executions.failed_block is '{id, name, type} of the block at fault.';
comment on column public.workflow_executions.trace_spans is 'The executor''s trace spans.';
comment on column public.workflow_executions.files is 'Files the run received or produced (UserFile objects), or null.';
comment on column public.workflow_executions.response is 'What the HTTP endpoint answered ({status, headers, body}), replayed for a repeated Idempotency-Key.';
comment on column public.workflow_executions.trigger_block_id is 'The trigger block a webhook, schedule or chat run starts from (null: chosen by trigger kind, as for API and manual runs).';
comment on column public.workflow_executions.parked_until is 'While an async run is parked at a long Wait: when it resumes (its lease and its queue message end then). Null otherwise.';
comment on column public.workflow_executions.rerun_of is 'The run this one re-runs (POST /api/v2/runs/{runId}/rerun), null otherwise. No foreign key: a re-run outlives its original.';
comment on column public.workflow_executions.rerun_from_block is 'The block a fromBlock re-run ran again from (with what depends on it); null for other runs.';
comment on column public.workflow_executions.park_attempt is 'The attempt that last parked the run: attempts since then count toward max_attempts, so a run that parks and resumes many times is not given up.';
-- A workflow's errors above a duration (`workflowIds=…&level=error&minDurationMs=…`) are rare, so
-- walking the workflow's errors newest first would read thousands of rows to find a page; with the
-- duration in the key, Postgres reads only the matching rows and sorts those.

create index workflow_executions_workflow_error_durations_idx
  on public.workflow_executions (workflow_id, duration_ms)
  where level = 'error' and ended_at is not null;

create index workflow_executions_workspace_started_idx on public.workflow_executions (workspace_id, started_at desc, id desc);
create index workflow_executions_workflow_started_idx on public.workflow_executions (workflow_id, started_at desc, id desc);
create index workflow_executions_workspace_trigger_idx on public.workflow_executions (workspace_id, trigger, started_at desc, id desc);
create index workflow_executions_workspace_errors_idx on public.workflow_executions (workspace_id, started_at desc, id desc) where level = 'error';
create index workflow_executions_workspace_cost_idx on public.workflow_executions (workspace_id, cost_total) where ended_at is not null;
create index workflow_executions_workspace_duration_idx on public.workflow_executions (workspace_id, duration_ms) where ended_at is not null;
create index workflow_executions_in_flight_idx on public.workflow_executions (lease_expires_at) where status in ('queued', 'running');

create table workflows_private.idempotency_keys (
  workflow_id uuid not null references public.workflows (id) on delete cascade,
  key text not null,
  request_hash text,
  execution_id uuid not null,
  created_at timestamptz not null default now(),
  primary key (workflow_id, key)
);
comment on table workflows_private.idempotency_keys is 'Idempotency-Key of an execute request → the execution it started, for 24 hours (pg_cron deletes older rows). The primary key makes two concurrent requests with one key run once.';
comment on column workflows_private.idempotency_keys.request_hash is 'Hash of the request body (the caller''s choice of digest); the same key with another body is refused (409).';
comment on column workflows_private.idempotency_keys.workflow_id is 'Keys are per workflow.';
comment on column workflows_private.idempotency_keys.key is 'The Idempotency-Key header, 1 to 255 characters.';
comment on column workflows_private.idempotency_keys.execution_id is 'The execution the first request started.';
comment on column workflows_private.idempotency_keys.created_at is 'When it was first used; after 24 hours the key is forgotten.';
create index idempotency_keys_created_at_idx on workflows_private.idempotency_keys (created_at);

/** Removes Idempotency-Keys older than 24 hours (pg_cron, hourly); returns how many. */
create function workflows_private.expire_idempotency_keys(p_now timestamptz default now())
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_count integer;
begin
  delete from workflows_private.idempotency_keys k where k.created_at < p_now - interval '24 hours';
  get diagnostics v_count = row_count;
  return v_count;
end;
$$;
comment on function workflows_private.expire_idempotency_keys(timestamptz) is 'Deletes Idempotency-Keys past their 24 hours.';

select cron.schedule('workflows-expire-idempotency-keys', '17 * * * *', $$select workflows_private.expire_idempotency_keys()$$);

-- The async queue ----------------------------------------------------------------------------------
-- Each message is {executionId}; the row holds everything else. The workflow-worker edge function
-- drains it: the local poller calls it whenever a message is visible, and on hosted Supabase the
-- registry's trigger schedules the per-minute cron job that does the same.

select pgmq.create('workflow_runs');
insert into platform.queue_workers (queue_name, function_name, batch_size, visibility_timeout, enabled)
values ('workflow_runs', 'workflow-worker', 10, 120, true)
on conflict (queue_name) do nothing;

-- Files ----------------------------------------------------------------------------------------------
-- Files runs receive (inline uploads of Files inputs) and produce, under
-- <workspace_id>/<workflow_id>/<execution_id>/<name>. Private: no policy lets anon or authenticated
-- users touch them; the runtime (service role) writes them and hands out signed URLs (5 minutes,
-- per the spec).

insert into storage.buckets (id, name, public, file_size_limit)
values ('workflow-files', 'workflow-files', false, 20 * 1024 * 1024)
on conflict (id) do nothing;

-- Access -------------------------------------------------------------------------------------------

revoke all on public.workflow_executions, public.workflow_execution_snapshots from public, anon, authenticated;
grant select on public.workflow_executions, public.workflow_execution_snapshots to authenticated;
-- The service role (the runtime) reads them too but writes only through the lifecycle functions.
grant select on public.workflow_executions, public.workflow_execution_snapshots to service_role;
revoke all on workflows_private.idempotency_keys, workflows_private.snapshot_issues from public, anon, authenticated, service_role;

alter table public.workflow_executions enable row level security;
alter table public.workflow_execution_snapshots enable row level security;
alter table workflows_private.idempotency_keys enable row level security;
alter table workflows_private.snapshot_issues enable row level security;

create policy "Members can read their workspaces' runs" on public.workflow_executions
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));
create policy "Members can read their workspaces' run snapshots" on public.workflow_execution_snapshots
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));

revoke execute on function workflows_private.expire_idempotency_keys(timestamptz) from public, anon, authenticated, service_role;
