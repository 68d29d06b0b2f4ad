-- Workflow service: OpenTelemetry traces out (docs/tracing.md).
--
-- Every run belongs to a W3C trace: the caller's, when it sent a valid `traceparent` (admit takes
-- it as p_trace), or one of its own. The run's root span (`workflow.execute`) has its own span id,
-- so outbound calls and completion webhooks carry a `traceparent` naming the run.
--
-- A workspace may point an OTLP/HTTP exporter at its tracing stack (Jaeger, Tempo, Honeycomb...).
-- Its headers (API keys) are write-only, as webhook secrets are: stored encrypted with the
-- environment key in a table no API role can read, handed only to the export worker.
--
-- Export is off the run's path: ending a run only queues {executionId} (workflow_trace_exports),
-- and only when its workspace exports; the edge function `workflow-trace-export` turns the run's
-- stored, already masked trace spans into OTLP protobuf and sends them in batches, retrying with
-- backoff. The queue is capped: past the cap a run's spans are dropped and counted, so a dead
-- collector costs a run one indexed lookup and one queue insert at most.

-- Trace ids ------------------------------------------------------------------------------------------

/** A random W3C trace id (32 lowercase hex digits, never all zeros: a v4 UUID has fixed non-zero bits). */
create function workflows_private.new_trace_id()
returns text
language sql
volatile
set search_path = ''
as $$
  select replace(gen_random_uuid()::text, '-', '');
$$;
comment on function workflows_private.new_trace_id() is 'A random W3C trace id: 32 lowercase hex digits from a v4 UUID (its version nibble keeps it non-zero).';

/** A random W3C span id (16 lowercase hex digits; a UUID''s first half is all zeros with negligible odds). */
create function workflows_private.new_span_id()
returns text
language sql
volatile
set search_path = ''
as $$
  select left(replace(gen_random_uuid()::text, '-', ''), 16);
$$;
comment on function workflows_private.new_span_id() is 'A random W3C span id: 16 lowercase hex digits.';

alter table public.workflow_executions
  add column trace_id text not null default workflows_private.new_trace_id(),
  add column trace_span_id text not null default workflows_private.new_span_id(),
  add column trace_parent_span_id text,
  add column trace_state text,
  add constraint workflow_executions_trace_ids check (
    trace_id ~ '^[0-9a-f]{32}$' and trace_id <> repeat('0', 32) and trace_span_id ~ '^[0-9a-f]{16}$'
    and (trace_parent_span_id is null or (trace_parent_span_id ~ '^[0-9a-f]{16}$' and trace_parent_span_id <> repeat('0', 16)))
    and (trace_state is null or char_length(trace_state) <= 512));
comment on column public.workflow_executions.trace_id is 'The W3C trace the run belongs to: its caller''s (a valid traceparent) or its own.';
comment on column public.workflow_executions.trace_span_id is 'The span id of the run''s root span (workflow.execute); outbound calls and completion webhooks carry it in traceparent.';
comment on column public.workflow_executions.trace_parent_span_id is 'The caller''s span id from its traceparent (the root span''s parent), or null for a run that started its trace.';
comment on column public.workflow_executions.trace_state is 'The caller''s tracestate, passed on as it came (at most 512 characters), or null.';

-- Exporters -------------------------------------------------------------------------------------------

create table public.workflow_trace_exporters (
  workspace_id uuid primary key references public.workspaces (id) on delete cascade,
  endpoint text not null,
  headers jsonb,
  header_names text[] not null default '{}',
  enabled boolean not null default true,
  exported_spans bigint not null default 0,
  dropped_spans bigint not null default 0,
  last_exported_at timestamptz,
  last_error text,
  last_error_at timestamptz,
  created_by uuid default auth.uid() references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
comment on table public.workflow_trace_exporters is 'Where a workspace''s run traces are exported (OTLP/HTTP protobuf), at most one per workspace. Members read, admins write; headers are write-only.';
comment on column public.workflow_trace_exporters.workspace_id is 'The workspace whose runs are exported.';
comment on column public.workflow_trace_exporters.endpoint is 'The OTLP/HTTP traces URL (e.g. https://api.honeycomb.io/v1/traces): an absolute http(s) URL without credentials, at most 2048 characters. The outbound guard judges its host on every export.';
comment on column public.workflow_trace_exporters.headers is 'Write-only: an object of header names to values sent with every export (API keys), at most 20, values at most 4096 characters; {} removes them. Always reads as null; see header_names.';
comment on column public.workflow_trace_exporters.header_names is 'The names of the headers set (their values are never readable). Read-only.';
comment on column public.workflow_trace_exporters.enabled is 'Runs are queued for export only while enabled.';
comment on column public.workflow_trace_exporters.exported_spans is 'Spans the collector accepted. Read-only.';
comment on column public.workflow_trace_exporters.dropped_spans is 'Spans not exported: past a run''s span cap, of runs over the queue cap, or of exports given up after every retry. Read-only.';
comment on column public.workflow_trace_exporters.last_exported_at is 'When the collector last accepted spans. Read-only.';
comment on column public.workflow_trace_exporters.last_error is 'Why the last failed export failed. Read-only.';
comment on column public.workflow_trace_exporters.last_error_at is 'When it failed. Read-only.';
comment on column public.workflow_trace_exporters.created_by is 'Who created it.';
comment on column public.workflow_trace_exporters.created_at is 'When it was created.';
comment on column public.workflow_trace_exporters.updated_at is 'When it last changed.';

create table workflows_private.trace_exporter_headers (
  -- Deferred: the row is written by the exporter's BEFORE trigger, ahead of the exporter.
  workspace_id uuid primary key references public.workflow_trace_exporters (workspace_id) on delete cascade deferrable initially deferred,
  headers_encrypted bytea not null
);
comment on table workflows_private.trace_exporter_headers is 'Headers of trace exporters (JSON text), encrypted with the environment key. No API role has any privilege on it.';
comment on column workflows_private.trace_exporter_headers.workspace_id is 'The exporter''s workspace.';
comment on column workflows_private.trace_exporter_headers.headers_encrypted is 'pgp_sym_encrypt(headers::text, environment_key()), AES-256.';

/**
 * Trigger, before an exporter is written: refuses a writer who is not an admin of the workspace
 * (42501, whether or not it exists), checks the endpoint's form and the headers', and moves the
 * headers into trace_exporter_headers encrypted, so the row never holds them. The counters are the
 * export worker's: an API user's write keeps them as they were.
 */
create function workflows_private.prepare_trace_exporter()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_name text;
  v_value jsonb;
begin
  if tg_op = 'UPDATE' and new.workspace_id is distinct from old.workspace_id then
    raise exception 'An exporter''s workspace cannot change' using errcode = '42501';
  end if;
  if (select auth.role()) is distinct from 'service_role' and not workflows_private.has_workspace_role(new.workspace_id, 'admin') then
    raise exception 'Only an admin of workspace % may configure its trace exporter', new.workspace_id using errcode = '42501';
  end if;
  if new.endpoint is null or char_length(new.endpoint) > 2048 or new.endpoint !~* '^https?://[^/?#@[:space:][:cntrl:]]+([/?#][^[:space:][:cntrl:]]*)?$' then
    raise exception 'The exporter endpoint must be an absolute http or https URL without spaces, user name or password, at most 2048 characters'
      using errcode = '23514';
  end if;

  new.header_names := case when tg_op = 'INSERT' then '{}' else old.header_names end;
  if new.headers is not null then
    if jsonb_typeof(new.headers) <> 'object' or (select count(*) from jsonb_object_keys(new.headers)) > 20 then
      raise exception 'Exporter headers are an object of at most 20 header names to text values' using errcode = '23514';
    end if;
    for v_name, v_value in select h.key, h.value from jsonb_each(new.headers) h loop
      if v_name !~ '^[!#$%&''*+.^_`|~0-9A-Za-z-]{1,128}$' or jsonb_typeof(v_value) <> 'string'
        or char_length(v_value #>> '{}') > 4096 or (v_value #>> '{}') ~ '[[:cntrl:]]' then
        raise exception 'Exporter header % must be a valid HTTP header name with a text value of at most 4096 characters', left(v_name, 128)
          using errcode = '23514';
      end if;
    end loop;
    if new.headers = '{}'::jsonb then
      delete from workflows_private.trace_exporter_headers h where h.workspace_id = new.workspace_id;
    else
      insert into workflows_private.trace_exporter_headers (workspace_id, headers_encrypted)
      values (new.workspace_id, workflows_private.encrypt_environment_value(new.headers::text, workflows_private.environment_key()))
      on conflict (workspace_id) do update set headers_encrypted = excluded.headers_encrypted;
    end if;
    new.header_names := array(select k from jsonb_object_keys(new.headers) k order by k);
  end if;
  new.headers := null;

  if (select auth.role()) is distinct from 'service_role' then
    new.exported_spans := case when tg_op = 'INSERT' then 0 else old.exported_spans end;
    new.dropped_spans := case when tg_op = 'INSERT' then 0 else old.dropped_spans end;
    new.last_exported_at := case when tg_op = 'INSERT' then null else old.last_exported_at end;
    new.last_error := case when tg_op = 'INSERT' then null else old.last_error end;
    new.last_error_at := case when tg_op = 'INSERT' then null else old.last_error_at end;
  end if;
  if tg_op = 'UPDATE' then
    new.updated_at := now();
  end if;
  return new;
end;
$$;
comment on function workflows_private.prepare_trace_exporter() is 'Trigger: checks the writer (an admin), the endpoint and the headers; stores the headers encrypted and out of the row; keeps the worker''s counters.';

create trigger workflow_trace_exporters_prepare before insert or update on public.workflow_trace_exporters
  for each row execute function workflows_private.prepare_trace_exporter();

-- The queue -------------------------------------------------------------------------------------------
-- Messages are {executionId}; the run row holds its spans. Limits (docs/tracing.md#limits): at
-- most trace_export_queue_cap() runs wait; the worker reads 50 at a time, sends at most 1,000 spans
-- a run, and gives up after trace_export_max_attempts() attempts.

select pgmq.create('workflow_trace_exports');
insert into platform.queue_workers (queue_name, function_name, batch_size, visibility_timeout)
values ('workflow_trace_exports', 'workflow-trace-export', 50, 60)
on conflict (queue_name) do nothing;

/** How many runs may wait for export at once (all workspaces); past it, a run's spans are dropped and counted. */
create function workflows_private.trace_export_queue_cap()
returns integer
language sql
immutable
set search_path = ''
as $$
  select 10000;
$$;
comment on function workflows_private.trace_export_queue_cap() is 'Most runs waiting for trace export at once: 10,000 (docs/tracing.md#limits).';

/** How many times a run's export is tried before its spans are dropped. */
create function workflows_private.trace_export_max_attempts()
returns integer
language sql
immutable
set search_path = ''
as $$
  select 4;
$$;
comment on function workflows_private.trace_export_max_attempts() is 'Attempts per run export before it is given up: 4 (retries after 1, 2 and 4 s; docs/tracing.md#limits).';

/**
 * Trigger: a run just ended in a workspace that exports; queue it, unless the queue is at its cap
 * (the count stops at the cap, so a full queue costs a bounded scan), in which case its spans are
 * counted as dropped. Runs of other workspaces cost one primary-key lookup.
 */
create function workflows_private.queue_trace_export()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if not exists (select 1 from public.workflow_trace_exporters x where x.workspace_id = new.workspace_id and x.enabled) then
    return null;
  end if;
  if (select count(*) from (select 1 from pgmq.q_workflow_trace_exports q limit workflows_private.trace_export_queue_cap()) full_queue)
      >= workflows_private.trace_export_queue_cap() then
    update public.workflow_trace_exporters x
    set dropped_spans = x.dropped_spans + 1 + coalesce(jsonb_array_length(case when jsonb_typeof(new.trace_spans) = 'array' then new.trace_spans end), 0),
      last_error = 'The export queue was full: the run''s spans were dropped', last_error_at = now()
    where x.workspace_id = new.workspace_id;
    return null;
  end if;
  perform pgmq.send('workflow_trace_exports', jsonb_build_object('executionId', new.id));
  return null;
end;
$$;
comment on function workflows_private.queue_trace_export() is 'Trigger: queues a just-ended run for trace export when its workspace exports, within the queue cap.';

create trigger workflow_executions_queue_trace_export
  after update of ended_at on public.workflow_executions
  for each row
  when (old.ended_at is null and new.ended_at is not null)
  execute function workflows_private.queue_trace_export();

-- The worker's side -----------------------------------------------------------------------------------

/**
 * The export worker takes up to `p_batch_size` queued runs: each with its exporter (endpoint and
 * decrypted headers: only this service-role function hands them out) and what its spans are built
 * from (ids, workflow, status, times, error, cost, trace context, masked trace spans). Messages of
 * runs that are gone or whose workspace no longer exports are deleted. `attempt` is how many times
 * the message has been read, this time included.
 */
create function public.claim_trace_exports(p_batch_size integer default 50, p_visibility_timeout integer default 60)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_claimed jsonb;
  v_stale bigint[];
begin
  if p_batch_size is null or p_batch_size not between 1 and 1000 or p_visibility_timeout is null or p_visibility_timeout not between 1 and 43200 then
    raise exception 'claim_trace_exports: batch size 1 to 1000, visibility timeout 1 to 43200 s' using errcode = '22023';
  end if;
  with read as materialized (
    select m.msg_id, m.read_ct,
      case when m.message ->> 'executionId' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then (m.message ->> 'executionId')::uuid end as execution_id
    from pgmq.read('workflow_trace_exports', p_visibility_timeout, p_batch_size) m
  ),
  joined as materialized (
    select r.msg_id, r.read_ct, e, x.endpoint, x.workspace_id
    from read r
    left join public.workflow_executions e on e.id = r.execution_id
    left join public.workflow_trace_exporters x on x.workspace_id = e.workspace_id and x.enabled
  )
  select
    jsonb_agg(jsonb_build_object(
      'messageId', j.msg_id,
      'attempt', j.read_ct,
      'workspaceId', j.workspace_id,
      'endpoint', j.endpoint,
      'headers', (select extensions.pgp_sym_decrypt(h.headers_encrypted, workflows_private.environment_key())::jsonb
                  from workflows_private.trace_exporter_headers h where h.workspace_id = j.workspace_id),
      'run', jsonb_build_object(
        'executionId', (j.e).id, 'workflowId', (j.e).workflow_id,
        'workflowName', (select w.name from public.workflows w where w.id = (j.e).workflow_id),
        'trigger', (j.e).trigger, 'status', (j.e).status, 'startedAt', coalesce((j.e).started_at, (j.e).created_at),
        'endedAt', (j.e).ended_at, 'errorCode', (j.e).error_code, 'errorMessage', (j.e).error_message,
        'costTotal', (j.e).cost_total, 'traceId', (j.e).trace_id, 'spanId', (j.e).trace_span_id,
        'parentSpanId', (j.e).trace_parent_span_id, 'traceState', (j.e).trace_state, 'traceSpans', (j.e).trace_spans))
      order by j.msg_id) filter (where j.endpoint is not null),
    array_agg(j.msg_id) filter (where j.endpoint is null)
  into v_claimed, v_stale
  from joined j;
  if v_stale is not null then
    perform pgmq.delete('workflow_trace_exports', v_stale);
  end if;
  return jsonb_build_object('exports', coalesce(v_claimed, '[]'::jsonb), 'maxAttempts', workflows_private.trace_export_max_attempts());
end;
$$;
comment on function public.claim_trace_exports(integer, integer) is 'The trace export worker takes queued runs with their exporter (headers decrypted) and spans. Service role only.';

/**
 * What the export worker did with a batch: `messages` [{messageId, outcome: exported | retry |
 * dropped, retryInSeconds}] (exported and dropped messages are deleted, a retry is hidden until
 * due) and `exporters` [{workspaceId, exportedSpans, droppedSpans, error}] added to the counters.
 */
create function public.record_trace_exports(p_report jsonb)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  if jsonb_typeof(p_report -> 'messages') <> 'array' or jsonb_typeof(p_report -> 'exporters') <> 'array' then
    raise exception 'record_trace_exports: {messages: [...], exporters: [...]}' using errcode = '22023';
  end if;
  perform pgmq.delete('workflow_trace_exports', array(
    select (m ->> 'messageId')::bigint from jsonb_array_elements(p_report -> 'messages') m where m ->> 'outcome' in ('exported', 'dropped')));
  perform pgmq.set_vt('workflow_trace_exports', (m ->> 'messageId')::bigint, greatest(1, least(3600, coalesce((m ->> 'retryInSeconds')::integer, 1))))
  from jsonb_array_elements(p_report -> 'messages') m where m ->> 'outcome' = 'retry';
  update public.workflow_trace_exporters x set
    exported_spans = x.exported_spans + coalesce((r ->> 'exportedSpans')::bigint, 0),
    dropped_spans = x.dropped_spans + coalesce((r ->> 'droppedSpans')::bigint, 0),
    last_exported_at = case when coalesce((r ->> 'exportedSpans')::bigint, 0) > 0 then now() else x.last_exported_at end,
    last_error = coalesce(left(r ->> 'error', 500), x.last_error),
    last_error_at = case when r ->> 'error' is not null then now() else x.last_error_at end
  from jsonb_array_elements(p_report -> 'exporters') r
  where x.workspace_id = (r ->> 'workspaceId')::uuid;
end;
$$;
comment on function public.record_trace_exports(jsonb) is 'The trace export worker reports a batch: messages deleted or hidden for their retry, exporter counters updated. Service role only.';

-- Access ----------------------------------------------------------------------------------------------

revoke all on public.workflow_trace_exporters from public, anon, authenticated;
grant select, insert, update, delete on public.workflow_trace_exporters to authenticated;
grant all on public.workflow_trace_exporters to service_role;
revoke all on workflows_private.trace_exporter_headers from public, anon, authenticated, service_role;
alter table public.workflow_trace_exporters enable row level security;
alter table workflows_private.trace_exporter_headers enable row level security;

create policy "Members can read their workspaces' trace exporter" on public.workflow_trace_exporters
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));
create policy "Admins can add a trace exporter" on public.workflow_trace_exporters
  for insert to authenticated
  with check (workspace_id in (select workflows_private.member_workspace_ids('admin')));
create policy "Admins can change the trace exporter" on public.workflow_trace_exporters
  for update to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('admin')))
  with check (workspace_id in (select workflows_private.member_workspace_ids('admin')));
create policy "Admins can delete the trace exporter" on public.workflow_trace_exporters
  for delete to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('admin')));

-- The id functions are column defaults: whoever inserts a run evaluates them.
revoke execute on function workflows_private.new_trace_id(), workflows_private.new_span_id() from public, anon, authenticated;
grant execute on function workflows_private.new_trace_id(), workflows_private.new_span_id() to service_role;
revoke execute on function
  workflows_private.prepare_trace_exporter(),
  workflows_private.trace_export_queue_cap(),
  workflows_private.trace_export_max_attempts(),
  workflows_private.queue_trace_export()
  from public, anon, authenticated, service_role;
revoke execute on function public.claim_trace_exports(integer, integer), public.record_trace_exports(jsonb) from public, anon, authenticated;
grant execute on function public.claim_trace_exports(integer, integer), public.record_trace_exports(jsonb) to service_role;
