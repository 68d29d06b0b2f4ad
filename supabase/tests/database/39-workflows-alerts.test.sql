-- Workflow service, issue 32 item 6: alert rules under row-level security, their validation, the
-- evaluation of each kind on a controllable clock with its cooldown, and the worker's claim and record.
begin;
select plan(38);

insert into auth.users (id, email, aud, role) values
  ('af100000-0000-4000-8000-000000000001', 'owner@alerts.test', 'authenticated', 'authenticated'),
  ('af100000-0000-4000-8000-000000000002', 'editor@alerts.test', 'authenticated', 'authenticated'),
  ('af100000-0000-4000-8000-000000000003', 'viewer@alerts.test', 'authenticated', 'authenticated'),
  ('af100000-0000-4000-8000-000000000004', 'stranger@alerts.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create function pg_temp.as_service() returns void language sql as $$
  select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true);
$$;

select pg_temp.act_as('af100000-0000-4000-8000-000000000001');
select public.create_workspace('Alerts');
reset role;
create temporary table ws as select w.id, w.billing_account_id from public.workspaces w
  join public.workspace_members m on m.workspace_id = w.id and m.user_id = 'af100000-0000-4000-8000-000000000001';
grant select on ws to public;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'af100000-0000-4000-8000-000000000002', 'editor' from ws;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'af100000-0000-4000-8000-000000000003', 'viewer' from ws;
select pg_temp.act_as('af100000-0000-4000-8000-000000000004');
select public.create_workspace('Elsewhere');
reset role;
insert into public.workflows (id, workspace_id, name, state) select 'af200000-0000-4000-8000-000000000001', id, 'Nightly import', '{"blocks": {}, "edges": []}' from ws;
insert into public.workflows (id, workspace_id, name, state) select 'af200000-0000-4000-8000-000000000002', id, 'Quiet one', '{"blocks": {}, "edges": []}' from ws;

-- Runs of the first workflow at chosen times: (minutes before 12:00, status, duration, cost).
create function pg_temp.run(p_minutes_before integer, p_status text, p_duration integer default 100, p_cost numeric default 0.01, p_workflow uuid default 'af200000-0000-4000-8000-000000000001') returns void language sql as $$
  insert into public.workflow_executions (workspace_id, workflow_id, billing_account_id, trigger, mode, status, level, created_at, started_at, ended_at, duration_ms, cost_total)
  select id, p_workflow, billing_account_id, 'api', 'sync', p_status::public.workflow_run_status,
    case when p_status = 'failed' then 'error' else 'info' end::public.workflow_log_level,
    t, t, t + make_interval(secs => p_duration / 1000.0), p_duration, p_cost
  from ws, (select timestamptz '2026-12-02 12:00:00+00' - make_interval(mins => p_minutes_before) as t) x
$$;
create function pg_temp.rule(p_name text) returns public.workflow_alert_rules language sql as $$ select * from public.workflow_alert_rules where name = p_name $$;
-- The evaluation as pg_cron runs it: as postgres, with no API caller's claims.
create function pg_temp.evaluate(p_at text) returns integer language sql as $$
  select set_config('request.jwt.claims', '', true);
  select workflows_private.evaluate_alert_rules(timestamptz '2026-12-02 12:00:00+00' + p_at::interval);
$$;

-- Rules under row-level security ------------------------------------------------------------------------

select pg_temp.act_as('af100000-0000-4000-8000-000000000002');
select lives_ok($$insert into public.workflow_alert_rules (workflow_id, name, kind, threshold, channel, email_to)
  values ('af200000-0000-4000-8000-000000000001', 'Three failures', 'consecutive_failures', 3, 'email', '{ops@alerts.test}')$$,
  'An editor adds a rule on a workflow');
select is((select (workspace_id = (select id from ws), firing, last_fired_at)::text from public.workflow_alert_rules where name = 'Three failures'), '(t,f,)',
  'It takes the workflow''s workspace and starts not firing');
select throws_ok($$insert into public.workflow_alert_rules (workflow_id, name, kind, threshold, channel, email_to) values ('af200000-0000-4000-8000-000000000001', 'x', 'failure_rate', 1.5, 'email', '{a@b.test}')$$,
  '23514', null, 'A failure share above 1 is refused');
select throws_ok($$insert into public.workflow_alert_rules (workflow_id, name, kind, threshold, channel, email_to) values ('af200000-0000-4000-8000-000000000001', 'x', 'consecutive_failures', 2.5, 'email', '{a@b.test}')$$,
  '23514', null, 'A fractional run count is refused');
select throws_ok($$insert into public.workflow_alert_rules (workflow_id, name, kind, threshold, channel, email_to) values ('af200000-0000-4000-8000-000000000001', 'x', 'no_runs', 3, 'email', '{a@b.test}')$$,
  '23514', null, 'A no_runs rule takes no threshold');
select throws_ok($$insert into public.workflow_alert_rules (workflow_id, name, kind, threshold, channel, email_to) values ('af200000-0000-4000-8000-000000000001', 'x', 'cost_per_run', 1, 'email', '{not-an-address}')$$,
  '23514', null, 'An e-mail rule needs real addresses');
select throws_ok($$insert into public.workflow_alert_rules (workflow_id, name, kind, threshold, channel) values ('af200000-0000-4000-8000-000000000001', 'x', 'cost_per_run', 1, 'webhook')$$,
  '23514', null, 'A webhook rule needs a subscription of the workspace');
select throws_ok($$insert into public.workflow_alert_rules (workflow_id, name, kind, threshold, channel, email_to, window_minutes) values ('af200000-0000-4000-8000-000000000001', 'x', 'cost_per_run', 1, 'email', '{a@b.test}', 20000)$$,
  '23514', null, 'A window over 7 days is refused');
insert into public.workflow_alert_rules (workspace_id, name, kind, threshold, window_minutes, min_runs, channel, email_to)
  select id, 'Failing a lot', 'failure_rate', 0.6, 60, 4, 'email', '{ops@alerts.test}' from ws;
insert into public.workflow_alert_rules (workflow_id, name, kind, threshold, window_minutes, min_runs, channel, email_to)
  values ('af200000-0000-4000-8000-000000000001', 'Slow', 'p95_duration', 1000, 60, 4, 'email', '{ops@alerts.test}'),
         ('af200000-0000-4000-8000-000000000001', 'Expensive', 'cost_per_run', 0.5, 60, 1, 'email', '{ops@alerts.test}'),
         ('af200000-0000-4000-8000-000000000002', 'Silent', 'no_runs', null, 30, 1, 'email', '{ops@alerts.test}');
select throws_ok($$update public.workflow_alert_rules set firing = true, last_fired_at = now() where name = 'Slow'$$, '42501', null,
  'An editor cannot write the evaluation record');

select pg_temp.act_as('af100000-0000-4000-8000-000000000003');
select is((select count(*)::int from public.workflow_alert_rules), 5, 'A viewer reads the workspace''s rules');
select throws_ok($$insert into public.workflow_alert_rules (workflow_id, name, kind, threshold, channel, email_to) values ('af200000-0000-4000-8000-000000000001', 'v', 'cost_per_run', 1, 'email', '{a@b.test}')$$,
  '42501', null, 'but cannot add one');
update public.workflow_alert_rules set enabled = false;
delete from public.workflow_alert_rules;
select pg_temp.act_as('af100000-0000-4000-8000-000000000004');
select is((select count(*)::int from public.workflow_alert_rules), 0, 'Someone outside the workspace sees none');
select throws_ok($$insert into public.workflow_alert_rules (workflow_id, name, kind, threshold, channel, email_to) values ('af200000-0000-4000-8000-000000000001', 's', 'cost_per_run', 1, 'email', '{a@b.test}')$$,
  '42501', null, 'and cannot add one to its workflows');
update public.workflow_alert_rules set enabled = false;
delete from public.workflow_alert_rules;
reset role;
select is((select count(*)::int from public.workflow_alert_rules where enabled), 5, 'Neither the viewer nor the stranger changed or deleted any');
-- The rules' ages on the test's clock: all made the day before, the silence rule at 12:30.
update public.workflow_alert_rules set created_at = case when name = 'Silent' then timestamptz '2026-12-02 12:30+00' else timestamptz '2026-12-01 00:00+00' end;

-- Evaluation on a controllable clock ------------------------------------------------------------------

select pg_temp.run(50, 'completed'); select pg_temp.run(40, 'failed'); select pg_temp.run(30, 'failed');
select pg_temp.run(20, 'completed', 1500); select pg_temp.run(10, 'completed', 1200, 0.9);
select is(pg_temp.evaluate('0 minutes'), 2, 'At 12:00 two rules fire: a run cost 0.9, and the p95 of five runs is over 1 s');
select is((select array_agg(name order by name) from public.workflow_alert_rules where firing), array['Expensive', 'Slow'], 'those two are firing');
select is((select message from public.workflow_alert_events e join public.workflow_alert_rules r on r.id = e.rule_id where r.name = 'Expensive'),
  'Workflow "Nightly import": a run of the last 60 minutes cost 0.9 (threshold 0.5)', 'The event says what was measured');
select is((select count(*)::int from pgmq.q_workflow_alerts q join public.workflow_alert_events e on q.message ->> 'eventId' = e.id::text), 2,
  'and each fired alert waits on the queue for the worker');

select pg_temp.run(-2, 'failed'); select pg_temp.run(-3, 'failed'); select pg_temp.run(-4, 'failed');
select is(pg_temp.evaluate('5 minutes'), 2, 'Five minutes on, three failures in a row fire, and so does the workspace''s failure rate');
select is((select observed from public.workflow_alert_events e join public.workflow_alert_rules r on r.id = e.rule_id where r.name = 'Three failures'), 3::numeric,
  'measuring three in a row');
select is((select (firing, last_fired_at = timestamptz '2026-12-02 12:00:00+00')::text from public.workflow_alert_rules where name = 'Expensive'), '(t,t)',
  'The cost rule still holds, but within its cooldown it does not fire again');
select is((select observed from public.workflow_alert_events e join public.workflow_alert_rules r on r.id = e.rule_id where r.name = 'Failing a lot'), 0.625,
  'measuring the share of the last hour''s runs that failed (5 of 8)');
select is(pg_temp.evaluate('61 minutes'), 1, 'At 13:01 the quiet workflow has had no run for 30 minutes, and its rule is older than that');
select is(pg_temp.evaluate('62 minutes'), 0, 'A minute later nothing is due');
select pg_temp.run(-63, 'completed');
select is(pg_temp.evaluate('64 minutes'), 0, 'A successful run ends the failures in a row');
select is((select firing from public.workflow_alert_rules where name = 'Three failures'), false, 'and the rule stops firing');
update public.workflow_alert_rules set enabled = false where name = 'Silent';
select is(pg_temp.evaluate('200 minutes'), 0, 'A disabled rule is not evaluated');

-- The worker's claim and record ----------------------------------------------------------------------

update pgmq.q_workflow_alerts set vt = clock_timestamp() + interval '1 hour'
  where (message ->> 'eventId')::uuid not in (select e.id from public.workflow_alert_events e join public.workflow_alert_rules r on r.id = e.rule_id where r.name = 'Three failures');
select pg_temp.act_as('af100000-0000-4000-8000-000000000002');
select throws_ok($$select public.claim_alert_deliveries()$$, '42501', null, 'Only the service role claims alerts');
select pg_temp.as_service();
create temporary table claimed as select public.claim_alert_deliveries(10, 60) -> 'alerts' as a;
reset role;
select is((select jsonb_array_length(a) from claimed), 1, 'The worker claims the visible alert');
select is((select (a -> 0) - 'messageId' - 'eventId' - 'event' from claimed), jsonb_build_object('attempt', 1, 'channel', 'email', 'emailTo', jsonb_build_array('ops@alerts.test'),
  'url', null, 'secret', null, 'subject', '[Orbita alert] Three failures', 'message', 'Workflow "Nightly import": the last 3 runs failed'),
  'with its recipients, subject and message');
select pg_temp.as_service();
select is(public.record_alert_deliveries(jsonb_build_array(jsonb_build_object('eventId', (select a -> 0 ->> 'eventId' from claimed), 'messageId', (select (a -> 0 ->> 'messageId')::bigint from claimed),
  'ok', false, 'error', 'The e-mail was not sent: down'))), 0, 'A failed delivery is recorded');
reset role;
select is((select (delivery, last_error)::text from public.workflow_alert_events where id = (select (a -> 0 ->> 'eventId')::uuid from claimed)), '(pending,"The e-mail was not sent: down")',
  'and stays pending, its message kept for another attempt');
update pgmq.q_workflow_alerts set vt = clock_timestamp() - interval '1 second' where msg_id = (select (a -> 0 ->> 'messageId')::bigint from claimed);
select pg_temp.as_service();
select is((public.claim_alert_deliveries(10, 60) -> 'alerts' -> 0 ->> 'attempt')::int, 2, 'It is claimed again as attempt 2');
select is(public.record_alert_deliveries(jsonb_build_array(jsonb_build_object('eventId', (select a -> 0 ->> 'eventId' from claimed), 'messageId', (select (a -> 0 ->> 'messageId')::bigint from claimed),
  'ok', true))), 1, 'and recorded sent');
reset role;
select is((select (delivery, last_error, sent_at is not null)::text from public.workflow_alert_events where id = (select (a -> 0 ->> 'eventId')::uuid from claimed)), '(sent,,t)',
  'as sent');
select is((select count(*)::int from pgmq.q_workflow_alerts where msg_id = (select (a -> 0 ->> 'messageId')::bigint from claimed)), 0, 'its message gone');

select pg_temp.act_as('af100000-0000-4000-8000-000000000003');
select is((select count(*)::int from public.workflow_alert_events), 5, 'A viewer reads the workspace''s alert events');
select pg_temp.act_as('af100000-0000-4000-8000-000000000004');
select is((select count(*)::int from public.workflow_alert_events), 0, 'someone outside it none');
reset role;

select * from finish();
rollback;
