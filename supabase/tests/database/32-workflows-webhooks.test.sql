-- Workflow service, part 4: webhook subscriptions (row-level security, the write-only secret), the
-- outbox (a delivery queued in the transaction that ends a run), and the worker's claim and record
-- functions (stale, early and interrupted attempts, retries, redelivery).
begin;
select plan(53);

insert into auth.users (id, email, aud, role) values
  ('ad100000-0000-4000-8000-000000000001', 'owner@hooks.test', 'authenticated', 'authenticated'),
  ('ad100000-0000-4000-8000-000000000002', 'editor@hooks.test', 'authenticated', 'authenticated'),
  ('ad100000-0000-4000-8000-000000000003', 'viewer@hooks.test', 'authenticated', 'authenticated'),
  ('ad100000-0000-4000-8000-000000000004', 'stranger@hooks.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create function pg_temp.as_service() returns void language sql as $$
  select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true);
$$;

select pg_temp.act_as('ad100000-0000-4000-8000-000000000001');
select public.create_workspace('Hooks');
reset role;
create temporary table ws as select w.id from public.workspaces w
  join public.workspace_members m on m.workspace_id = w.id and m.user_id = 'ad100000-0000-4000-8000-000000000001';
grant select on ws to public;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'ad100000-0000-4000-8000-000000000002', 'editor' from ws;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'ad100000-0000-4000-8000-000000000003', 'viewer' from ws;
select pg_temp.act_as('ad100000-0000-4000-8000-000000000004');
select public.create_workspace('Elsewhere');
reset role;
insert into public.workflows (id, workspace_id, name, state) select 'ad200000-0000-4000-8000-000000000001', id, 'Hooked',
  '{"blocks": {"hook": {"id": "hook", "type": "generic_webhook", "name": "Hook", "config": {}}, "done": {"id": "done", "type": "response", "name": "Done", "config": {"body": "ok"}}}, "edges": [{"id": "e1", "source": "hook", "target": "done"}]}'
from ws;
select pg_temp.as_service();
select public.deploy_workflow('ad200000-0000-4000-8000-000000000001');
insert into public.billing_account_overrides (billing_account_id, sync_per_minute) select billing_account_id, 1000 from public.workspaces where id = (select id from ws);
reset role;
create temporary table runs (label text primary key, id uuid);
create temporary table subs (label text primary key, id uuid);
grant all on runs, subs to public;
create function pg_temp.run(p_label text) returns uuid language sql as $$ select id from runs where label = p_label $$;
create function pg_temp.sub(p_label text) returns uuid language sql as $$ select id from subs where label = p_label $$;
create function pg_temp.delivery(p_run text, p_sub text) returns public.webhook_deliveries language sql as $$
  select * from public.webhook_deliveries where execution_id = pg_temp.run(p_run) and subscription_id = pg_temp.sub(p_sub)
$$;
-- Admits and finishes a webhook run (status, so its level) and remembers it.
create function pg_temp.finished(p_label text, p_status text default 'completed', p_trigger text default 'webhook') returns uuid language plpgsql as $$
declare v_id uuid;
begin
  perform pg_temp.as_service();
  v_id := (public.admit_workflow_run('ad200000-0000-4000-8000-000000000001', p_trigger, 'sync') ->> 'executionId')::uuid;
  perform public.finish_workflow_run(v_id, p_status, '{"done": true}', case when p_status = 'failed' then '{"message": "no"}'::jsonb end);
  insert into runs values (p_label, v_id);
  reset role;
  return v_id;
end;
$$;

-- Subscriptions under row-level security ------------------------------------------------------------

select pg_temp.act_as('ad100000-0000-4000-8000-000000000002');
select lives_ok($$insert into public.webhook_subscriptions (workflow_id, url, secret) values ('ad200000-0000-4000-8000-000000000001', 'https://hooks.example.com/a', 'a-secret-value')$$,
  'An editor can subscribe a URL to a workflow');
select is((select (secret, has_secret, workspace_id = (select id from ws))::text from public.webhook_subscriptions where url = 'https://hooks.example.com/a'),
  '(,t,t)', 'The row keeps no secret, says one is set, and takes the workflow''s workspace');
reset role;
select is((select extensions.pgp_sym_decrypt(s.secret_encrypted, workflows_private.environment_key()) from workflows_private.webhook_secrets s
  join public.webhook_subscriptions w on w.id = s.subscription_id where w.url = 'https://hooks.example.com/a'),
  'a-secret-value', 'The secret is stored encrypted with the environment key');
insert into subs select 'signed', id from public.webhook_subscriptions where url = 'https://hooks.example.com/a';
select pg_temp.act_as('ad100000-0000-4000-8000-000000000003');
select is((select count(*)::int from public.webhook_subscriptions), 1, 'A viewer reads the workspace''s subscriptions');
select throws_ok($$insert into public.webhook_subscriptions (workflow_id, url) values ('ad200000-0000-4000-8000-000000000001', 'https://hooks.example.com/v')$$,
  '42501', null, 'but cannot add one');
update public.webhook_subscriptions set active = false;
select pg_temp.act_as('ad100000-0000-4000-8000-000000000003');
delete from public.webhook_subscriptions;
reset role;
select is((select (count(*), bool_and(active))::text from public.webhook_subscriptions where workflow_id = 'ad200000-0000-4000-8000-000000000001'),
  '(1,t)', 'nor change or delete one');
select pg_temp.act_as('ad100000-0000-4000-8000-000000000004');
select is((select count(*)::int from public.webhook_subscriptions), 0, 'Someone outside the workspace sees none');
select throws_ok($$insert into public.webhook_subscriptions (workflow_id, url) values ('ad200000-0000-4000-8000-000000000001', 'https://hooks.example.com/s')$$,
  '42501', null, 'and cannot subscribe to its workflows');
select throws_ok($$insert into public.webhook_subscriptions (workflow_id, url) values ('ad2fffff-0000-4000-8000-000000000001', 'https://hooks.example.com/s')$$,
  '42501', null, 'nor to a workflow that does not exist (the same answer)');
update public.webhook_subscriptions set url = 'https://evil.example.com/';
select pg_temp.act_as('ad100000-0000-4000-8000-000000000002');
select is((select url from public.webhook_subscriptions where id = pg_temp.sub('signed')), 'https://hooks.example.com/a', 'nor change one');
select throws_ok($$insert into public.webhook_subscriptions (workflow_id, url) values ('ad200000-0000-4000-8000-000000000001', 'ftp://hooks.example.com/')$$,
  '23514', null, 'A URL that is not http(s) is refused');
select throws_ok($$insert into public.webhook_subscriptions (workflow_id, url) values ('ad200000-0000-4000-8000-000000000001', 'https://me:pw@hooks.example.com/')$$,
  '23514', null, 'and so is one with credentials');
select throws_ok($$update public.webhook_subscriptions set secret = 'short' where id = pg_temp.sub('signed')$$,
  '23514', null, 'A secret under 8 characters is refused');
update public.webhook_subscriptions set secret = '' where id = pg_temp.sub('signed');
select is((select has_secret from public.webhook_subscriptions where id = pg_temp.sub('signed')), false, 'An empty secret removes it');
update public.webhook_subscriptions set secret = 'a-new-secret-value', has_secret = false where id = pg_temp.sub('signed');
select is((select has_secret from public.webhook_subscriptions where id = pg_temp.sub('signed')), true, 'has_secret follows the secret, not the client');
insert into public.webhook_subscriptions (workflow_id, url, level_filter) values ('ad200000-0000-4000-8000-000000000001', 'https://hooks.example.com/errors', '{error}');
insert into public.webhook_subscriptions (workflow_id, url, trigger_filter) values ('ad200000-0000-4000-8000-000000000001', 'https://hooks.example.com/schedules', '{schedule}');
insert into public.webhook_subscriptions (workflow_id, url, active) values ('ad200000-0000-4000-8000-000000000001', 'https://hooks.example.com/off', false);
reset role;
insert into subs select 'errors', id from public.webhook_subscriptions where url = 'https://hooks.example.com/errors';
insert into subs select 'schedules', id from public.webhook_subscriptions where url = 'https://hooks.example.com/schedules';
insert into subs select 'off', id from public.webhook_subscriptions where url = 'https://hooks.example.com/off';
set local role service_role;
select throws_ok($$select * from workflows_private.webhook_secrets$$, '42501', null, 'The service role cannot read the secrets table');
select throws_ok($$select workflows_private.webhook_secret(pg_temp.sub('signed'))$$, '42501', null, 'nor call the function that decrypts one');
reset role;

-- The outbox -----------------------------------------------------------------------------------------

select pg_temp.finished('ok');
select is((select array_agg(s.label order by s.label) from public.webhook_deliveries d join subs s on s.id = d.subscription_id where d.execution_id = pg_temp.run('ok')),
  array['signed'], 'A finished run queues one delivery for each active subscription its level and trigger match');
select is(((pg_temp.delivery('ok', 'signed')).status, (pg_temp.delivery('ok', 'signed')).attempts, (pg_temp.delivery('ok', 'signed')).workspace_id = (select id from ws))::text,
  '(pending,0,t)', 'pending, not yet attempted, in the run''s workspace');
select is((select message from pgmq.q_webhook_deliveries where msg_id = (pg_temp.delivery('ok', 'signed')).message_id),
  jsonb_build_object('deliveryId', (pg_temp.delivery('ok', 'signed')).id), 'and its message is in the queue');
select pg_temp.finished('failed schedule', 'failed', 'schedule');
select is((select array_agg(s.label order by s.label) from public.webhook_deliveries d join subs s on s.id = d.subscription_id where d.execution_id = pg_temp.run('failed schedule')),
  array['errors', 'schedules', 'signed'], 'A failed schedule run matches the error and schedule filters too');
select pg_temp.as_service();
select is(public.finish_workflow_run(pg_temp.run('ok'), 'failed') ->> 'outcome', 'already_finished', 'A second finish');
reset role;
select is((select count(*)::int from public.webhook_deliveries where execution_id = pg_temp.run('ok')), 1, 'queues nothing more');
select pg_temp.as_service();
insert into runs values ('swept', (public.admit_workflow_run('ad200000-0000-4000-8000-000000000001', 'webhook', 'sync', p_lease_seconds => 1) ->> 'executionId')::uuid);
reset role;
select workflows_private.sweep_workflow_runs(now() + interval '1 minute');
select is((select count(*)::int from public.webhook_deliveries where execution_id = pg_temp.run('swept')), 2, 'A run closed by the sweeper is announced as well (signed, errors)');

select pg_temp.act_as('ad100000-0000-4000-8000-000000000003');
select is((select count(*)::int from public.webhook_deliveries where execution_id = pg_temp.run('failed schedule')), 3, 'Members read the deliveries');
select pg_temp.act_as('ad100000-0000-4000-8000-000000000004');
select is((select count(*)::int from public.webhook_deliveries), 0, 'Others read none');
select throws_ok($$select public.claim_webhook_deliveries()$$, '42501', null, 'Only the service role claims deliveries');
select throws_ok($$select public.record_webhook_attempts('[]')$$, '42501', null, 'and records attempts');
reset role;

-- Claiming and recording -------------------------------------------------------------------------------
-- Only the delivery of 'ok' stays queued for what follows: this test's other messages go, and those
-- of a worker running beside it (a database in use) are hidden until the test rolls back.

select pgmq.delete('webhook_deliveries', array_agg(message_id)) from public.webhook_deliveries where execution_id in (select id from runs where label <> 'ok');
update public.webhook_deliveries set status = 'failed', message_id = null where execution_id in (select id from runs where label <> 'ok');
update pgmq.q_webhook_deliveries set vt = clock_timestamp() + interval '1 hour' where msg_id is distinct from (pg_temp.delivery('ok', 'signed')).message_id;
select pg_temp.as_service();
create temporary table claimed as select public.claim_webhook_deliveries(10, 60) -> 'deliveries' as d;
reset role;
select is((select jsonb_array_length(d) from claimed), 1, 'The worker claims the due delivery');
select is((select (d -> 0) - 'data' - 'dueAt' - 'trace' from claimed), jsonb_build_object(
  'deliveryId', (pg_temp.delivery('ok', 'signed')).id, 'attempt', 1, 'roundAttempt', 1, 'url', 'https://hooks.example.com/a',
  'secret', 'a-new-secret-value', 'links', jsonb_build_object('log', format('/api/v1/logs/%s', pg_temp.run('ok')), 'execution', format('/api/v1/logs/executions/%s', pg_temp.run('ok')))),
  'with its number, place in the schedule, URL, decrypted secret and links');
select is((select (d -> 0 -> 'data') - 'startedAt' - 'endedAt' - 'cost' - 'totalDurationMs' from claimed), jsonb_build_object(
  'workflowId', 'ad200000-0000-4000-8000-000000000001', 'executionId', pg_temp.run('ok'), 'status', 'success', 'level', 'info', 'trigger', 'webhook', 'files', null, 'error', null),
  'and the event data (error null: the run did not fail), without the parts the subscription did not ask for');
select ok((pg_temp.delivery('ok', 'signed')).attempt_started_at is not null, 'The delivery is marked as under way');
select pg_temp.as_service();
select is(public.claim_webhook_deliveries(10, 60) -> 'deliveries', '[]'::jsonb, 'and nobody else claims it while its message is hidden');
reset role;

-- The worker dies: its message reappears and the next claim records the attempt as interrupted.
update pgmq.q_webhook_deliveries set vt = clock_timestamp() - interval '1 second' where msg_id = (pg_temp.delivery('ok', 'signed')).message_id;
select pg_temp.as_service();
select is((public.claim_webhook_deliveries(10, 60) -> 'deliveries' -> 0 ->> 'attempt')::int, 2, 'A delivery whose worker died is claimed again as attempt 2');
reset role;
select is((select (attempt, outcome)::text from public.webhook_delivery_attempts where delivery_id = (pg_temp.delivery('ok', 'signed')).id),
  '(1,interrupted)', 'and attempt 1 is recorded as interrupted');

select pg_temp.as_service();
select is(public.record_webhook_attempts(jsonb_build_array(jsonb_build_object('deliveryId', (pg_temp.delivery('ok', 'signed')).id, 'attempt', 2,
  'startedAt', now(), 'durationMs', 25, 'statusCode', 503, 'error', 'The receiver answered HTTP 503', 'outcome', 'retry', 'retryInMs', 15500))), 1,
  'The worker records a retryable failure');
reset role;
select is(((pg_temp.delivery('ok', 'signed')).status, (pg_temp.delivery('ok', 'signed')).round_attempts, (pg_temp.delivery('ok', 'signed')).last_status_code,
  (pg_temp.delivery('ok', 'signed')).attempt_started_at is null)::text, '(pending,2,503,t)', 'The delivery waits for its retry');
select ok((pg_temp.delivery('ok', 'signed')).next_attempt_at between now() + interval '15.5 seconds' and clock_timestamp() + interval '15.5 seconds',
  'due the given delay after it was recorded');
select is((select vt between now() + interval '15 seconds' and clock_timestamp() + interval '15 seconds' from pgmq.q_webhook_deliveries where msg_id = (pg_temp.delivery('ok', 'signed')).message_id),
  true, 'in a new message delayed by its whole seconds');
select is((select count(*)::int from pgmq.q_webhook_deliveries q join public.webhook_deliveries d on q.message ->> 'deliveryId' = d.id::text where d.id = (pg_temp.delivery('ok', 'signed')).id),
  1, 'which replaced the old one');

-- A message that surfaces early (whole-second delays) is hidden again until its attempt is due.
update pgmq.q_webhook_deliveries set vt = clock_timestamp() - interval '1 second' where msg_id = (pg_temp.delivery('ok', 'signed')).message_id;
select pg_temp.as_service();
select is(public.claim_webhook_deliveries(10, 60) -> 'deliveries', '[]'::jsonb, 'A delivery not due yet is not claimed');
reset role;
select ok((select vt > (pg_temp.delivery('ok', 'signed')).next_attempt_at - interval '1 second' and vt <= (pg_temp.delivery('ok', 'signed')).next_attempt_at
  from pgmq.q_webhook_deliveries where msg_id = (pg_temp.delivery('ok', 'signed')).message_id), 'its message hidden until then');
update public.webhook_deliveries set next_attempt_at = clock_timestamp() + interval '900 milliseconds' where id = (pg_temp.delivery('ok', 'signed')).id;
create temporary table due as select next_attempt_at from public.webhook_deliveries where id = (pg_temp.delivery('ok', 'signed')).id;
update pgmq.q_webhook_deliveries set vt = clock_timestamp() - interval '1 second' where msg_id = (pg_temp.delivery('ok', 'signed')).message_id;
select pg_temp.as_service();
create temporary table early as select public.claim_webhook_deliveries(10, 60) -> 'deliveries' -> 0 as d;
reset role;
select ok((select (d ->> 'dueAt')::timestamptz = (select next_attempt_at from due) and (d ->> 'attempt')::int = 3 from early),
  'Less than a second early, it is claimed with the time it is due (the worker waits for it)');

select pg_temp.as_service();
select is(public.record_webhook_attempts(jsonb_build_array(jsonb_build_object('deliveryId', (pg_temp.delivery('ok', 'signed')).id, 'attempt', 3,
  'startedAt', now(), 'durationMs', 8, 'statusCode', 204, 'outcome', 'delivered'))), 1, 'A delivery is recorded');
reset role;
select is(((pg_temp.delivery('ok', 'signed')).status, (pg_temp.delivery('ok', 'signed')).message_id, (pg_temp.delivery('ok', 'signed')).delivered_at is not null)::text,
  '(delivered,,t)', 'as delivered, its message gone');
select is((select array_agg(outcome::text order by attempt) from public.webhook_delivery_attempts where delivery_id = (pg_temp.delivery('ok', 'signed')).id),
  array['interrupted', 'retry', 'delivered'], 'with every attempt kept');
select pg_temp.as_service();
select is(public.record_webhook_attempts(jsonb_build_array(jsonb_build_object('deliveryId', (pg_temp.delivery('ok', 'signed')).id, 'attempt', 1,
  'startedAt', now(), 'durationMs', 30000, 'statusCode', 200, 'outcome', 'delivered'))), 1, 'The late report of the interrupted attempt');
reset role;
select is(((select outcome::text from public.webhook_delivery_attempts where delivery_id = (pg_temp.delivery('ok', 'signed')).id and attempt = 1),
  (pg_temp.delivery('ok', 'signed')).attempts)::text, '(delivered,3)', 'fills in its history and changes nothing else');
select pg_temp.as_service();
select throws_ok($$select public.record_webhook_attempts('[{"deliveryId": "ad300000-0000-4000-8000-000000000001", "attempt": 1, "startedAt": "2026-01-01T00:00:00Z", "outcome": "maybe"}]')$$,
  '22023', null, 'An unknown outcome is a caller error');
reset role;

-- Redelivery -------------------------------------------------------------------------------------------

select pg_temp.act_as('ad100000-0000-4000-8000-000000000003');
select throws_ok(format($$select public.redeliver_webhook(%L)$$, (pg_temp.delivery('ok', 'signed')).id), '42501', null, 'A viewer cannot redeliver');
select pg_temp.act_as('ad100000-0000-4000-8000-000000000004');
select throws_ok(format($$select public.redeliver_webhook(%L)$$, (pg_temp.delivery('ok', 'signed')).id), 'PT404', null, 'Someone outside does not find the delivery');
select pg_temp.act_as('ad100000-0000-4000-8000-000000000002');
select is((select (status, round_attempts, redeliveries, attempts)::text from public.redeliver_webhook((pg_temp.delivery('ok', 'signed')).id)),
  '(pending,0,1,3)', 'An editor redelivers it: pending again, a fresh schedule, the same id');
select throws_ok(format($$select public.redeliver_webhook(%L)$$, (pg_temp.delivery('ok', 'signed')).id), 'PT409', null, 'but not while it is being attempted');
reset role;

select * from finish();
rollback;
