-- orbita-pgmq-compatible: a pure SQL/PL/pgSQL stand-in for pgmq 1.4.4, written from its documented
-- interface so the local platform's plain PostgreSQL runs the same migrations and queue calls as
-- hosted Supabase. Partitioned queues (pg_partman) are not supported.
--
-- Design notes:
-- * Every function is security invoker: a queue call runs with the caller's privileges, so the
--   grants a project gives on schema pgmq decide who may use which queue, exactly as with pgmq.
-- * Queue tables are created by the caller and owned by it; they are never made extension
--   members, so they survive in pg_dump output and service_role can create queues without owning
--   the extension. Supabase likewise detaches user queues from the extension.
-- * The objects this script creates end up owned by the role that ran CREATE EXTENSION (see the
--   end of the file), as Supabase's after-create hook does, so postgres can grant them onward.
-- * Visibility is measured with clock_timestamp(), not now(), so messages sent and read inside one
--   long transaction (a pgTAP plan, a batch job) still follow their visibility timeouts.

\echo Use "CREATE EXTENSION pgmq" to load this file. \quit

create table pgmq.meta (
  queue_name varchar unique not null,
  is_partitioned boolean not null,
  is_unlogged boolean not null,
  created_at timestamptz not null default now()
);
comment on table pgmq.meta is 'One row per queue; the registry list_queues and metrics_all read.';

-- Queue rows live in pgmq.q_*/a_* tables outside the extension, so pg_dump must carry the registry
-- rows as well or a restored database would hold queues that list_queues does not know about.
select pg_catalog.pg_extension_config_dump('pgmq.meta', '');

create type pgmq.message_record as (
  msg_id bigint,
  read_ct integer,
  enqueued_at timestamptz,
  vt timestamptz,
  message jsonb
);

create type pgmq.queue_record as (
  queue_name varchar,
  is_partitioned boolean,
  is_unlogged boolean,
  created_at timestamptz
);

create type pgmq.metrics_result as (
  queue_name text,
  queue_length bigint,
  newest_msg_age_sec integer,
  oldest_msg_age_sec integer,
  total_messages bigint,
  scrape_time timestamptz
);

/**
 * Validates a queue name and returns the name of one of its tables (prefix 'q' or 'a').
 * Queue names become part of table names in dynamic SQL, so only letters, digits and underscores
 * pass (then lower-cased, so 'Jobs' and 'jobs' are one queue); 47 characters keeps the longest
 * derived identifier, archived_at_idx_<name>, within PostgreSQL's 63-byte limit instead of being
 * silently truncated.
 */
create function pgmq.format_table_name(queue_name text, prefix text)
returns text
language plpgsql
immutable
security invoker
set search_path = ''
as $$
begin
  if queue_name is null or queue_name = '' then
    raise exception 'queue name must not be empty'
      using errcode = 'invalid_parameter_value';
  end if;
  if length(queue_name) > 47 then
    raise exception 'queue name is too long, maximum length is 47 characters'
      using errcode = 'invalid_parameter_value', detail = format('%L has %s characters.', queue_name, length(queue_name));
  end if;
  if lower(queue_name) !~ '^[a-z0-9_]+$' then
    raise exception 'queue name contains invalid characters'
      using errcode = 'invalid_parameter_value',
        detail = format('%L contains characters other than letters, digits and underscores.', queue_name);
  end if;
  return prefix || '_' || lower(queue_name);
end;
$$;
comment on function pgmq.format_table_name(text, text) is
  'Validates a queue name and returns its table name for the prefix (q for messages, a for the archive).';

/**
 * Shared body of create_non_partitioned and create_unlogged. Creating a queue that already exists
 * returns before any DDL: callers often create a queue right before sending to it, and CREATE INDEX
 * IF NOT EXISTS would otherwise take a lock that blocks concurrent sends and reads.
 */
create function pgmq._create_queue(queue_name text, is_unlogged boolean)
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  qtable text := pgmq.format_table_name(queue_name, 'q');
  atable text := pgmq.format_table_name(queue_name, 'a');
  qname text := lower(queue_name);
begin
  -- Two sessions creating the same new queue would otherwise race on the catalog and one would
  -- fail with a duplicate-type error despite IF NOT EXISTS.
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('pgmq.create'), pg_catalog.hashtext(qname));

  if exists (select from pgmq.meta m where m.queue_name = qname)
    and pg_catalog.to_regclass(format('pgmq.%I', qtable)) is not null
    and pg_catalog.to_regclass(format('pgmq.%I', atable)) is not null
  then
    return;
  end if;

  execute format(
    'create %s table if not exists pgmq.%I (
       msg_id bigint primary key generated always as identity,
       read_ct integer not null default 0,
       enqueued_at timestamptz not null default now(),
       vt timestamptz not null,
       message jsonb
     )',
    case when is_unlogged then 'unlogged' else '' end,
    qtable
  );
  execute format('create index if not exists %I on pgmq.%I (vt)', qtable || '_vt_idx', qtable);

  -- The archive is the durable record of handled messages, so it stays logged even for unlogged queues.
  execute format(
    'create table if not exists pgmq.%I (
       msg_id bigint primary key,
       read_ct integer not null default 0,
       enqueued_at timestamptz not null default now(),
       archived_at timestamptz not null default now(),
       vt timestamptz not null,
       message jsonb
     )',
    atable
  );
  execute format('create index if not exists %I on pgmq.%I (archived_at)', 'archived_at_idx_' || qname, atable);

  insert into pgmq.meta (queue_name, is_partitioned, is_unlogged)
  values (qname, false, is_unlogged)
  on conflict do nothing;
end;
$$;
comment on function pgmq._create_queue(text, boolean) is
  'Internal: creates the queue and archive tables and registers the queue; a no-op for existing queues.';

create function pgmq.create_non_partitioned(queue_name text)
returns void
language sql
volatile
security invoker
set search_path = ''
begin atomic
  select pgmq._create_queue(queue_name, false);
end;
comment on function pgmq.create_non_partitioned(text) is
  'Creates a queue (table pgmq.q_<name>) and its archive (pgmq.a_<name>); does nothing if the queue exists.';

create function pgmq.create_unlogged(queue_name text)
returns void
language sql
volatile
security invoker
set search_path = ''
begin atomic
  select pgmq._create_queue(queue_name, true);
end;
comment on function pgmq.create_unlogged(text) is
  'Creates a queue whose message table is unlogged: faster writes, but its messages are lost on a crash. The archive stays logged.';

/** pgmq's create makes a non-partitioned queue unless pg_partman is in play, which it never is here. */
create function pgmq.create(queue_name text)
returns void
language sql
volatile
security invoker
set search_path = ''
begin atomic
  select pgmq.create_non_partitioned(queue_name);
end;
comment on function pgmq.create(text) is
  'Creates a queue and its archive; calling it again for an existing queue is a no-op.';

/**
 * The partitioned argument exists only so pgmq-style calls keep working: no queue here can be
 * partitioned (that needs pg_partman), so it changes nothing beyond a notice.
 */
create function pgmq.drop_queue(queue_name text, partitioned boolean default false)
returns boolean
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  qtable text := pgmq.format_table_name(queue_name, 'q');
  atable text := pgmq.format_table_name(queue_name, 'a');
  qname text := lower(queue_name);
  existed boolean;
begin
  if partitioned then
    raise notice 'pgmq.drop_queue ignores partitioned: queues here are never partitioned';
  end if;
  perform pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('pgmq.create'), pg_catalog.hashtext(qname));
  delete from pgmq.meta m where m.queue_name = qname;
  existed := found or pg_catalog.to_regclass(format('pgmq.%I', qtable)) is not null;
  execute format('drop table if exists pgmq.%I, pgmq.%I', qtable, atable);
  return existed;
end;
$$;
comment on function pgmq.drop_queue(text, boolean) is
  'Drops a queue, its archive and its registry row; returns false if there was no such queue.';

create function pgmq.send(queue_name text, msg jsonb, delay integer default 0)
returns setof bigint
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  return query execute format(
    'insert into pgmq.%I (vt, message)
     values (pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $2), $1)
     returning msg_id',
    pgmq.format_table_name(queue_name, 'q')
  ) using msg, delay;
end;
$$;
comment on function pgmq.send(text, jsonb, integer) is
  'Enqueues one message, readable after delay seconds; returns its msg_id.';

create function pgmq.send_batch(queue_name text, msgs jsonb[], delay integer default 0)
returns setof bigint
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  return query execute format(
    'insert into pgmq.%I (vt, message)
     select pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $2), batch.message
     from pg_catalog.unnest($1) with ordinality as batch(message, position)
     order by batch.position
     returning msg_id',
    pgmq.format_table_name(queue_name, 'q')
  ) using msgs, delay;
end;
$$;
comment on function pgmq.send_batch(text, jsonb[], integer) is
  'Enqueues several messages in one statement, readable after delay seconds; returns their msg_ids in array order.';

/**
 * FOR UPDATE SKIP LOCKED lets concurrent readers pass over rows another reader is claiming, so no
 * message is handed to two readers and none waits on the other; the vt bump then hides the claimed
 * rows from later reads until the visibility timeout ends.
 */
create function pgmq.read(queue_name text, vt integer, qty integer)
returns setof pgmq.message_record
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  qtable text := pgmq.format_table_name(queue_name, 'q');
begin
  return query execute format(
    'with claimed as (
       select msg_id from pgmq.%1$I
       where vt <= pg_catalog.clock_timestamp()
       order by msg_id
       limit $1
       for update skip locked
     ), updated as (
       update pgmq.%1$I q
       set vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $2),
           read_ct = q.read_ct + 1
       from claimed
       where q.msg_id = claimed.msg_id
       returning q.msg_id, q.read_ct, q.enqueued_at, q.vt, q.message
     )
     select * from updated order by msg_id',
    qtable
  ) using qty, vt;
end;
$$;
comment on function pgmq.read(text, integer, integer) is
  'Claims up to qty visible messages (oldest first), hides them for vt seconds and counts the read; concurrent readers never receive the same message.';

/** Polling inside the database saves a worker the round trips of an empty-queue read loop. */
create function pgmq.read_with_poll(
  queue_name text,
  vt integer,
  qty integer,
  max_poll_seconds integer default 5,
  poll_interval_ms integer default 100
)
returns setof pgmq.message_record
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  give_up_at timestamptz := pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => max_poll_seconds);
begin
  loop
    return query select * from pgmq.read(queue_name, vt, qty);
    if found or pg_catalog.clock_timestamp() >= give_up_at then
      return;
    end if;
    perform pg_catalog.pg_sleep(least(
      poll_interval_ms / 1000.0,
      extract(epoch from give_up_at - pg_catalog.clock_timestamp())
    ));
  end loop;
end;
$$;
comment on function pgmq.read_with_poll(text, integer, integer, integer, integer) is
  'Like read, but waits up to max_poll_seconds (checking every poll_interval_ms) for messages to become visible.';

create function pgmq.pop(queue_name text)
returns setof pgmq.message_record
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  qtable text := pgmq.format_table_name(queue_name, 'q');
begin
  return query execute format(
    'with claimed as (
       select msg_id from pgmq.%1$I
       where vt <= pg_catalog.clock_timestamp()
       order by msg_id
       limit 1
       for update skip locked
     )
     delete from pgmq.%1$I q
     using claimed
     where q.msg_id = claimed.msg_id
     returning q.msg_id, q.read_ct, q.enqueued_at, q.vt, q.message',
    qtable
  );
end;
$$;
comment on function pgmq.pop(text) is
  'Removes and returns the oldest visible message, for consumers that need no retry on failure.';

create function pgmq.delete(queue_name text, msg_id bigint)
returns boolean
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  deleted bigint;
begin
  execute format('delete from pgmq.%I where msg_id = $1', pgmq.format_table_name(queue_name, 'q'))
    using msg_id;
  get diagnostics deleted = row_count;
  return deleted > 0;
end;
$$;
comment on function pgmq.delete(text, bigint) is
  'Deletes one message; returns false if it was not in the queue.';

create function pgmq.delete(queue_name text, msg_ids bigint[])
returns setof bigint
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  return query execute format(
    'delete from pgmq.%I where msg_id = any($1) returning msg_id',
    pgmq.format_table_name(queue_name, 'q')
  ) using msg_ids;
end;
$$;
comment on function pgmq.delete(text, bigint[]) is
  'Deletes several messages; returns the msg_ids that were in the queue.';

create function pgmq.archive(queue_name text, msg_id bigint)
returns boolean
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  archived bigint;
begin
  execute format(
    'with moved as (
       delete from pgmq.%I where msg_id = $1
       returning msg_id, read_ct, enqueued_at, vt, message
     )
     insert into pgmq.%I (msg_id, read_ct, enqueued_at, vt, message)
     select msg_id, read_ct, enqueued_at, vt, message from moved',
    pgmq.format_table_name(queue_name, 'q'),
    pgmq.format_table_name(queue_name, 'a')
  ) using msg_id;
  get diagnostics archived = row_count;
  return archived > 0;
end;
$$;
comment on function pgmq.archive(text, bigint) is
  'Moves one message to the archive table pgmq.a_<name>; returns false if it was not in the queue.';

create function pgmq.archive(queue_name text, msg_ids bigint[])
returns setof bigint
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  return query execute format(
    'with moved as (
       delete from pgmq.%I where msg_id = any($1)
       returning msg_id, read_ct, enqueued_at, vt, message
     )
     insert into pgmq.%I (msg_id, read_ct, enqueued_at, vt, message)
     select msg_id, read_ct, enqueued_at, vt, message from moved
     returning msg_id',
    pgmq.format_table_name(queue_name, 'q'),
    pgmq.format_table_name(queue_name, 'a')
  ) using msg_ids;
end;
$$;
comment on function pgmq.archive(text, bigint[]) is
  'Moves several messages to the archive table pgmq.a_<name>; returns the msg_ids that were in the queue.';

create function pgmq.set_vt(queue_name text, msg_id bigint, vt integer)
returns setof pgmq.message_record
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  return query execute format(
    'update pgmq.%I
     set vt = pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $2)
     where msg_id = $1
     returning msg_id, read_ct, enqueued_at, vt, message',
    pgmq.format_table_name(queue_name, 'q')
  ) using msg_id, vt;
end;
$$;
comment on function pgmq.set_vt(text, bigint, integer) is
  'Makes a message visible again vt seconds from now (0 releases it at once, more extends a claim); returns the updated message.';

/** DELETE rather than TRUNCATE: it needs no exclusive lock and only the privilege to delete. */
create function pgmq.purge_queue(queue_name text)
returns bigint
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  purged bigint;
begin
  execute format('delete from pgmq.%I', pgmq.format_table_name(queue_name, 'q'));
  get diagnostics purged = row_count;
  return purged;
end;
$$;
comment on function pgmq.purge_queue(text) is
  'Deletes every message in a queue, leaving the archive alone; returns how many were deleted.';

/**
 * pgmq detaches the archive from the extension so DROP EXTENSION keeps it. Archives here are never
 * extension members, so there is nothing to detach; the name is still checked so typos surface.
 */
create function pgmq.detach_archive(queue_name text)
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  perform pgmq.format_table_name(queue_name, 'a');
end;
$$;
comment on function pgmq.detach_archive(text) is
  'Kept for pgmq compatibility: archives are never part of the extension, so they already survive DROP EXTENSION.';

/**
 * total_messages is the position of the queue's msg_id sequence, i.e. every message ever sent, so
 * callers need SELECT or USAGE on the pgmq sequences as well as SELECT on the queue table (as with
 * pgmq). Ages are measured against scrape_time so one report is self-consistent.
 */
create function pgmq.metrics(queue_name text)
returns pgmq.metrics_result
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  qtable text := pgmq.format_table_name(queue_name, 'q');
  queue_length bigint;
  newest_enqueued_at timestamptz;
  oldest_enqueued_at timestamptz;
  scrape_time timestamptz;
begin
  execute format('select count(*), max(enqueued_at), min(enqueued_at) from pgmq.%I', qtable)
    into queue_length, newest_enqueued_at, oldest_enqueued_at;
  scrape_time := pg_catalog.clock_timestamp();
  return row(
    lower(queue_name),
    queue_length,
    extract(epoch from scrape_time - newest_enqueued_at)::integer,
    extract(epoch from scrape_time - oldest_enqueued_at)::integer,
    coalesce(pg_catalog.pg_sequence_last_value(pg_catalog.pg_get_serial_sequence(format('pgmq.%I', qtable), 'msg_id')::regclass), 0),
    scrape_time
  )::pgmq.metrics_result;
end;
$$;
comment on function pgmq.metrics(text) is
  'Reports a queue''s length, the ages in seconds of its newest and oldest messages, and how many messages it has ever received.';

create function pgmq.metrics_all()
returns setof pgmq.metrics_result
language sql
volatile
security invoker
set search_path = ''
begin atomic
  select queue_metrics.*
  from pgmq.meta
  cross join lateral pgmq.metrics(meta.queue_name) as queue_metrics
  order by meta.queue_name;
end;
comment on function pgmq.metrics_all() is
  'Reports metrics for every queue, in queue name order.';

create function pgmq.list_queues()
returns setof pgmq.queue_record
language sql
stable
security invoker
set search_path = ''
begin atomic
  select meta.queue_name, meta.is_partitioned, meta.is_unlogged, meta.created_at
  from pgmq.meta
  order by meta.queue_name;
end;
comment on function pgmq.list_queues() is
  'Lists every queue with its creation time and whether it is partitioned or unlogged.';

-- A trusted extension's script runs as the bootstrap superuser, which would own everything above.
-- Handing the objects to the role that ran CREATE EXTENSION lets it grant them to service_role and
-- other roles from its migrations, and matches Supabase, where postgres owns pgmq's objects.
do $$
declare
  member record;
begin
  for member in
    select d.classid, d.objid
    from pg_catalog.pg_depend d
    join pg_catalog.pg_extension e on e.oid = d.refobjid
    where d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
      and d.deptype = 'e'
      and e.extname = 'pgmq'
  loop
    if member.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass then
      execute format('alter routine %s owner to %s', member.objid::pg_catalog.regprocedure, '@extowner@');
    elsif member.classid = 'pg_catalog.pg_type'::pg_catalog.regclass then
      execute format('alter type %s owner to %s', member.objid::pg_catalog.regtype, '@extowner@');
    elsif member.classid = 'pg_catalog.pg_class'::pg_catalog.regclass then
      execute format('alter table %s owner to %s', member.objid::pg_catalog.regclass, '@extowner@');
    end if;
  end loop;
end;
$$;
