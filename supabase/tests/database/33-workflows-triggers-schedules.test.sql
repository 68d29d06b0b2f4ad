-- Workflow service: schedules follow the active deployment, fire each occurrence once, skip an
-- overlapping run, fire once after downtime, pause after consecutive failures, and refuse an
-- unusable expression or time zone at deploy.
begin;
select plan(37);

insert into auth.users (id, email, aud, role) values
  ('ae000000-0000-4000-8000-000000000001', 'owner@schedules.test', 'authenticated', 'authenticated'),
  ('ae000000-0000-4000-8000-000000000002', 'viewer@schedules.test', 'authenticated', 'authenticated'),
  ('ae000000-0000-4000-8000-000000000003', 'stranger@schedules.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
-- A state whose schedule block `tick` has the given config.
create function pg_temp.tick_state(p_config jsonb) returns jsonb language sql as $$
  select jsonb_build_object('blocks', jsonb_build_object(
      'tick', jsonb_build_object('id', 'tick', 'type', 'schedule', 'name', 'Tick', 'config', p_config),
      'done', jsonb_build_object('id', 'done', 'type', 'variables', 'name', 'Done', 'config', jsonb_build_object('assignments', jsonb_build_array(jsonb_build_object('name', 'at', 'value', '<tick.scheduledFor>'))))),
    'edges', jsonb_build_array(jsonb_build_object('id', 'e1', 'source', 'tick', 'target', 'done')));
$$;
create function pg_temp.schedule(p_workflow uuid) returns public.workflow_schedules language sql as $$
  select * from public.workflow_schedules where workflow_id = p_workflow;
$$;
create function pg_temp.fire(p_now text) returns jsonb language sql as $$
  select coalesce(jsonb_agg(f), '[]') from jsonb_array_elements(workflows_private.fire_due_schedules(p_now::timestamptz)) f
  where f ->> 'workflowId' = 'af000000-0000-4000-8000-000000000001';
$$;

select pg_temp.act_as('ae000000-0000-4000-8000-000000000001');
select public.create_workspace('Schedules');
reset role;
create temporary table ws as select id from public.workspaces where name = 'Schedules';
grant select on ws to authenticated, service_role;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'ae000000-0000-4000-8000-000000000002', 'viewer' from ws;
insert into public.workflows (id, workspace_id, name, state) values
  ('af000000-0000-4000-8000-000000000001', (select id from ws), 'Daily', pg_temp.tick_state('{"cronExpression": "30 2 * * *", "timezone": "America/New_York", "maxConsecutiveFailures": 2}')),
  ('af000000-0000-4000-8000-000000000002', (select id from ws), 'Preset', pg_temp.tick_state('{"scheduleType": "weekly", "weeklyDay": "monday", "weeklyTime": "08:15", "timezone": "Europe/Berlin"}')),
  ('af000000-0000-4000-8000-000000000003', (select id from ws), 'Bad cron', pg_temp.tick_state('{"cronExpression": "0 25 * * *"}')),
  ('af000000-0000-4000-8000-000000000004', (select id from ws), 'Bad zone', pg_temp.tick_state('{"cronExpression": "0 8 * * *", "timezone": "Mars/Olympus"}')),
  ('af000000-0000-4000-8000-000000000005', (select id from ws), 'Never', pg_temp.tick_state('{"cronExpression": "0 0 31 2 *"}'));

-- Deploying creates the schedule -------------------------------------------------------------------

select pg_temp.act_as('ae000000-0000-4000-8000-000000000001');
select public.deploy_workflow('af000000-0000-4000-8000-000000000001');
select public.deploy_workflow('af000000-0000-4000-8000-000000000002');
reset role;
select is(((pg_temp.schedule('af000000-0000-4000-8000-000000000001')).cron_expression, (pg_temp.schedule('af000000-0000-4000-8000-000000000001')).timezone,
  (pg_temp.schedule('af000000-0000-4000-8000-000000000001')).status, (pg_temp.schedule('af000000-0000-4000-8000-000000000001')).max_consecutive_failures)::text,
  '("30 2 * * *",America/New_York,active,2)', 'Deploying a schedule block creates its schedule, active');
select is((pg_temp.schedule('af000000-0000-4000-8000-000000000001')).next_run_at, workflows_private.cron_next('30 2 * * *', 'America/New_York', now()),
  'with its next run after now');
select is((pg_temp.schedule('af000000-0000-4000-8000-000000000002')).cron_expression, '15 8 * * 1', 'A weekly preset becomes its cron expression');

select pg_temp.act_as('ae000000-0000-4000-8000-000000000001');
select throws_ok($$select public.deploy_workflow('af000000-0000-4000-8000-000000000003')$$, '23514',
  'Block "Tick" (schedule): cronExpression "0 25 * * *": hour field "25": 25 is out of range 0-23', 'An invalid cron expression refuses the deploy with the reason');
select throws_ok($$select public.deploy_workflow('af000000-0000-4000-8000-000000000004')$$, '23514',
  'Block "Tick" (schedule): time zone "Mars/Olympus" is unknown: use an IANA time-zone name such as America/Sao_Paulo or UTC', 'and so does an unknown time zone');
select throws_ok($$select public.deploy_workflow('af000000-0000-4000-8000-000000000005')$$, '23514',
  'Block "Tick" (schedule): cronExpression "0 0 31 2 *" never runs', 'and an expression that never runs');
reset role;
select is((select count(*)::int from public.workflow_deployments where workflow_id in ('af000000-0000-4000-8000-000000000003', 'af000000-0000-4000-8000-000000000004', 'af000000-0000-4000-8000-000000000005')), 0,
  'Refused deploys leave no snapshot');

-- Firing: due and not due, once per occurrence ------------------------------------------------------
-- The clock is moved with p_now; 2030-03-10 is the day New York skips 02:00-03:00.

update public.workflow_schedules set next_run_at = '2030-03-09 07:30Z' where workflow_id = 'af000000-0000-4000-8000-000000000001';
select is(pg_temp.fire('2030-03-09 07:29Z'), '[]'::jsonb, 'A schedule not yet due does not fire');
create temporary table first_tick as select pg_temp.fire('2030-03-09 07:30:05Z') as fired;
grant select on first_tick to authenticated, service_role;
select is((select (fired -> 0) - 'scheduleId' - 'executionId' from first_tick),
  '{"workflowId": "af000000-0000-4000-8000-000000000001", "blockId": "tick", "scheduledFor": "2030-03-09T07:30:00+00:00", "outcome": "started", "jitterSeconds": 0, "startsAt": "2030-03-09T07:30:05+00:00"}'::jsonb,
  'A due schedule fires its occurrence, at once without jitter');
select is((select (trigger, mode, status, trigger_block_id, input)::text from public.workflow_executions where id = (select (fired -> 0 ->> 'executionId')::uuid from first_tick)),
  '(schedule,async,queued,tick,"{""timezone"": ""America/New_York"", ""scheduledFor"": ""2030-03-09T07:30:00+00:00"", ""jitterSeconds"": 0, ""cronExpression"": ""30 2 * * *""}")',
  'as a queued schedule run from its block, told its slot, expression, time zone and jitter');
select is(((pg_temp.schedule('af000000-0000-4000-8000-000000000001')).last_run_at, (pg_temp.schedule('af000000-0000-4000-8000-000000000001')).next_run_at)::text,
  '("2030-03-09 07:30:00+00","2030-03-10 07:00:00+00")', 'Its last run is that slot; the next is the day after, when the clock jumps (02:30 does not exist)');
select is(pg_temp.fire('2030-03-09 07:30:30Z'), '[]'::jsonb, 'A second tick in the same minute fires nothing');
select is((select count(*)::int from public.workflow_schedule_runs where workflow_id = 'af000000-0000-4000-8000-000000000001'), 1, 'One occurrence is recorded');
insert into public.workflow_schedule_runs (workflow_id, block_id, scheduled_for, workspace_id, fired_at, outcome) values
  ('af000000-0000-4000-8000-000000000001', 'tick', '2030-03-10 07:00Z', (select id from ws), now(), 'started');
select is(pg_temp.fire('2030-03-10 07:00Z'), '[]'::jsonb, 'An occurrence another ticker already recorded is not fired again');
select is((pg_temp.schedule('af000000-0000-4000-8000-000000000001')).next_run_at, '2030-03-11 06:30Z', 'and the schedule moves on');
delete from public.workflow_schedule_runs where scheduled_for = '2030-03-10 07:00Z';

-- Overlap ------------------------------------------------------------------------------------------

create temporary table overlap as select pg_temp.fire('2030-03-11 06:30Z') as fired;
select is((select (fired -> 0 ->> 'outcome') || ': ' || (fired -> 0 ->> 'reason') from overlap),
  format('skipped: the previous run (%s) was still going', (select fired -> 0 ->> 'executionId' from first_tick)),
  'While its previous run is still queued, an occurrence is skipped, saying why');
select is((select outcome from public.workflow_schedule_runs where scheduled_for = '2030-03-11 06:30Z'), 'skipped', 'and recorded as skipped');

-- Failures pause ------------------------------------------------------------------------------------

set local role service_role;
select public.finish_workflow_run((select fired -> 0 ->> 'executionId' from first_tick)::uuid, 'failed', null, '{"message": "boom", "code": "BLOCK_FAILED"}');
reset role;
select is((pg_temp.schedule('af000000-0000-4000-8000-000000000001')).consecutive_failures, 1, 'A failed run counts one failure');
create temporary table second_tick as select pg_temp.fire('2030-03-12 06:30Z') as fired;
grant select on second_tick to authenticated, service_role;
set local role service_role;
select public.finish_workflow_run((select fired -> 0 ->> 'executionId' from second_tick)::uuid, 'completed');
reset role;
select is((pg_temp.schedule('af000000-0000-4000-8000-000000000001')).consecutive_failures, 0, 'A completed run resets the count');
create temporary table more_ticks (fired jsonb);
grant select on more_ticks to authenticated, service_role;
insert into more_ticks select pg_temp.fire('2030-03-13 06:30Z');
set local role service_role;
select public.finish_workflow_run((select fired -> 0 ->> 'executionId' from more_ticks)::uuid, 'failed', null, '{"message": "boom again", "code": "BLOCK_FAILED"}');
reset role;
delete from more_ticks;
insert into more_ticks select pg_temp.fire('2030-03-14 06:30Z');
set local role service_role;
select public.finish_workflow_run((select fired -> 0 ->> 'executionId' from more_ticks)::uuid, 'failed', null, '{"message": "still broken", "code": "BLOCK_FAILED"}');
reset role;
select is(((pg_temp.schedule('af000000-0000-4000-8000-000000000001')).status, (pg_temp.schedule('af000000-0000-4000-8000-000000000001')).next_run_at)::text, '(paused,)',
  'At its maximum of consecutive failures (2) the schedule is paused');
select is((pg_temp.schedule('af000000-0000-4000-8000-000000000001')).paused_reason,
  format('Paused after 2 consecutive failed runs; the last (%s) failed with BLOCK_FAILED: still broken', (select fired -> 0 ->> 'executionId' from more_ticks)),
  'saying why');
select is((select (source, email_to, subject, delivery)::text from public.workflow_alert_events where workflow_id = 'af000000-0000-4000-8000-000000000001'),
  '(schedule_paused,{owner@schedules.test},"[Orbita] Schedule paused: Daily",pending)', 'and telling the workflow''s owner by e-mail');
select is(pg_temp.fire('2030-03-20 06:30Z'), '[]'::jsonb, 'A paused schedule does not fire');

select pg_temp.act_as('ae000000-0000-4000-8000-000000000002');
select throws_ok(format('select public.resume_workflow_schedule(%L)', (pg_temp.schedule('af000000-0000-4000-8000-000000000001')).id), '42501', null, 'A viewer cannot resume it');
select pg_temp.act_as('ae000000-0000-4000-8000-000000000003');
select throws_ok(format('select public.resume_workflow_schedule(%L)', (pg_temp.schedule('af000000-0000-4000-8000-000000000001')).id), 'PT404', null, 'nor a stranger, who does not see it');
select pg_temp.act_as('ae000000-0000-4000-8000-000000000001');
select is((select (status, consecutive_failures, paused_reason, next_run_at > now())::text from public.resume_workflow_schedule((pg_temp.schedule('af000000-0000-4000-8000-000000000001')).id)),
  '(active,0,,t)', 'An editor resumes it: active, no failures, next run after now');
reset role;

-- Misfire ------------------------------------------------------------------------------------------

update public.workflow_schedules set next_run_at = '2030-04-01 06:30Z', last_execution_id = null where workflow_id = 'af000000-0000-4000-8000-000000000001';
create temporary table after_downtime as select pg_temp.fire('2030-04-05 12:00Z') as fired;
select is((select jsonb_array_length(fired) from after_downtime), 1, 'After four days of downtime a daily schedule fires once, not once per missed day');
select is((select fired -> 0 ->> 'scheduledFor' from after_downtime), '2030-04-01T06:30:00+00:00', 'for the first slot it missed');
select is((pg_temp.schedule('af000000-0000-4000-8000-000000000001')).next_run_at, '2030-04-06 06:30Z', 'and goes on with the first slot after the tick');

-- Redeploying ---------------------------------------------------------------------------------------

select pg_temp.act_as('ae000000-0000-4000-8000-000000000001');
update public.workflows set state = pg_temp.tick_state('{"cronExpression": "0 9 * * *", "timezone": "America/Sao_Paulo"}') where id = 'af000000-0000-4000-8000-000000000001';
select public.deploy_workflow('af000000-0000-4000-8000-000000000001');
reset role;
select is(((pg_temp.schedule('af000000-0000-4000-8000-000000000001')).cron_expression, (pg_temp.schedule('af000000-0000-4000-8000-000000000001')).timezone,
  (pg_temp.schedule('af000000-0000-4000-8000-000000000001')).last_run_at)::text,
  '("0 9 * * *",America/Sao_Paulo,"2030-04-01 06:30:00+00")', 'A new deploy updates the schedule and keeps its last run');
select is((pg_temp.schedule('af000000-0000-4000-8000-000000000001')).next_run_at, workflows_private.cron_next('0 9 * * *', 'America/Sao_Paulo', now()), 'with the new next run');
select pg_temp.act_as('ae000000-0000-4000-8000-000000000001');
select public.activate_deployment('af000000-0000-4000-8000-000000000001', 1);
reset role;
select is((pg_temp.schedule('af000000-0000-4000-8000-000000000001')).cron_expression, '30 2 * * *', 'Rolling back restores the old expression');
select pg_temp.act_as('ae000000-0000-4000-8000-000000000001');
select public.undeploy_workflow('af000000-0000-4000-8000-000000000001');
reset role;
select is((select count(*)::int from public.workflow_schedules where workflow_id = 'af000000-0000-4000-8000-000000000001'), 0, 'Undeploying removes the schedule');

-- Who reads what -----------------------------------------------------------------------------------

select pg_temp.act_as('ae000000-0000-4000-8000-000000000002');
select is((select array_agg(cron_expression) from public.workflow_schedules), array['15 8 * * 1'], 'A viewer reads the workspace''s schedules');
select ok((select count(*) from public.workflow_schedule_runs) >= 5, 'and its occurrences');
select pg_temp.act_as('ae000000-0000-4000-8000-000000000003');
select is((select count(*)::int from public.workflow_schedules) + (select count(*)::int from public.workflow_schedule_runs), 0, 'Someone outside reads neither');
select throws_ok($$update public.workflow_schedules set status = 'active'$$, '42501', null, 'Nobody changes schedules directly');
reset role;

select * from finish();
rollback;
