-- Workflow service: flow control declared in the workflow (issue 32 item 2). settings.flowControl is
-- validated, diffed and deployed with the snapshot; admission resolves its concurrency key and
-- priority over the trigger's input; a key is one more concurrency scope: over its limit a sync run
-- is refused 429 CONCURRENCY_KEY_LIMIT_EXCEEDED and an async run waits, while other keys are not held
-- back; among a key's waiters the higher priority starts first.
begin;
select plan(39);

create function pg_temp.codes(p_state jsonb) returns text[] language sql as $$
  select coalesce(array_agg((i ->> 'code') || ' ' || coalesce(i ->> 'field', '') order by i ->> 'field'), '{}')
  from jsonb_array_elements(workflows_private.state_issues(p_state, 'save')) i;
$$;
create function pg_temp.with_flow(p_flow jsonb) returns jsonb language sql as $$
  select jsonb_build_object('blocks', jsonb_build_object(
      'hook', jsonb_build_object('id', 'hook', 'type', 'generic_webhook', 'name', 'Hook', 'config', '{}'::jsonb),
      'done', jsonb_build_object('id', 'done', 'type', 'response', 'name', 'Done', 'config', jsonb_build_object('body', 'ok'))),
    'edges', jsonb_build_array(jsonb_build_object('id', 'e1', 'source', 'hook', 'target', 'done')),
    'settings', jsonb_build_object('flowControl', p_flow));
$$;

-- Validation ----------------------------------------------------------------------------------------

select is(pg_temp.codes(pg_temp.with_flow('{"concurrency": {"key": "<webhook.account>", "limit": 1}, "priority": "<input.tier>"}')), '{}'::text[],
  'A key and a priority over the trigger''s input are valid');
select is(pg_temp.codes(pg_temp.with_flow('{"concurrency": {"key": "tenant-<api.customer.id>", "limit": 1000}, "priority": 100}')), '{}'::text[],
  'so are text around a reference, the highest limit and a number priority');
select is(pg_temp.codes(pg_temp.with_flow('{"concurrency": {"key": "<done.content>", "limit": 1}}')),
  array['invalid_flow_control settings.flowControl.concurrency.key'], 'A key reading a block''s output is refused: admission runs before any block');
select matches(workflows_private.state_issues(pg_temp.with_flow('{"concurrency": {"key": "<done.content>", "limit": 1}}'), 'save') -> 0 ->> 'message',
  'reads only the trigger''s input', 'saying what it may read');
select is(pg_temp.codes(pg_temp.with_flow('{"priority": "high"}')), array['invalid_flow_control settings.flowControl.priority'],
  'A priority that is neither a number nor one reference is refused');
select is(pg_temp.codes(pg_temp.with_flow('{"concurrency": {"key": "<api.customer>", "limit": 0}}')), array['invalid_shape settings.flowControl.concurrency.limit'],
  'A limit under 1 is refused');
select is(pg_temp.codes(pg_temp.with_flow('{"concurrency": {"key": "<api.customer>", "limit": 1001}}')), array['invalid_shape settings.flowControl.concurrency.limit'],
  'and one over 1,000');
select is(pg_temp.codes(pg_temp.with_flow('{"priority": 101}')), array['invalid_shape settings.flowControl.priority'], 'A priority over 100 is refused');
select is(pg_temp.codes(pg_temp.with_flow('{"concurrency": {"limit": 1}}')), array['invalid_shape settings.flowControl.concurrency.key'], 'A concurrency without a key is refused');
select is(pg_temp.codes(pg_temp.with_flow('{"throttle": {"limit": 1}}')), array['invalid_shape settings.flowControl.throttle'], 'Unknown settings (throttle is not built yet) are refused');

-- Diff and deployment ---------------------------------------------------------------------------------

select is(workflows_private.diff_states(pg_temp.with_flow('{"concurrency": {"key": "<api.a>", "limit": 1}, "priority": 1}'),
    pg_temp.with_flow('{"concurrency": {"key": "<api.a>", "limit": 2}, "priority": 1}')) -> 'settings',
  '{"changed": ["flowControl.concurrency"]}'::jsonb, 'The diff names the flow-control part that changed');
select is(workflows_private.diff_states(pg_temp.with_flow('{"priority": 1}'), pg_temp.with_flow('{"priority": 1}')) ->> 'identical', 'true',
  'and finds equal ones identical');
select is(workflows_private.diff_states(pg_temp.with_flow('{"priority": 1}'), pg_temp.with_flow('{}')) ->> 'identical', 'false',
  'while removing a part is a difference');

-- Resolution ------------------------------------------------------------------------------------------

select is(workflows_private.resolve_flow_template('tenant-<api.customer.id>/<api.items[1]>', '{"customer": {"id": "c7"}, "items": [1, {"x": 2}]}'),
  'tenant-c7/{"x": 2}', 'A key template takes strings as they are and other values as JSON');
select is(workflows_private.resolve_flow_template('<api.missing>-<api.none>', '{"none": null}'), '-', 'Missing and null values are empty');
select is(workflows_private.resolve_flow_template('<api.id>', jsonb_build_object('id', repeat('x', 300))), 'md5:' || md5(repeat('x', 300)),
  'A key over 200 characters becomes its md5');
select is(array[workflows_private.resolve_flow_priority('7', null), workflows_private.resolve_flow_priority('"<input.p>"', '{"p": 12.6}'),
    workflows_private.resolve_flow_priority('"<input.p>"', '{"p": "4"}'), workflows_private.resolve_flow_priority('"<input.p>"', '{"p": 5000}'),
    workflows_private.resolve_flow_priority('"<input.p>"', '{"p": "urgent"}'), workflows_private.resolve_flow_priority(null, '{}')]::int[],
  array[7, 13, 4, 100, 0, 0], 'A priority is the number, or the reference''s number rounded and held to 0–100; anything else is 0');

-- The key scope -----------------------------------------------------------------------------------------

insert into auth.users (id, email, aud, role) values
  ('c4300000-0000-4000-8000-000000000001', 'owner@flow-control.test', 'authenticated', 'authenticated');
select set_config('role', 'authenticated', true),
  set_config('request.jwt.claims', json_build_object('sub', 'c4300000-0000-4000-8000-000000000001', 'role', 'authenticated')::text, true);
select public.create_workspace('Flow control');
reset role;
create temporary table ws as select id, billing_account_id from public.workspaces where name = 'Flow control';
select set_config('request.jwt.claims', '{"role": "service_role"}', true);
insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute, concurrent_runs)
select billing_account_id, 1000, 1000, 100 from ws;
insert into public.workflows (id, workspace_id, name, state)
select 'c4350000-0000-4000-8000-000000000001', id, 'Per customer',
  pg_temp.with_flow('{"concurrency": {"key": "<webhook.account>", "limit": 1}, "priority": "<webhook.tier>"}') from ws;
select public.deploy_workflow('c4350000-0000-4000-8000-000000000001');
select is((select flow_control from public.workflow_deployments where workflow_id = 'c4350000-0000-4000-8000-000000000001' and is_active),
  '{"concurrency": {"key": "<webhook.account>", "limit": 1}, "priority": "<webhook.tier>"}'::jsonb, 'The flow control is deployed with the snapshot');

create temporary table answers (label text primary key, r jsonb);
create function pg_temp.admit(p_label text, p_mode text, p_input jsonb) returns jsonb language sql as $$
  insert into answers values (p_label, public.admit_trigger_run('webhook', 'c4350000-0000-4000-8000-000000000001', 'hook', p_mode, p_input))
  on conflict (label) do update set r = excluded.r returning r;
$$;
create function pg_temp.run(p_label text) returns uuid language sql as $$ select (r ->> 'executionId')::uuid from answers where label = p_label $$;
create function pg_temp.row(p_label text) returns public.workflow_executions language sql as $$
  select * from public.workflow_executions where id = pg_temp.run(p_label);
$$;
create function pg_temp.waiting(p_label text) returns boolean language sql as $$
  select exists (select 1 from workflows_private.run_waiters w where w.execution_id = pg_temp.run(p_label));
$$;
create function pg_temp.key_in_use(p_key text) returns integer language sql as $$
  select coalesce((select in_use from workflows_private.concurrency_slots where scope = 'key:c4350000-0000-4000-8000-000000000001:' || p_key), 0);
$$;

select is(pg_temp.admit('a1', 'async', '{"account": "a"}') ->> 'waiting', 'false', 'The first run of key "a" starts');
select is((pg_temp.row('a1')).concurrency_key, 'a', 'holding its resolved key');
select is(pg_temp.admit('a2', 'async', '{"account": "a", "tier": 0}') ->> 'waiting', 'true', 'The second run of key "a" waits: the limit per key is 1');
select is(pg_temp.admit('b1', 'async', '{"account": "b"}') ->> 'waiting', 'false', 'while a run of key "b" is not held back');
select is(array[pg_temp.key_in_use('a'), pg_temp.key_in_use('b')], array[1, 1], 'Each key has one slot in use');
select is(pg_temp.admit('a sync', 'sync', '{"account": "a"}') - 'error',
  '{"status": 429, "outcome": "refused", "code": "CONCURRENCY_KEY_LIMIT_EXCEEDED", "retryAfter": 1, "concurrency": {"key": "a", "limit": 1}}'::jsonb,
  'A sync run of a full key is refused 429 CONCURRENCY_KEY_LIMIT_EXCEEDED');
select matches((select r ->> 'error' from answers where label = 'a sync'), 'key "a"', 'naming the key');
select is((select count(*)::int from public.workflow_executions where workflow_id = 'c4350000-0000-4000-8000-000000000001'), 3, 'and records no run');
select is((select in_use from workflows_private.concurrency_slots c, ws where c.scope = 'account:' || ws.billing_account_id), 2,
  'A waiter holds no account slot either');

select pg_temp.admit('a3', 'async', '{"account": "a", "tier": 5}');
select is(workflows_private.run_detail(pg_temp.row('a3')) -> 'concurrency',
  jsonb_build_object('waiting', true, 'waitingSince', now(), 'waited', true, 'waitedMs', 0, 'key', 'a', 'keyLimit', 1, 'priority', 5),
  'The runs API shows the waiting run''s key, its limit and its priority');
select is(public.finish_workflow_run(pg_temp.run('a1'), 'completed') ->> 'outcome', 'finished', 'When the run of key "a" ends');
select ok(not pg_temp.waiting('a3') and pg_temp.waiting('a2'), 'the waiter with the higher priority starts first, though admitted later');
select is(pg_temp.key_in_use('a'), 1, 'taking the key''s one slot');
select is(public.finish_workflow_run(pg_temp.run('a3'), 'completed') ->> 'outcome', 'finished', 'When it ends too');
select ok(not pg_temp.waiting('a2') and (pg_temp.row('a2')).queue_message_id is not null, 'the lower-priority waiter starts');

-- A parked run gives its key's slot back and needs it again to resume.
select ok(pg_temp.run('a2')::text in (select x ->> 'executionId' from jsonb_array_elements(public.claim_workflow_runs(10, 60) -> 'runs') x), 'A worker claims it');
select is(public.park_workflow_run(pg_temp.run('a2'), 1, now() + interval '1 hour') ->> 'parked', 'true', 'It parks at a Wait');
select is(pg_temp.key_in_use('a'), 0, 'giving its key''s slot back');
select is(pg_temp.admit('a4', 'async', '{"account": "a"}') ->> 'waiting', 'false', 'so a new run of key "a" starts meanwhile');
update public.workflow_executions set parked_until = now(), lease_expires_at = now() where id = pg_temp.run('a2');
select pgmq.set_vt('workflow_runs', (pg_temp.row('a2')).queue_message_id, 0);
select ok(not pg_temp.run('a2')::text in (select x ->> 'executionId' from jsonb_array_elements(public.claim_workflow_runs(10, 60) -> 'runs') x),
  'When it is due, it does not resume over its key''s limit');
select is((select scope from workflows_private.run_waiters where execution_id = pg_temp.run('a2')), 'key:c4350000-0000-4000-8000-000000000001:a',
  'it waits behind its key instead');

select * from finish();
rollback;
