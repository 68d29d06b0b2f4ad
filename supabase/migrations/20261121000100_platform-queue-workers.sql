-- Queue workers: which edge function drains which pgmq queue, and how that function gets invoked.
--
-- A queue worker is an edge function that, when POSTed `{queue_name, batch_size, visibility_timeout}`,
-- reads up to batch_size messages with pgmq.read(queue_name, visibility_timeout, batch_size),
-- handles each one and deletes or archives it. A worker that fails mid-message simply does not
-- delete it: the message becomes visible again when its visibility timeout ends and is handled
-- again (at-least-once delivery, so handlers must be idempotent).
--
-- Register a worker from the migration that owns the queue:
--   select pgmq.create('webhook_deliveries');
--   insert into platform.queue_workers (queue_name, function_name, batch_size, visibility_timeout)
--   values ('webhook_deliveries', 'deliver-webhooks', 20, 60);
--
-- Who invokes the worker function:
-- * Both: a message sent visible at once wakes its worker at commit (see "Waking a worker" below);
--   the polling that follows is the safety net for everything else.
-- * Local platform (`npm start`, `npm test`): platform/workers/queue-workers.ts LISTENs for those
--   wake-ups and polls platform.queue_workers_with_work() every 200 ms (backing off to 1 s when idle) and POSTs to
--   /functions/v1/<function_name> through the gateway with the service_role key, at most one
--   invocation per queue at a time. Messages are picked up within about a second of becoming
--   visible, which is what second-level delays (webhook retries at 5 s) need.
-- * Hosted Supabase: pg_cron runs platform.invoke_queue_worker('<queue>') every minute for each
--   enabled worker, which POSTs the same body with pg_net when the queue has visible messages.
--   The project URL and key are read from Vault; store them once per project:
--     select vault.create_secret('https://<project-ref>.supabase.co', 'project_url');
--     select vault.create_secret('<service_role key>', 'queue_worker_key');
--   Jobs are kept in step with this table by a trigger. pg_cron's minute resolution means a message
--   may wait up to a minute there; a worker drains everything visible when it runs.
--   The cron part is installed only where pg_net is available (it is not on the local platform).

create extension if not exists pgmq;

create schema if not exists platform;
comment on schema platform is
  'Internals of the project''s platform plumbing (queue worker registry). Not exposed through the Data API.';

-- Default-deny: only postgres (owner) and service_role use this schema.
revoke all on schema platform from public;
grant usage on schema platform to postgres, service_role;

create table platform.queue_workers (
  queue_name text primary key,
  function_name text not null,
  batch_size integer not null default 10,
  visibility_timeout integer not null default 30,
  enabled boolean not null default true,
  created_at timestamptz not null default now(),
  constraint queue_workers_queue_name_format check (queue_name ~ '^[a-z0-9_]{1,47}$'),
  constraint queue_workers_function_name_format check (function_name ~ '^[A-Za-z][A-Za-z0-9_-]*$'),
  constraint queue_workers_batch_size_range check (batch_size between 1 and 1000),
  constraint queue_workers_visibility_timeout_range check (visibility_timeout between 1 and 43200)
);
comment on table platform.queue_workers is
  'One row per pgmq queue that an edge function drains; the local poller and the hosted cron jobs both read it.';
comment on column platform.queue_workers.queue_name is 'The pgmq queue (lower case, as pgmq stores names).';
comment on column platform.queue_workers.function_name is 'Slug of the edge function invoked as POST /functions/v1/<function_name>.';
comment on column platform.queue_workers.batch_size is 'Most messages the function should read per invocation (pgmq.read qty).';
comment on column platform.queue_workers.visibility_timeout is
  'Seconds a read message stays hidden (pgmq.read vt); a message not deleted by then is delivered again.';
comment on column platform.queue_workers.enabled is 'False pauses the worker without forgetting it.';
comment on column platform.queue_workers.created_at is 'When the worker was registered.';

alter table platform.queue_workers enable row level security;
revoke all on table platform.queue_workers from public, anon, authenticated;
grant select, insert, update, delete on table platform.queue_workers to service_role;

/**
 * The enabled workers whose queue holds at least one visible message: the local poller's one query
 * per tick. Queue tables are looked up by name, so a worker registered before its queue exists is
 * skipped rather than failing the whole poll.
 */
create function platform.queue_workers_with_work()
returns setof platform.queue_workers
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  worker platform.queue_workers;
  queue_table text;
  has_work boolean;
begin
  for worker in
    select * from platform.queue_workers w where w.enabled order by w.queue_name
  loop
    queue_table := 'q_' || worker.queue_name;
    if pg_catalog.to_regclass(format('pgmq.%I', queue_table)) is null then
      continue;
    end if;
    execute format('select exists (select 1 from pgmq.%I where vt <= pg_catalog.clock_timestamp())', queue_table)
      into has_work;
    if has_work then
      return next worker;
    end if;
  end loop;
end;
$$;
comment on function platform.queue_workers_with_work() is
  'Enabled queue workers whose queue has a message visible now (vt <= clock_timestamp()).';

revoke all on function platform.queue_workers_with_work() from public;
grant execute on function platform.queue_workers_with_work() to postgres, service_role;

-- Waking a worker as work arrives ------------------------------------------------------------------
-- Polling alone makes every async run wait for the next poll (up to a second locally, a minute on
-- hosted Supabase). So a registered queue's table carries a statement trigger: when a statement
-- inserts a message that is visible at once, it NOTIFYs `platform_queue_work` with the queue name
-- (delivered at commit, so the listener finds the message) and, where pg_net is installed, POSTs
-- the worker function then (pg_net sends after commit too). The poller and the cron job stay as
-- the safety net: a lost notification, a message that becomes visible later (a delay, a retry, a
-- parked run's due time) or a worker that was busy is still found by them.

/**
 * Statement trigger on pgmq.q_<queue>: wakes the queue's worker when the statement inserted a
 * message visible now. One notification and at most one invocation per statement, however many
 * rows it inserted (NOTIFY also folds equal payloads within a transaction).
 */
create function platform.wake_queue_worker()
returns trigger
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_queue_name text := pg_catalog.substr(tg_table_name, 3);
begin
  if not exists (select 1 from new_messages m where m.vt <= pg_catalog.clock_timestamp()) then
    return null;
  end if;
  perform pg_catalog.pg_notify('platform_queue_work', v_queue_name);
  -- Hosted only (defined below where pg_net exists); dynamic so nothing here names it locally.
  if pg_catalog.to_regprocedure('platform.invoke_queue_worker(text)') is not null then
    execute 'select platform.invoke_queue_worker($1)' using v_queue_name;
  end if;
  return null;
end;
$$;
comment on function platform.wake_queue_worker() is
  'Statement trigger on a registered queue''s table: NOTIFY platform_queue_work (and, hosted, a pg_net invocation) when a message visible now was inserted.';
revoke all on function platform.wake_queue_worker() from public;

/**
 * Registering a worker attaches the wake trigger to its queue's table. A queue created after its
 * worker was registered is drained by polling only until the worker's row is written again.
 */
create function platform.attach_queue_wake_trigger()
returns trigger
language plpgsql
volatile
security definer
set search_path = ''
as $$
begin
  if pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', 'q_' || new.queue_name)) is null then
    raise notice 'queue % does not exist yet: its worker is woken by polling only', new.queue_name;
    return null;
  end if;
  execute pg_catalog.format(
    'create or replace trigger wake_queue_worker after insert on pgmq.%I referencing new table as new_messages '
    'for each statement execute function platform.wake_queue_worker()',
    'q_' || new.queue_name
  );
  return null;
end;
$$;
comment on function platform.attach_queue_wake_trigger() is
  'Trigger on platform.queue_workers: attaches platform.wake_queue_worker to the registered queue''s table.';
revoke all on function platform.attach_queue_wake_trigger() from public;

create trigger queue_workers_attach_wake_trigger
  after insert or update of queue_name on platform.queue_workers
  for each row execute function platform.attach_queue_wake_trigger();

-- Hosted Supabase only: cron + pg_net invocation. Created through dynamic SQL so nothing here
-- refers to net.* or vault.* where those schemas do not exist.
do $hosted$
begin
  if not exists (select 1 from pg_catalog.pg_available_extensions where name = 'pg_net')
    or not exists (select 1 from pg_catalog.pg_available_extensions where name = 'pg_cron') then
    raise notice 'pg_net or pg_cron is not available: queue workers are invoked by the platform''s poller only';
    return;
  end if;

  create extension if not exists pg_net;
  create extension if not exists pg_cron;

  /**
   * POSTs {queue_name, batch_size, visibility_timeout} to the queue's worker function with pg_net
   * when the queue has a visible message; returns the pg_net request id, or null when it did not call.
   */
  execute $fn$
    create function platform.invoke_queue_worker(queue_name text)
    returns bigint
    language plpgsql
    volatile
    security invoker
    set search_path = ''
    as $body$
    declare
      worker platform.queue_workers;
      project_url text;
      worker_key text;
    begin
      select * into worker from platform.queue_workers w where w.queue_name = invoke_queue_worker.queue_name and w.enabled;
      if not found then
        return null;
      end if;
      if not exists (select 1 from platform.queue_workers_with_work() r where r.queue_name = worker.queue_name) then
        return null;
      end if;
      select decrypted_secret into project_url from vault.decrypted_secrets where name = 'project_url';
      select decrypted_secret into worker_key from vault.decrypted_secrets where name = 'queue_worker_key';
      if project_url is null or worker_key is null then
        raise warning 'Vault secrets project_url and queue_worker_key are needed to invoke queue workers';
        return null;
      end if;
      return net.http_post(
        url := rtrim(project_url, '/') || '/functions/v1/' || worker.function_name,
        body := jsonb_build_object(
          'queue_name', worker.queue_name,
          'batch_size', worker.batch_size,
          'visibility_timeout', worker.visibility_timeout
        ),
        headers := jsonb_build_object(
          'Content-Type', 'application/json',
          'Authorization', 'Bearer ' || worker_key
        ),
        timeout_milliseconds := 5000
      );
    end;
    $body$
  $fn$;
  comment on function platform.invoke_queue_worker(text) is
    'Hosted only: invokes the queue''s worker function through pg_net when the queue has visible messages.';
  revoke all on function platform.invoke_queue_worker(text) from public;

  /** Keeps one per-minute cron job per enabled worker, named queue-worker:<queue_name>. */
  execute $fn$
    create function platform.sync_queue_worker_jobs()
    returns trigger
    language plpgsql
    security invoker
    set search_path = ''
    as $body$
    begin
      if tg_op in ('UPDATE', 'DELETE')
        and exists (select 1 from cron.job where jobname = 'queue-worker:' || old.queue_name) then
        perform cron.unschedule('queue-worker:' || old.queue_name);
      end if;
      if tg_op in ('INSERT', 'UPDATE') and new.enabled then
        perform cron.schedule(
          'queue-worker:' || new.queue_name,
          '* * * * *',
          format('select platform.invoke_queue_worker(%L)', new.queue_name)
        );
      end if;
      return null;
    end;
    $body$
  $fn$;
  comment on function platform.sync_queue_worker_jobs() is
    'Hosted only: schedules or unschedules the cron job of a queue worker when its row changes.';
  revoke all on function platform.sync_queue_worker_jobs() from public;

  create trigger queue_workers_sync_cron_jobs
    after insert or update or delete on platform.queue_workers
    for each row execute function platform.sync_queue_worker_jobs();
end;
$hosted$;
