-- Workflow service: concurrent runs per billing account (issue 32 item 1, decision 14). A sync run
-- over the limit is refused 429 CONCURRENCY_LIMIT_EXCEEDED, spending nothing; an async run over it
-- waits without a queue message and starts when a slot is given back (finish, cancel, a crashed
-- sync run swept, a park); the next waiter is the highest ranked; a parked run takes a slot again to
-- resume, or waits.
begin;
select plan(37);

insert into auth.users (id, email, aud, role) values
  ('c4000000-0000-4000-8000-000000000001', 'owner@concurrency.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create temporary table answers (label text primary key, r jsonb);
create function pg_temp.answer(p_label text) returns jsonb language sql as $$ select r from answers where label = p_label $$;
create function pg_temp.run(p_label text) returns uuid language sql as $$ select (r ->> 'executionId')::uuid from answers where label = p_label $$;
create function pg_temp.row(p_label text) returns public.workflow_executions language sql as $$
  select * from public.workflow_executions where id = pg_temp.run(p_label);
$$;
-- Admits a webhook run (no key needed) and records the answer under a label.
create function pg_temp.admit(p_label text, p_mode text) returns jsonb language sql as $$
  insert into answers values (p_label, public.admit_trigger_run('webhook', 'c4500000-0000-4000-8000-000000000001', 'hook', p_mode))
  on conflict (label) do update set r = excluded.r returning r;
$$;
create function pg_temp.in_use() returns integer language plpgsql as $$ begin return (
  select c.in_use from workflows_private.concurrency_slots c, ws where c.scope = 'account:' || ws.billing_account_id); end;
$$;
create function pg_temp.waiting(p_label text) returns boolean language sql as $$
  select exists (select 1 from workflows_private.run_waiters w where w.execution_id = pg_temp.run(p_label));
$$;
create function pg_temp.has_message(p_label text) returns boolean language sql as $$
  select exists (select 1 from pgmq.q_workflow_runs q where q.message ->> 'executionId' = pg_temp.run(p_label)::text);
$$;

-- The plans -----------------------------------------------------------------------------------------

select is((select jsonb_object_agg(plan, concurrent_runs) from public.billing_plans),
  '{"free": 10, "pro": 50, "team": 200, "enterprise": 1000}'::jsonb,
  'Plans allow 10, 50, 200 and 1,000 concurrent runs (decision 14)');

select pg_temp.act_as('c4000000-0000-4000-8000-000000000001');
select public.create_workspace('Concurrency');
reset role;
create temporary table ws as select id, billing_account_id from public.workspaces where name = 'Concurrency';
select set_config('request.jwt.claims', '{"role": "service_role"}', true);
insert into public.workflows (id, workspace_id, name, state) select 'c4500000-0000-4000-8000-000000000001', id, 'Busy',
  '{"blocks": {"hook": {"id": "hook", "type": "generic_webhook", "name": "Hook", "config": {}}, "done": {"id": "done", "type": "response", "name": "Done", "config": {"body": "ok"}}}, "edges": [{"id": "e1", "source": "hook", "target": "done"}]}'
from ws;
select public.deploy_workflow('c4500000-0000-4000-8000-000000000001');

select is(workflows_private.account_concurrency_limit((select billing_account_id from ws)), 10, 'A Free account runs 10 at once');
insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute, concurrent_runs)
select billing_account_id, 1000, 1000, 2 from ws;
select is(workflows_private.account_concurrency_limit((select billing_account_id from ws)), 2, 'and an override replaces the plan''s figure');

-- Sync runs: a slot, or 429 ---------------------------------------------------------------------------

select is(pg_temp.admit('sync 1', 'sync') ->> 'status', '200', 'A sync run takes a slot');
select is(pg_temp.admit('sync 2', 'sync') ->> 'status', '200', 'and a second one the last');
select is(pg_temp.in_use(), 2, 'Two slots are in use');
create temporary table tokens_before as select sync_tokens, period_cost from workflows_private.account_meters where billing_account_id = (select billing_account_id from ws);
select is(pg_temp.admit('sync refused', 'sync') - 'error',
  '{"status": 429, "outcome": "refused", "code": "CONCURRENCY_LIMIT_EXCEEDED", "retryAfter": 1, "concurrency": {"limit": 2}}'::jsonb,
  'A third sync run is refused 429 CONCURRENCY_LIMIT_EXCEEDED with retryAfter');
select matches(pg_temp.answer('sync refused') ->> 'error', 'at most 2 runs at once', 'saying the limit');
select is((select (m.sync_tokens, m.period_cost)::text from workflows_private.account_meters m where m.billing_account_id = (select billing_account_id from ws)),
  (select (sync_tokens, period_cost)::text from tokens_before), 'A refused run spends no token and no charge');
select is((select count(*)::int from public.workflow_executions where workflow_id = 'c4500000-0000-4000-8000-000000000001'), 2, 'and records no run');

-- Async runs: a slot, or wait ---------------------------------------------------------------------------

select is(pg_temp.admit('async 1', 'async') - array['createdAt', 'executionId', 'workflow', 'rateLimit', 'usage'],
  '{"status": 202, "outcome": "admitted", "runStatus": "queued", "trigger": "webhook", "mode": "async", "waiting": true}'::jsonb,
  'An async run over the limit is admitted, waiting');
select ok(pg_temp.waiting('async 1') and not pg_temp.has_message('async 1'), 'It waits without a queue message, so no worker takes it');
select is((pg_temp.row('async 1')).waiting_since, now(), 'and the run says since when it waits');
select is(workflows_private.run_detail(pg_temp.row('async 1')) -> 'concurrency',
  jsonb_build_object('waiting', true, 'waitingSince', now(), 'waited', true, 'waitedMs', 0, 'key', null, 'keyLimit', null, 'priority', 0),
  'The runs API shows it waiting (no flow-control key, priority 0)');
select is((public.finish_workflow_run(pg_temp.run('sync 1'), 'completed', '{"ok": true}')) ->> 'outcome', 'finished', 'A sync run finishes');
select ok(not pg_temp.waiting('async 1') and pg_temp.has_message('async 1'), 'and the first waiter starts: out of the waiters, into the queue');
select is((pg_temp.row('async 1')).queue_message_id, (select q.msg_id from pgmq.q_workflow_runs q where q.message ->> 'executionId' = pg_temp.run('async 1')::text),
  'its run knows its message');
select is((pg_temp.row('async 1')).waiting_since, null, 'and it no longer waits');
select is(pg_temp.in_use(), 2, 'The slot passed from the finished run to the waiter');

select pg_temp.admit('async 2', 'async');
select pg_temp.admit('async 3', 'async');
-- async 2 has 5 priority points more (5 × 60), async 3 was admitted 10 minutes earlier (600 s): aging
-- puts async 3 first.
update workflows_private.run_waiters set rank = rank + 5 * 60 where execution_id = pg_temp.run('async 2');
update workflows_private.run_waiters set rank = rank + 600 where execution_id = pg_temp.run('async 3');

select workflows_private.cancel_run(pg_temp.row('async 1'), '{}'::jsonb, null, now());
select is((pg_temp.row('async 1')).status::text, 'cancelled', 'Cancelling the started run ends it');
select ok(pg_temp.has_message('async 3') and pg_temp.waiting('async 2'), 'and gives its slot to the highest-ranked waiter, the older one');

select workflows_private.cancel_run(pg_temp.row('async 2'), '{}'::jsonb, null, now());
select ok((pg_temp.row('async 2')).status = 'cancelled' and not pg_temp.waiting('async 2'), 'A cancelled waiter stops waiting');
select is(pg_temp.in_use(), 2, 'holding no slot');

-- A crashed sync run's slot comes back when its lease runs out ------------------------------------------

select pg_temp.admit('async 4', 'async');
update public.workflow_executions set lease_expires_at = now() - interval '1 second' where id = pg_temp.run('sync 2');
select workflows_private.sweep_workflow_runs(now());
select is((pg_temp.row('sync 2')).error_code, 'WORKER_LOST', 'The sweeper ends a sync run whose lease ran out');
select ok(pg_temp.has_message('async 4') and not pg_temp.waiting('async 4'), 'and its slot starts the waiter');

-- Parked runs hold no slot ------------------------------------------------------------------------------

select is(public.finish_workflow_run(pg_temp.run('async 4'), 'completed') ->> 'outcome', 'finished', 'One more run ends');
select is(pg_temp.in_use(), 1, 'leaving one slot in use (async 3''s)');
create temporary table claimed as select x from jsonb_array_elements(public.claim_workflow_runs(10, 60) -> 'runs') x;
select is((select array_agg(x ->> 'executionId') from claimed), array[pg_temp.run('async 3')::text], 'A worker claims the started waiter');
select is(public.park_workflow_run(pg_temp.run('async 3'), 1, now() + interval '1 hour') ->> 'parked', 'true', 'It parks at a Wait');
select is(pg_temp.in_use(), 0, 'and gives its slot back while parked');
select pg_temp.admit('sync 3', 'sync');
select pg_temp.admit('sync 4', 'sync');
select is(pg_temp.in_use(), 2, 'Two sync runs fill the account meanwhile');
-- Its due time comes while the account is full.
update public.workflow_executions set parked_until = now(), lease_expires_at = now() where id = pg_temp.run('async 3');
select pgmq.set_vt('workflow_runs', (pg_temp.row('async 3')).queue_message_id, 0);
select is(jsonb_array_length(public.claim_workflow_runs(10, 60) -> 'runs'), 0, 'A due parked run does not resume over the limit');
select ok(pg_temp.waiting('async 3') and not pg_temp.has_message('async 3'), 'it waits for a slot instead, without a message');
select is(public.finish_workflow_run(pg_temp.run('sync 3'), 'completed') ->> 'outcome', 'finished', 'When a run ends');
select is((select array_agg(x ->> 'executionId') from jsonb_array_elements(public.claim_workflow_runs(10, 60) -> 'runs') x),
  array[pg_temp.run('async 3')::text], 'the parked run resumes');

-- Access --------------------------------------------------------------------------------------------------

select pg_temp.act_as('c4000000-0000-4000-8000-000000000001');
select throws_ok('select count(*) from workflows_private.run_waiters', '42501', null, 'A signed-in user cannot read the waiters');
select throws_ok('select count(*) from workflows_private.concurrency_slots', '42501', null, 'nor the slot counters');

select * from finish();
rollback;
