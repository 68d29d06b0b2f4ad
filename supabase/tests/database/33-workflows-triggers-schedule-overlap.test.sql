-- Workflow service: a schedule's overlap policy (skip, buffer_one, allow_all, cancel_running) and
-- jitter, driven by the ticker with an explicit clock. Slots lie in the past hours where a released
-- (buffered) run starts at the real now(), and years ahead where only the ticker's clock matters.
begin;
select plan(32);

insert into auth.users (id, email, aud, role) values
  ('ae100000-0000-4000-8000-000000000001', 'owner@overlap.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create function pg_temp.tick_state(p_config jsonb) returns jsonb language sql as $$
  select jsonb_build_object('blocks', jsonb_build_object(
      'tick', jsonb_build_object('id', 'tick', 'type', 'schedule', 'name', 'Tick', 'config', p_config),
      'done', jsonb_build_object('id', 'done', 'type', 'variables', 'name', 'Done', 'config', jsonb_build_object('assignments', jsonb_build_array(jsonb_build_object('name', 'at', 'value', '<tick.scheduledFor>'))))),
    'edges', jsonb_build_array(jsonb_build_object('id', 'e1', 'source', 'tick', 'target', 'done')));
$$;
-- Fires `p_workflow`'s schedule at `p_slot` (its next run set there), the clock at the slot.
create function pg_temp.fire_at(p_workflow uuid, p_slot timestamptz) returns jsonb language sql as $$
  update public.workflow_schedules set next_run_at = p_slot where workflow_id = p_workflow;
  select f from jsonb_array_elements(workflows_private.fire_due_schedules(p_slot)) f where (f ->> 'workflowId')::uuid = p_workflow;
$$;
create function pg_temp.occurrence(p_workflow uuid, p_slot timestamptz) returns public.workflow_schedule_runs language sql as $$
  select * from public.workflow_schedule_runs where workflow_id = p_workflow and scheduled_for = p_slot;
$$;
create function pg_temp.run_status(p_execution text) returns text language sql as $$
  select status::text from public.workflow_executions where id = p_execution::uuid;
$$;
create function pg_temp.finish(p_execution text, p_status text) returns void language sql security definer as $$
  select public.finish_workflow_run(p_execution::uuid, p_status, null, case when p_status = 'failed' then '{"message": "boom", "code": "BLOCK_FAILED"}'::jsonb end);
$$;
-- The slots: whole hours before now, so a released run may start at the real now().
create temporary table slot as select date_trunc('hour', now()) - make_interval(hours => n) as at, n from generate_series(1, 6) n;
create function pg_temp.slot(p_hours_ago integer) returns timestamptz language sql as $$ select at from slot where n = p_hours_ago $$;

select pg_temp.act_as('ae100000-0000-4000-8000-000000000001');
select public.create_workspace('Overlap');
reset role;
create temporary table ws as select id from public.workspaces where name = 'Overlap';
insert into public.workflows (id, workspace_id, name, state) values
  ('af100000-0000-4000-8000-000000000001', (select id from ws), 'Skip', pg_temp.tick_state('{"cronExpression": "0 * * * *"}')),
  ('af100000-0000-4000-8000-000000000002', (select id from ws), 'Buffer', pg_temp.tick_state('{"cronExpression": "0 * * * *", "overlap": "buffer_one"}')),
  ('af100000-0000-4000-8000-000000000003', (select id from ws), 'All', pg_temp.tick_state('{"cronExpression": "0 * * * *", "overlap": "allow_all"}')),
  ('af100000-0000-4000-8000-000000000004', (select id from ws), 'Cancel', pg_temp.tick_state('{"cronExpression": "0 * * * *", "overlap": "cancel_running"}')),
  ('af100000-0000-4000-8000-000000000005', (select id from ws), 'Jitter', pg_temp.tick_state('{"cronExpression": "*/5 * * * *", "jitterSeconds": 120}')),
  ('af100000-0000-4000-8000-000000000006', (select id from ws), 'Buffer, fragile', pg_temp.tick_state('{"cronExpression": "0 * * * *", "overlap": "buffer_one", "maxConsecutiveFailures": 1}')),
  ('af100000-0000-4000-8000-000000000007', (select id from ws), 'Jitter too long', pg_temp.tick_state('{"cronExpression": "*/5 * * * *", "jitterSeconds": 300}'));
select pg_temp.act_as('ae100000-0000-4000-8000-000000000001');
select public.deploy_workflow(id) from public.workflows where id between 'af100000-0000-4000-8000-000000000001' and 'af100000-0000-4000-8000-000000000006';
reset role;

-- The config ---------------------------------------------------------------------------------------

select is((select array_agg((overlap, jitter_seconds)::text order by workflow_id) from public.workflow_schedules where workspace_id = (select id from ws)),
  array['(skip,0)', '(buffer_one,0)', '(allow_all,0)', '(cancel_running,0)', '(skip,120)', '(buffer_one,0)'],
  'A deploy copies the block''s overlap (skip when absent) and jitter to its schedule');
select throws_ok($$update public.workflows set state = pg_temp.tick_state('{"cronExpression": "0 * * * *", "overlap": "sometimes"}') where id = 'af100000-0000-4000-8000-000000000001'$$,
  '23514', null, 'An unknown overlap policy is refused when the draft is saved');
select throws_ok($$update public.workflows set state = pg_temp.tick_state('{"cronExpression": "0 * * * *", "jitterSeconds": 3601}') where id = 'af100000-0000-4000-8000-000000000001'$$,
  '23514', null, 'and so is a jitter over 3600 s');
select pg_temp.act_as('ae100000-0000-4000-8000-000000000001');
select throws_ok($$select public.deploy_workflow('af100000-0000-4000-8000-000000000007')$$, '23514',
  'Block "Tick" (schedule): jitterSeconds 300 must be shorter than the 300 s between two of its runs',
  'A jitter as long as the gap between two runs refuses the deploy');
reset role;

-- skip ---------------------------------------------------------------------------------------------

create temporary table fired (name text primary key, entry jsonb);
insert into fired values ('skip 1', pg_temp.fire_at('af100000-0000-4000-8000-000000000001', pg_temp.slot(6)));
insert into fired values ('skip 2', pg_temp.fire_at('af100000-0000-4000-8000-000000000001', pg_temp.slot(5)));
select is((select entry ->> 'outcome' || ': ' || (entry ->> 'reason') from fired where name = 'skip 2'),
  format('skipped: the previous run (%s) was still going', (select entry ->> 'executionId' from fired where name = 'skip 1')),
  'skip: an occurrence while the previous run is queued is skipped, saying why');

-- buffer_one ---------------------------------------------------------------------------------------

insert into fired values ('buffer 1', pg_temp.fire_at('af100000-0000-4000-8000-000000000002', pg_temp.slot(6)));
insert into fired values ('buffer 2', pg_temp.fire_at('af100000-0000-4000-8000-000000000002', pg_temp.slot(5)));
insert into fired values ('buffer 3', pg_temp.fire_at('af100000-0000-4000-8000-000000000002', pg_temp.slot(4)));
select is((select (entry ->> 'outcome', entry ->> 'reason', entry ? 'executionId')::text from fired where name = 'buffer 2'),
  format('(buffered,"waiting for the previous run (%s) to end",f)', (select entry ->> 'executionId' from fired where name = 'buffer 1')),
  'buffer_one: the first occurrence while the previous run is queued waits, and runs nothing yet');
select is((select entry ->> 'outcome' || ': ' || (entry ->> 'reason') from fired where name = 'buffer 3'),
  format('skipped: the previous run (%s) was still going and the occurrence of %s was already waiting for it',
    (select entry ->> 'executionId' from fired where name = 'buffer 1'), pg_temp.slot(5)),
  'a second one, while one waits, is skipped, saying why');
select is((pg_temp.occurrence('af100000-0000-4000-8000-000000000002', pg_temp.slot(5))).outcome, 'buffered', 'The waiting occurrence is recorded as buffered');
select pg_temp.finish((select entry ->> 'executionId' from fired where name = 'buffer 1'), 'completed');
create temporary table released as select * from pg_temp.occurrence('af100000-0000-4000-8000-000000000002', pg_temp.slot(5));
select is((select (outcome, reason, starts_at = now())::text from released),
  format('(started,"waited for the previous run (%s) to end",t)', (select entry ->> 'executionId' from fired where name = 'buffer 1')),
  'When the previous run ends, the buffered occurrence starts at once, saying what it waited for');
select is((select (e.status, e.input ->> 'scheduledFor')::text from public.workflow_executions e where e.id = (select execution_id from released)),
  format('(queued,%s)', to_jsonb(pg_temp.slot(5)) #>> '{}'), 'as a queued run told its own slot');
select is((select last_execution_id from public.workflow_schedules where workflow_id = 'af100000-0000-4000-8000-000000000002'), (select execution_id from released),
  'and it becomes the run the next occurrence looks at');
insert into fired values ('buffer 4', pg_temp.fire_at('af100000-0000-4000-8000-000000000002', pg_temp.slot(3)));
select is((select entry ->> 'outcome' from fired where name = 'buffer 4'), 'buffered', 'The next occurrence may wait in turn');

-- A buffered occurrence of a schedule paused by the very end it waited for is skipped.
insert into fired values ('fragile 1', pg_temp.fire_at('af100000-0000-4000-8000-000000000006', pg_temp.slot(6)));
insert into fired values ('fragile 2', pg_temp.fire_at('af100000-0000-4000-8000-000000000006', pg_temp.slot(5)));
select pg_temp.finish((select entry ->> 'executionId' from fired where name = 'fragile 1'), 'failed');
select is(((pg_temp.occurrence('af100000-0000-4000-8000-000000000006', pg_temp.slot(5))).outcome, (pg_temp.occurrence('af100000-0000-4000-8000-000000000006', pg_temp.slot(5))).reason)::text,
  format('(skipped,"the schedule was paused before the previous run (%s) ended")', (select entry ->> 'executionId' from fired where name = 'fragile 1')),
  'A buffered occurrence whose schedule that failure paused is skipped, saying why');
select is((select status::text from public.workflow_schedules where workflow_id = 'af100000-0000-4000-8000-000000000006'), 'paused', 'and the pause stands');

-- allow_all ----------------------------------------------------------------------------------------

insert into fired values ('all 1', pg_temp.fire_at('af100000-0000-4000-8000-000000000003', pg_temp.slot(6)));
insert into fired values ('all 2', pg_temp.fire_at('af100000-0000-4000-8000-000000000003', pg_temp.slot(5)));
select is((select array_agg(entry ->> 'outcome' order by name) from fired where name like 'all %'), array['started', 'started'],
  'allow_all: an occurrence starts while the previous run is still queued');
select is((select array_agg(pg_temp.run_status(entry ->> 'executionId') order by name) from fired where name like 'all %'), array['queued', 'queued'],
  'and both runs are queued');

-- cancel_running -----------------------------------------------------------------------------------

insert into fired values ('cancel 1', pg_temp.fire_at('af100000-0000-4000-8000-000000000004', pg_temp.slot(6)));
insert into fired values ('cancel 2', pg_temp.fire_at('af100000-0000-4000-8000-000000000004', pg_temp.slot(5)));
select is((select (entry ->> 'outcome', entry ->> 'cancelledExecutionId', entry ->> 'reason')::text from fired where name = 'cancel 2'),
  format('(started,%s,"cancelled the previous run (%1$s), which was still queued")', (select entry ->> 'executionId' from fired where name = 'cancel 1')),
  'cancel_running: an occurrence cancels the queued previous run and starts, saying so');
select is(pg_temp.run_status((select entry ->> 'executionId' from fired where name = 'cancel 1')), 'cancelled', 'The previous run is cancelled, through the cancellation path');
select is(pg_temp.run_status((select entry ->> 'executionId' from fired where name = 'cancel 2')), 'queued', 'and the new one is queued');
select is(((pg_temp.occurrence('af100000-0000-4000-8000-000000000004', pg_temp.slot(5))).outcome, (pg_temp.occurrence('af100000-0000-4000-8000-000000000004', pg_temp.slot(5))).cancelled_execution_id::text)::text,
  format('(started,%s)', (select entry ->> 'executionId' from fired where name = 'cancel 1')), 'The occurrence records the run it cancelled');
select is((select consecutive_failures from public.workflow_schedules where workflow_id = 'af100000-0000-4000-8000-000000000004'), 0, 'A cancelled run is no failure');
-- A running previous run is asked to stop (its worker sees it at its next check).
update public.workflow_executions set status = 'running', started_at = now(), attempt = 1 where id = (select (entry ->> 'executionId')::uuid from fired where name = 'cancel 2');
insert into fired values ('cancel 3', pg_temp.fire_at('af100000-0000-4000-8000-000000000004', pg_temp.slot(4)));
select is((select entry ->> 'reason' from fired where name = 'cancel 3'),
  format('cancelled the previous run (%s), which was still running', (select entry ->> 'executionId' from fired where name = 'cancel 2')),
  'A running previous run is cancelled too');
select isnt((select cancel_requested_at from public.workflow_executions where id = (select (entry ->> 'executionId')::uuid from fired where name = 'cancel 2')), null,
  'by asking it to stop');
select is(pg_temp.run_status((select entry ->> 'executionId' from fired where name = 'cancel 3')), 'queued', 'while the new one starts');

-- Jitter -------------------------------------------------------------------------------------------

select is(workflows_private.schedule_jitter('af100000-0000-4000-8000-000000000005', 'tick', '2030-01-01T00:00Z', 120), 100,
  'The jitter is sha256(workflow:block:slot epoch) modulo max + 1: printf ''%s:%s:%s'' af100000-…-000000000005 tick 1893456000 | sha256sum starts 82c4322dd2c355a');
select is(workflows_private.schedule_jitter('af100000-0000-4000-8000-000000000005', 'tick', '2030-01-01T00:00Z', 3600), 3207, 'the same hash for a longer maximum');
select is(workflows_private.schedule_jitter('af100000-0000-4000-8000-000000000005', 'tick', '2030-01-01T00:00Z', 0), 0, 'and no jitter without a maximum');
create temporary table jitters as
  select n, workflows_private.schedule_jitter('af100000-0000-4000-8000-000000000005', 'tick', '2030-01-01T00:00Z'::timestamptz + make_interval(mins => 5 * n), 30) as j
  from generate_series(0, 999) n;
select is((select (min(j), max(j), count(distinct j))::text from jitters), '(0,30,31)',
  'Over 1000 slots it stays within 0 to the maximum and takes every value');
select is((select array_agg(workflows_private.schedule_jitter('af100000-0000-4000-8000-000000000005', 'tick', '2030-01-01T00:00Z'::timestamptz + make_interval(mins => 5 * n), 30) order by n)
  from generate_series(0, 999) n), (select array_agg(j order by n) from jitters),
  'It is stable: asked again, every occurrence gets the same delay');

insert into fired values ('jitter', pg_temp.fire_at('af100000-0000-4000-8000-000000000005', '2030-01-01T00:00Z'));
select is((select (entry ->> 'outcome', entry ->> 'scheduledFor', entry ->> 'jitterSeconds', entry ->> 'startsAt')::text from fired where name = 'jitter'),
  '(started,2030-01-01T00:00:00+00:00,100,2030-01-01T00:01:40+00:00)', 'A jittered occurrence keeps its slot and starts at the slot plus its jitter');
select ok((select q.vt between now() + interval '99 seconds' and clock_timestamp() + interval '101 seconds'
  from pgmq.q_workflow_runs q join public.workflow_executions e on e.queue_message_id = q.msg_id
  where e.id = (select (entry ->> 'executionId')::uuid from fired where name = 'jitter')),
  'Its queue message becomes visible only then, so no worker holds it meanwhile');
select is((select (e.input ->> 'scheduledFor', e.input ->> 'jitterSeconds')::text from public.workflow_executions e where e.id = (select (entry ->> 'executionId')::uuid from fired where name = 'jitter')),
  '(2030-01-01T00:00:00+00:00,100)', 'The run is told its slot and its jitter');

select * from finish();
rollback;
