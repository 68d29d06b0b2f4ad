-- Workflow service: backfilling a schedule (public.backfill_workflow_schedule): editors fire the
-- occurrences of a past range under the overlap policy, each slot once whoever fires it (the
-- ticker or another backfill); the range is bounded (30 days back, 500 occurrences).
begin;
select plan(25);

insert into auth.users (id, email, aud, role) values
  ('ae200000-0000-4000-8000-000000000001', 'owner@backfill.test', 'authenticated', 'authenticated'),
  ('ae200000-0000-4000-8000-000000000002', 'viewer@backfill.test', 'authenticated', 'authenticated'),
  ('ae200000-0000-4000-8000-000000000003', 'stranger@backfill.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create function pg_temp.tick_state(p_config jsonb) returns jsonb language sql as $$
  select jsonb_build_object('blocks', jsonb_build_object(
      'tick', jsonb_build_object('id', 'tick', 'type', 'schedule', 'name', 'Tick', 'config', p_config),
      'done', jsonb_build_object('id', 'done', 'type', 'variables', 'name', 'Done', 'config', jsonb_build_object('assignments', jsonb_build_array(jsonb_build_object('name', 'at', 'value', '<tick.scheduledFor>'))))),
    'edges', jsonb_build_array(jsonb_build_object('id', 'e1', 'source', 'tick', 'target', 'done')));
$$;
-- Whole hours before now.
create function pg_temp.slot(p_hours_ago integer) returns timestamptz language sql stable as $$ select date_trunc('hour', now()) - make_interval(hours => p_hours_ago) $$;
create function pg_temp.schedule_id(p_workflow uuid) returns uuid language sql stable security definer as $$ select id from public.workflow_schedules where workflow_id = p_workflow $$;
-- A backfill's counts (without its echo of the range).
create function pg_temp.backfill(p_workflow uuid, p_from timestamptz, p_to timestamptz) returns jsonb language sql as $$
  select public.backfill_workflow_schedule(pg_temp.schedule_id(p_workflow), p_from, p_to) - 'scheduleId' - 'from' - 'to';
$$;

select pg_temp.act_as('ae200000-0000-4000-8000-000000000001');
select public.create_workspace('Backfill');
reset role;
create temporary table ws as select id from public.workspaces where name = 'Backfill';
grant select on ws to authenticated;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'ae200000-0000-4000-8000-000000000002', 'viewer' from ws;
insert into public.workflows (id, workspace_id, name, state) values
  ('af200000-0000-4000-8000-000000000001', (select id from ws), 'Hourly, skip', pg_temp.tick_state('{"cronExpression": "0 * * * *"}')),
  ('af200000-0000-4000-8000-000000000002', (select id from ws), 'Hourly, all', pg_temp.tick_state('{"cronExpression": "0 * * * *", "overlap": "allow_all"}')),
  ('af200000-0000-4000-8000-000000000003', (select id from ws), 'Every minute', pg_temp.tick_state('{"cronExpression": "* * * * *"}')),
  ('af200000-0000-4000-8000-000000000004', (select id from ws), 'Hourly, buffer', pg_temp.tick_state('{"cronExpression": "0 * * * *", "overlap": "buffer_one"}'));
select pg_temp.act_as('ae200000-0000-4000-8000-000000000001');
select public.deploy_workflow(id) from public.workflows where id between 'af200000-0000-4000-8000-000000000001' and 'af200000-0000-4000-8000-000000000004';

-- What a backfill runs -----------------------------------------------------------------------------

select is(pg_temp.backfill('af200000-0000-4000-8000-000000000002', pg_temp.slot(5), pg_temp.slot(1)),
  '{"occurrences": 5, "started": 5, "buffered": 0, "skipped": 0, "alreadyRecorded": 0}',
  'An editor backfills five past hours of an allow_all schedule: five runs start');
reset role;
select is((select array_agg(e.input ->> 'scheduledFor' order by r.scheduled_for) from public.workflow_schedule_runs r join public.workflow_executions e on e.id = r.execution_id
    where r.workflow_id = 'af200000-0000-4000-8000-000000000002' and r.source = 'backfill' and e.status = 'queued' and e.trigger = 'schedule'),
  (select array_agg(to_jsonb(pg_temp.slot(n)) #>> '{}' order by n desc) from generate_series(1, 5) n),
  'each a queued schedule run told its own occurrence time, recorded as a backfill');
select is((select last_run_at from public.workflow_schedules where workflow_id = 'af200000-0000-4000-8000-000000000002'), pg_temp.slot(1),
  'The schedule''s last run is the latest slot backfilled');

select pg_temp.act_as('ae200000-0000-4000-8000-000000000001');
select is(pg_temp.backfill('af200000-0000-4000-8000-000000000002', pg_temp.slot(5), pg_temp.slot(1)),
  '{"occurrences": 5, "started": 0, "buffered": 0, "skipped": 0, "alreadyRecorded": 5}',
  'The same backfill again runs nothing: every slot is already recorded');
reset role;
select is((select count(*)::int from public.workflow_executions where workflow_id = 'af200000-0000-4000-8000-000000000002'), 5, 'Five runs in all');

-- The ticker and a backfill never run one slot twice.
update public.workflow_schedules set next_run_at = pg_temp.slot(1) where workflow_id = 'af200000-0000-4000-8000-000000000002';
select is((select count(*)::int from jsonb_array_elements(workflows_private.fire_due_schedules(pg_temp.slot(1))) f where f ->> 'workflowId' = 'af200000-0000-4000-8000-000000000002'), 0,
  'The ticker does not fire a slot a backfill ran');
select is((select next_run_at from public.workflow_schedules where workflow_id = 'af200000-0000-4000-8000-000000000002'), pg_temp.slot(0), 'and moves on');

update public.workflow_schedules set next_run_at = pg_temp.slot(3) where workflow_id = 'af200000-0000-4000-8000-000000000001';
create temporary table ticked as select f from jsonb_array_elements(workflows_private.fire_due_schedules(pg_temp.slot(3))) f where f ->> 'workflowId' = 'af200000-0000-4000-8000-000000000001';
select is((select f ->> 'outcome' from ticked), 'started', 'The ticker fires a skip schedule''s slot');
select pg_temp.act_as('ae200000-0000-4000-8000-000000000001');
select is(pg_temp.backfill('af200000-0000-4000-8000-000000000001', pg_temp.slot(4), pg_temp.slot(1)),
  '{"occurrences": 4, "started": 0, "buffered": 0, "skipped": 3, "alreadyRecorded": 1}',
  'A backfill over it leaves that slot alone and, under skip, skips the others while that run is queued');
reset role;
select is((select array_agg(reason order by scheduled_for) from public.workflow_schedule_runs where workflow_id = 'af200000-0000-4000-8000-000000000001' and source = 'backfill'),
  array_fill(format('the previous run (%s) was still going', (select f ->> 'executionId' from ticked)), array[3]), 'saying why');

select pg_temp.act_as('ae200000-0000-4000-8000-000000000001');
select is(pg_temp.backfill('af200000-0000-4000-8000-000000000004', pg_temp.slot(3), pg_temp.slot(1)),
  '{"occurrences": 3, "started": 1, "buffered": 1, "skipped": 1, "alreadyRecorded": 0}',
  'Under buffer_one a backfill starts the first, keeps the second waiting and skips the third');

-- A paused schedule may be backfilled: the pause stops the ticker, not an editor.
reset role;
update public.workflow_schedules set status = 'paused', next_run_at = null where workflow_id = 'af200000-0000-4000-8000-000000000002';
select pg_temp.act_as('ae200000-0000-4000-8000-000000000001');
select is(pg_temp.backfill('af200000-0000-4000-8000-000000000002', pg_temp.slot(6), pg_temp.slot(6)) ->> 'started', '1', 'A paused schedule can be backfilled');

-- Limits -------------------------------------------------------------------------------------------

select is(pg_temp.backfill('af200000-0000-4000-8000-000000000003', date_trunc('minute', now()) - interval '2 days', date_trunc('minute', now()) - interval '2 days' + interval '499 minutes'),
  '{"occurrences": 500, "started": 1, "buffered": 0, "skipped": 499, "alreadyRecorded": 0}',
  'A range of 500 occurrences is accepted');
select throws_ok(format('select pg_temp.backfill(%L, %L, %L)', 'af200000-0000-4000-8000-000000000003',
    date_trunc('minute', now()) - interval '3 days', date_trunc('minute', now()) - interval '3 days' + interval '500 minutes'),
  '22023', 'The range holds more than 500 occurrences of this schedule: backfill at most 500 per call',
  'One of 501 is refused whole, with the cap');
select throws_like(format('select pg_temp.backfill(%L, %L, %L)', 'af200000-0000-4000-8000-000000000003', pg_temp.slot(1), pg_temp.slot(2)),
  'The range is reversed: p_from (%) is after p_to (%)', 'A reversed range is refused');
select throws_like(format('select pg_temp.backfill(%L, %L, %L)', 'af200000-0000-4000-8000-000000000003', pg_temp.slot(1), now() + interval '1 hour'),
  'A backfill runs past occurrences only: p_to (%) is after now (%)', 'and one reaching into the future');
select throws_like(format('select pg_temp.backfill(%L, %L, %L)', 'af200000-0000-4000-8000-000000000003', now() - interval '31 days', now() - interval '30 days'),
  'A backfill reaches back 30 days at most%', 'and one starting more than 30 days ago');
select throws_ok(format('select pg_temp.backfill(%L, null, %L)', 'af200000-0000-4000-8000-000000000003', pg_temp.slot(1)),
  '22023', 'A backfill needs both p_from and p_to (ISO 8601 times)', 'and one without a start');

-- Who may ------------------------------------------------------------------------------------------

select pg_temp.act_as('ae200000-0000-4000-8000-000000000002');
select throws_ok(format('select pg_temp.backfill(%L, %L, %L)', 'af200000-0000-4000-8000-000000000003', pg_temp.slot(2), pg_temp.slot(1)),
  '42501', 'Only a workspace editor or above may backfill schedules', 'A viewer cannot backfill');
select is((select count(*)::int from public.workflow_schedule_runs where source = 'backfill'), 512, 'but reads the backfilled occurrences');
select pg_temp.act_as('ae200000-0000-4000-8000-000000000003');
select throws_ok(format('select public.backfill_workflow_schedule(%L, %L, %L)', pg_temp.schedule_id('af200000-0000-4000-8000-000000000003'), pg_temp.slot(2), pg_temp.slot(1)),
  'PT404', format('Schedule %s not found', pg_temp.schedule_id('af200000-0000-4000-8000-000000000003')), 'Someone outside the workspace gets not found');
select is((select count(*)::int from public.workflow_schedule_runs), 0, 'and reads no occurrence');
select throws_ok(format('select public.backfill_workflow_schedule(%L, %L, %L)', gen_random_uuid(), pg_temp.slot(2), pg_temp.slot(1)),
  'PT404', null, 'An unknown schedule is not found either');
reset role;
set local role anon;
select throws_ok(format('select public.backfill_workflow_schedule(%L, %L, %L)', gen_random_uuid(), pg_temp.slot(2), pg_temp.slot(1)),
  '42501', null, 'Anonymous callers may not call it at all');
reset role;
select is((select count(*)::int from public.workflow_executions where workflow_id = 'af200000-0000-4000-8000-000000000003'), 1, 'Refused backfills ran nothing');

select * from finish();
rollback;
