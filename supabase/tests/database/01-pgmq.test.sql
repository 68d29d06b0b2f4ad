-- The pgmq API the project's queues rely on, as the local platform's pgmq-compatible extension
-- provides it (names, argument names, table layout and behaviour of pgmq 1.4.4; its queue-name
-- checks are stricter than pgmq's). Every queue is created inside the transaction, so msg_ids start
-- at 1 and the rollback leaves nothing behind.
begin;
select plan(68);

-- Contract: names, types and table layout.

select has_extension('pgmq', 'The pgmq extension is installed');

select has_function('pgmq', 'create', array['text'], 'pgmq.create(queue_name) exists');
select has_function('pgmq', 'create_non_partitioned', array['text'], 'pgmq.create_non_partitioned(queue_name) exists');
select has_function('pgmq', 'create_unlogged', array['text'], 'pgmq.create_unlogged(queue_name) exists');
select has_function('pgmq', 'drop_queue', array['text', 'boolean'], 'pgmq.drop_queue(queue_name, partitioned) exists');
select has_function('pgmq', 'send', array['text', 'jsonb', 'integer'], 'pgmq.send(queue_name, msg, delay) exists');
select has_function('pgmq', 'send_batch', array['text', 'jsonb[]', 'integer'], 'pgmq.send_batch(queue_name, msgs, delay) exists');
select has_function('pgmq', 'read', array['text', 'integer', 'integer'], 'pgmq.read(queue_name, vt, qty) exists');
select has_function(
  'pgmq', 'read_with_poll', array['text', 'integer', 'integer', 'integer', 'integer'],
  'pgmq.read_with_poll(queue_name, vt, qty, max_poll_seconds, poll_interval_ms) exists'
);
select has_function('pgmq', 'pop', array['text'], 'pgmq.pop(queue_name) exists');
select has_function('pgmq', 'delete', array['text', 'bigint'], 'pgmq.delete(queue_name, msg_id) exists');
select has_function('pgmq', 'delete', array['text', 'bigint[]'], 'pgmq.delete(queue_name, msg_ids) exists');
select has_function('pgmq', 'archive', array['text', 'bigint'], 'pgmq.archive(queue_name, msg_id) exists');
select has_function('pgmq', 'archive', array['text', 'bigint[]'], 'pgmq.archive(queue_name, msg_ids) exists');
select has_function('pgmq', 'set_vt', array['text', 'bigint', 'integer'], 'pgmq.set_vt(queue_name, msg_id, vt) exists');
select has_function('pgmq', 'purge_queue', array['text'], 'pgmq.purge_queue(queue_name) exists');
select has_function('pgmq', 'detach_archive', array['text'], 'pgmq.detach_archive(queue_name) exists');
select has_function('pgmq', 'metrics', array['text'], 'pgmq.metrics(queue_name) exists');
select has_function('pgmq', 'metrics_all', array[]::text[], 'pgmq.metrics_all() exists');
select has_function('pgmq', 'list_queues', array[]::text[], 'pgmq.list_queues() exists');

-- create

select lives_ok($$ select pgmq.create(queue_name := 'pgtap_jobs') $$, 'Creating a queue succeeds');
select columns_are(
  'pgmq', 'q_pgtap_jobs', array['msg_id', 'read_ct', 'enqueued_at', 'vt', 'message'],
  'A queue keeps its messages in pgmq.q_<name> with the pgmq columns'
);
select columns_are(
  'pgmq', 'a_pgtap_jobs', array['msg_id', 'read_ct', 'enqueued_at', 'archived_at', 'vt', 'message'],
  'A queue archives into pgmq.a_<name>, which adds archived_at'
);
select lives_ok(
  $$ select pgmq.create('pgtap_jobs'); select pgmq.create('PGTAP_Jobs') $$,
  'Creating an existing queue again, in any letter case, is a harmless no-op'
);
select is(
  (select count(*) from pgmq.meta where queue_name = 'pgtap_jobs'), 1::bigint,
  'A queue created several times is registered once'
);
select throws_ok(
  $$ select pgmq.create('pgtap-jobs') $$, '22023', 'queue name contains invalid characters',
  'A queue name with a hyphen is rejected'
);
select throws_ok(
  $$ select pgmq.create('pgtap;drop table pgmq.meta') $$, '22023', 'queue name contains invalid characters',
  'A queue name with a semicolon is rejected'
);
select throws_ok(
  $$ select pgmq.create('pgtap''jobs') $$, '22023', 'queue name contains invalid characters',
  'A queue name with a quote is rejected'
);
select throws_ok(
  $$ select pgmq.create('pgtap$jobs') $$, '22023', 'queue name contains invalid characters',
  'A queue name with a dollar sign is rejected'
);
select throws_ok(
  $$ select pgmq.create(repeat('q', 48)) $$, '22023', 'queue name is too long, maximum length is 47 characters',
  'A queue name longer than 47 characters is rejected'
);
select lives_ok($$ select pgmq.create(repeat('q', 47)) $$, 'A queue name of exactly 47 characters is accepted');
select lives_ok(
  $$ select pgmq.create_non_partitioned('pgtap_plain'); select pgmq.create_unlogged('pgtap_unlogged') $$,
  'create_non_partitioned and create_unlogged create queues'
);
select is(
  (select relpersistence from pg_class where oid = 'pgmq.q_pgtap_unlogged'::regclass), 'u'::"char",
  'create_unlogged gives the queue an unlogged message table'
);

-- send, read, set_vt

select is(
  (select pgmq.send(queue_name := 'pgtap_jobs', msg := '{"task": "first"}')), 1::bigint,
  'Sending to a new queue returns msg_id 1'
);
select results_eq(
  $$ select msg_id, read_ct, message from pgmq.read(queue_name := 'pgtap_jobs', vt := 30, qty := 10) $$,
  $$ values (1::bigint, 1, '{"task": "first"}'::jsonb) $$,
  'Reading returns the visible message with its read count raised to 1'
);
select is_empty(
  $$ select * from pgmq.read('pgtap_jobs', 30, 10) $$,
  'A message that was read stays hidden until its visibility timeout ends'
);
select results_eq(
  $$ select msg_id from pgmq.set_vt(queue_name := 'pgtap_jobs', msg_id := 1, vt := 0) $$,
  $$ values (1::bigint) $$,
  'set_vt returns the message it updates'
);
select results_eq(
  $$ select msg_id, read_ct from pgmq.read('pgtap_jobs', 30, 10) $$,
  $$ values (1::bigint, 2) $$,
  'A message released with set_vt is read again and its read count rises to 2'
);
select ok(
  (select vt > clock_timestamp() + interval '50 seconds' from pgmq.set_vt('pgtap_jobs', 1, 60)),
  'set_vt hides a message for the given number of seconds from now'
);

-- delayed send and read_with_poll

select pgmq.create('pgtap_delay');
select pgmq.send(queue_name := 'pgtap_delay', msg := '{"later": true}', delay := 1);
select is_empty(
  $$ select * from pgmq.read('pgtap_delay', 30, 1) $$,
  'A message sent with a delay is invisible until the delay passes'
);
select results_eq(
  $$ select msg_id, message from pgmq.read_with_poll(
       queue_name := 'pgtap_delay', vt := 30, qty := 1, max_poll_seconds := 5, poll_interval_ms := 50) $$,
  $$ values (1::bigint, '{"later": true}'::jsonb) $$,
  'read_with_poll waits for a delayed message and returns it once the delay passes'
);
create temporary table poll_started as select clock_timestamp() as at;
select is_empty(
  $$ select * from pgmq.read_with_poll('pgtap_delay', 30, 1, max_poll_seconds := 1) $$,
  'read_with_poll returns nothing when no message becomes visible in time'
);
select ok(
  clock_timestamp() - (select at from poll_started) >= interval '1 second',
  'read_with_poll keeps polling for max_poll_seconds before giving up'
);

-- send_batch

select pgmq.create('pgtap_batch');
select results_eq(
  $$ select * from pgmq.send_batch(queue_name := 'pgtap_batch', msgs := array['{"i": 1}', '{"i": 2}', '{"i": 3}']::jsonb[]) $$,
  $$ values (1::bigint), (2), (3) $$,
  'send_batch returns one msg_id per message, in array order'
);
select results_eq(
  $$ select msg_id, message from pgmq.read('pgtap_batch', 30, 2) $$,
  $$ values (1::bigint, '{"i": 1}'::jsonb), (2, '{"i": 2}') $$,
  'read returns at most qty messages, oldest first'
);
select pgmq.send_batch('pgtap_batch', array['{"i": 4}']::jsonb[], delay := 60);
select results_eq(
  $$ select msg_id from pgmq.read('pgtap_batch', 30, 10) $$,
  $$ values (3::bigint) $$,
  'A batch sent with a delay stays invisible while earlier messages are read'
);

-- pop

select pgmq.create('pgtap_pop');
select pgmq.send_batch('pgtap_pop', array['{"p": 1}', '{"p": 2}']::jsonb[]);
select results_eq(
  $$ select msg_id, read_ct, message from pgmq.pop(queue_name := 'pgtap_pop') $$,
  $$ values (1::bigint, 0, '{"p": 1}'::jsonb) $$,
  'pop returns the oldest visible message'
);
select results_eq(
  $$ select msg_id from pgmq.q_pgtap_pop $$, $$ values (2::bigint) $$,
  'pop deletes the message it returns'
);

-- delete

select pgmq.create('pgtap_delete');
select pgmq.send_batch('pgtap_delete', array['{}', '{}', '{}', '{}']::jsonb[]);
select ok(pgmq.delete(queue_name := 'pgtap_delete', msg_id := 1), 'Deleting a message returns true');
select ok(not pgmq.delete('pgtap_delete', 1::bigint), 'Deleting a message that is already gone returns false');
select results_eq(
  $$ select * from pgmq.delete(queue_name := 'pgtap_delete', msg_ids := array[2, 3, 99]::bigint[]) order by 1 $$,
  $$ values (2::bigint), (3) $$,
  'Deleting several messages returns the msg_ids that were in the queue'
);
select results_eq(
  $$ select msg_id from pgmq.q_pgtap_delete $$, $$ values (4::bigint) $$,
  'Only the messages not deleted remain in the queue'
);

-- archive

select pgmq.create('pgtap_archive');
select pgmq.send_batch('pgtap_archive', array['{"a": 1}', '{"a": 2}', '{"a": 3}', '{"a": 4}']::jsonb[]);
select pgmq.read('pgtap_archive', 30, 1);
select ok(pgmq.archive(queue_name := 'pgtap_archive', msg_id := 1), 'Archiving a message returns true');
select results_eq(
  $$ select msg_id, read_ct, message from pgmq.a_pgtap_archive $$,
  $$ values (1::bigint, 1, '{"a": 1}'::jsonb) $$,
  'An archived message moves to the archive table with its read count and content'
);
select ok(not pgmq.archive('pgtap_archive', 1::bigint), 'Archiving a message that is no longer queued returns false');
select results_eq(
  $$ select * from pgmq.archive(queue_name := 'pgtap_archive', msg_ids := array[2, 3, 99]::bigint[]) order by 1 $$,
  $$ values (2::bigint), (3) $$,
  'Archiving several messages returns the msg_ids that were in the queue'
);
select results_eq(
  $$ select (select array_agg(msg_id order by msg_id) from pgmq.q_pgtap_archive),
            (select array_agg(msg_id order by msg_id) from pgmq.a_pgtap_archive) $$,
  $$ values (array[4]::bigint[], array[1, 2, 3]::bigint[]) $$,
  'Archived messages leave the queue and collect in the archive table'
);
select lives_ok($$ select pgmq.detach_archive('pgtap_archive') $$, 'detach_archive succeeds');
select has_table('pgmq', 'a_pgtap_archive', 'detach_archive keeps the archive table');

-- metrics and list_queues

select pgmq.create('pgtap_metrics');
select pgmq.send_batch('pgtap_metrics', array['{}', '{}', '{}']::jsonb[]);
select pgmq.delete('pgtap_metrics', 2::bigint);
select results_eq(
  $$ select queue_name, queue_length, total_messages, oldest_msg_age_sec >= 0, scrape_time is not null
     from pgmq.metrics(queue_name := 'pgtap_metrics') $$,
  $$ values ('pgtap_metrics'::text, 2::bigint, 3::bigint, true, true) $$,
  'metrics counts the queued messages and every message ever sent'
);
select results_eq(
  $$ select queue_length, newest_msg_age_sec, oldest_msg_age_sec, total_messages from pgmq.metrics('pgtap_plain') $$,
  $$ values (0::bigint, null::integer, null::integer, 0::bigint) $$,
  'metrics of a queue that never received a message reports zeros and no ages'
);
select set_eq(
  $$ select queue_name from pgmq.metrics_all() where queue_name like 'pgtap\_%' $$,
  $$ values ('pgtap_archive'), ('pgtap_batch'), ('pgtap_delay'), ('pgtap_delete'), ('pgtap_jobs'),
            ('pgtap_metrics'), ('pgtap_plain'), ('pgtap_pop'), ('pgtap_unlogged') $$,
  'metrics_all reports every queue'
);
select results_eq(
  $$ select queue_name::text, is_partitioned, is_unlogged, created_at is not null
     from pgmq.list_queues() where queue_name in ('pgtap_jobs', 'pgtap_unlogged') order by queue_name $$,
  $$ values ('pgtap_jobs', false, false, true), ('pgtap_unlogged', false, true, true) $$,
  'list_queues lists queues with their partitioned and unlogged flags'
);

-- purge_queue and drop_queue

select is(pgmq.purge_queue(queue_name := 'pgtap_archive'), 1::bigint, 'purge_queue returns how many messages it deleted');
select results_eq(
  $$ select (select count(*) from pgmq.q_pgtap_archive), (select count(*) from pgmq.a_pgtap_archive) $$,
  $$ values (0::bigint, 3::bigint) $$,
  'purge_queue empties the queue but leaves the archive alone'
);
select ok(pgmq.drop_queue(queue_name := 'pgtap_archive'), 'drop_queue returns true for an existing queue');
select ok(
  to_regclass('pgmq.q_pgtap_archive') is null and to_regclass('pgmq.a_pgtap_archive') is null
    and not exists (select from pgmq.list_queues() where queue_name = 'pgtap_archive'),
  'drop_queue removes the queue table, the archive table and the registration'
);
select ok(not pgmq.drop_queue('pgtap_archive'), 'drop_queue returns false for a queue that does not exist');

select * from finish();
rollback;
