-- Registering a queue worker attaches the wake trigger to its queue's table, so a message sent
-- visible wakes the worker at commit (the NOTIFY itself is asserted through a real listener in
-- test/platform/queue-workers.test.ts).
begin;
select plan(7);

select trigger_is('pgmq', 'q_workflow_runs', 'wake_queue_worker', 'platform', 'wake_queue_worker',
  'The async runs queue wakes its worker');
select trigger_is('pgmq', 'q_webhook_deliveries', 'wake_queue_worker', 'platform', 'wake_queue_worker',
  'The webhook deliveries queue wakes its worker');
select trigger_is('pgmq', 'q_workspace_file_sweeps', 'wake_queue_worker', 'platform', 'wake_queue_worker',
  'The file sweeps queue wakes its worker');

select pgmq.create('wake_probe');
insert into platform.queue_workers (queue_name, function_name) values ('wake_probe', 'wake-probe');
select has_trigger('pgmq', 'q_wake_probe', 'wake_queue_worker', 'A queue registered after it was created gets the trigger');

select lives_ok(
  $$insert into platform.queue_workers (queue_name, function_name) values ('not_created_yet', 'wake-probe')$$,
  'Registering a worker before its queue exists is allowed (it is polled only)'
);

select lives_ok($$select pgmq.send('wake_probe', '{"n": 1}'::jsonb)$$, 'A visible send fires the trigger without error');
select lives_ok($$select pgmq.send('wake_probe', '{"n": 2}'::jsonb, 60)$$, 'A delayed send does too (it notifies nothing)');

select * from finish();
rollback;
