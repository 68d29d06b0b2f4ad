-- Workflow service, issue 34 item 2: run retention per plan on a controllable clock. The plan's
-- default (Free 7, Pro 30, Team 90, Enterprise 365 days) and an Enterprise workspace's own figure
-- decide which ended runs expire_workflow_history removes, with what hangs off them; it leaves
-- tombstones, which the readers turn into 410 RUN_EXPIRED. The override's policies, allowed and
-- denied.
begin;
select plan(45);

insert into auth.users (id, email, aud, role) values
  ('b4000000-0000-4000-8000-000000000001', 'owner@retention.test', 'authenticated', 'authenticated'),
  ('b4000000-0000-4000-8000-000000000002', 'viewer@retention.test', 'authenticated', 'authenticated'),
  ('b4000000-0000-4000-8000-000000000003', 'stranger@retention.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create temporary table keys (label text primary key, key text);
grant select, insert on keys to authenticated;
create function pg_temp.key(p_label text) returns text language sql as $$ select key from keys where label = p_label $$;

-- One account and workspace per plan, plus a second Enterprise workspace with its own figure.
insert into public.billing_accounts (id, owner_id, name, plan) values
  ('b4100000-0000-4000-8000-00000000000f', 'b4000000-0000-4000-8000-000000000001', 'Free', 'free'),
  ('b4100000-0000-4000-8000-00000000000a', 'b4000000-0000-4000-8000-000000000001', 'Pro', 'pro'),
  ('b4100000-0000-4000-8000-00000000000b', 'b4000000-0000-4000-8000-000000000001', 'Team', 'team'),
  ('b4100000-0000-4000-8000-00000000000e', 'b4000000-0000-4000-8000-000000000001', 'Enterprise', 'enterprise');
select pg_temp.act_as('b4000000-0000-4000-8000-000000000001');
select public.create_workspace('free', 'b4100000-0000-4000-8000-00000000000f');
select public.create_workspace('pro', 'b4100000-0000-4000-8000-00000000000a');
select public.create_workspace('team', 'b4100000-0000-4000-8000-00000000000b');
select public.create_workspace('enterprise', 'b4100000-0000-4000-8000-00000000000e');
select public.create_workspace('enterprise-10', 'b4100000-0000-4000-8000-00000000000e');
insert into keys select 'owner', key from public.create_api_key('Owner key');
select pg_temp.act_as('b4000000-0000-4000-8000-000000000003');
select public.create_workspace('Elsewhere');
insert into keys select 'stranger', key from public.create_api_key('Stranger key');
reset role;
create temporary table ws as
  select w.name, w.id from public.workspaces w join public.workspace_members m on m.workspace_id = w.id
  where m.user_id = 'b4000000-0000-4000-8000-000000000001';
create function pg_temp.ws(p_name text) returns uuid language sql as $$ select id from ws where name = p_name $$;
grant select on ws to authenticated;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'b4000000-0000-4000-8000-000000000002', 'viewer' from ws;

-- The override: admins of Enterprise workspaces only --------------------------------------------------

select is((select jsonb_object_agg(plan, log_retention_days) from public.billing_plans),
  '{"free": 7, "pro": 30, "team": 90, "enterprise": 365}'::jsonb, 'Each plan keeps runs as decision 15 sets: Free 7, Pro 30, Team 90, Enterprise 365 days');

select pg_temp.act_as('b4000000-0000-4000-8000-000000000001');
select lives_ok($$insert into public.workspace_log_retention (workspace_id, log_retention_days) values (pg_temp.ws('enterprise-10'), 10)$$,
  'An admin of an Enterprise workspace sets its own retention');
select throws_ok($$insert into public.workspace_log_retention (workspace_id, log_retention_days) values (pg_temp.ws('pro'), 60)$$, '23514',
  'A workspace sets its own log retention on the Enterprise plan only; this workspace is on Pro, which keeps runs 30 days',
  'An admin of a Pro workspace is refused, told the plan and the retention that applies');
select throws_ok($$insert into public.workspace_log_retention (workspace_id, log_retention_days) values (pg_temp.ws('enterprise'), 0)$$, '23514', null,
  'A retention below a day is refused');
select throws_ok($$insert into public.workspace_log_retention (workspace_id, log_retention_days) values (pg_temp.ws('enterprise'), 3651)$$, '23514', null,
  'and one above ten years');
select pg_temp.act_as('b4000000-0000-4000-8000-000000000002');
select is((select log_retention_days from public.workspace_log_retention where workspace_id = pg_temp.ws('enterprise-10')), 10,
  'A viewer reads the workspace''s retention');
select throws_ok($$insert into public.workspace_log_retention (workspace_id, log_retention_days) values (pg_temp.ws('enterprise'), 30)$$, '42501', null,
  'A viewer cannot set it');
select is_empty($$update public.workspace_log_retention set log_retention_days = 400 returning 1$$, 'nor change it');
select is_empty($$delete from public.workspace_log_retention returning 1$$, 'nor remove it');
select pg_temp.act_as('b4000000-0000-4000-8000-000000000003');
select is_empty($$select 1 from public.workspace_log_retention$$, 'Someone outside the workspace does not see it');
select throws_ok($$insert into public.workspace_log_retention (workspace_id, log_retention_days) values (pg_temp.ws('enterprise'), 30)$$, '42501', null,
  'nor set one');
select pg_temp.act_as('b4000000-0000-4000-8000-000000000001');
select isnt_empty($$update public.workspace_log_retention set log_retention_days = 12 where workspace_id = pg_temp.ws('enterprise-10') returning 1$$,
  'An admin changes it');
select is((select log_retention_days from public.workspace_log_retention where workspace_id = pg_temp.ws('enterprise-10')), 12, 'and reads the changed figure');
select isnt_empty($$update public.workspace_log_retention set log_retention_days = 10 where workspace_id = pg_temp.ws('enterprise-10') returning 1$$,
  'An admin changes it back');
insert into public.workspace_log_retention (workspace_id, log_retention_days) values (pg_temp.ws('enterprise'), 20);
select isnt_empty($$delete from public.workspace_log_retention where workspace_id = pg_temp.ws('enterprise') returning 1$$, 'An admin removes it');
reset role;

select is(workflows_private.workspace_retention_days(pg_temp.ws('enterprise')), 365, 'Without an override an Enterprise workspace keeps its plan''s 365 days');
select is(workflows_private.workspace_retention_days(pg_temp.ws('enterprise-10')), 10, 'with one, its own figure');

-- Runs around each boundary ----------------------------------------------------------------------------

create temporary table runs (label text primary key, id uuid);
grant select on runs to authenticated;
create function pg_temp.run(p_label text) returns uuid language sql as $$ select id from runs where label = p_label $$;
insert into public.workflows (workspace_id, name, state) select id, 'Wf ' || name, '{"blocks": {}, "edges": []}' from ws;
/** A run of workspace p_ws that started p_age ago (at the fixed clock below), ended unless p_running. */
create function pg_temp.make_run(p_label text, p_ws text, p_age interval, p_running boolean default false) returns uuid language sql as $$
  insert into public.workflow_executions (workspace_id, workflow_id, billing_account_id, trigger, mode, status, created_at, started_at, ended_at)
  select w.workspace_id, w.id, ws.billing_account_id, 'api', 'async', case when p_running then 'running' else 'completed' end::public.workflow_run_status,
    timestamptz '2026-06-01 12:00Z' - p_age, timestamptz '2026-06-01 12:00Z' - p_age, case when not p_running then timestamptz '2026-06-01 12:00Z' - p_age end
  from public.workflows w join public.workspaces ws on ws.id = w.workspace_id where w.workspace_id = pg_temp.ws(p_ws)
  returning id;
$$;
insert into runs select p.ws || (case when p.kept then '-kept' else '-gone' end), pg_temp.make_run(p.ws || '', p.ws, make_interval(days => p.days))
from (values ('free', 6, true), ('free', 8, false), ('pro', 29, true), ('pro', 31, false), ('team', 89, true), ('team', 91, false),
  ('enterprise', 364, true), ('enterprise', 366, false), ('enterprise-10', 9, true), ('enterprise-10', 11, false)) as p (ws, days, kept);
insert into runs values ('free-running', pg_temp.make_run('x', 'free', interval '30 days', true));

-- What hangs off the Free run that expires.
insert into workflows_private.run_checkpoints (execution_id, kind, key, attempt, checkpoint)
  values (pg_temp.run('free-gone'), 'completed', 'api', 1, '{}'), (pg_temp.run('free-kept'), 'completed', 'api', 1, '{}');
insert into workflows_private.idempotency_keys (workflow_id, key, execution_id, created_at)
  select e.workflow_id, 'k-' || r.label, e.id, e.created_at from runs r join public.workflow_executions e on e.id = r.id where r.label in ('free-gone', 'free-kept');
insert into workflows_private.execution_models (execution_id, model, workspace_id, started_at)
  select e.id, 'gpt-4o', e.workspace_id, e.started_at from public.workflow_executions e where e.id = pg_temp.run('free-gone');
insert into workflows_private.run_approvals (execution_id, workspace_id, block_key, block_id, block_name, message, quorum, default_outcome, requested_at, expires_at)
  values (pg_temp.run('free-gone'), pg_temp.ws('free'), 'ok', 'ok', 'OK', 'Approve?', 1, 'approve', '2026-05-24', '2026-05-25');
insert into workflows_private.run_approval_answers (approval_id, email, answer)
  select id, 'a@retention.test', 'approve' from workflows_private.run_approvals where execution_id = pg_temp.run('free-gone');
insert into public.workflow_alert_events (source, workspace_id, workflow_id, channel, email_to, subject, message, fired_at)
  select 'schedule_paused', pg_temp.ws('free'), e.workflow_id, 'email', '{a@retention.test}', s, s, timestamptz '2026-06-01 12:00Z' - d
  from public.workflow_executions e, (values ('old', interval '8 days'), ('recent', interval '6 days')) as v (s, d) where e.id = pg_temp.run('free-kept');
insert into storage.objects (bucket_id, name)
  select 'workflow-files', e.workspace_id || '/' || e.workflow_id || '/' || e.id || '/file.txt'
  from public.workflow_executions e where e.id in (pg_temp.run('free-gone'), pg_temp.run('free-kept'));

-- A batch is bounded.
select is(workflows_private.expire_workflow_history(timestamptz '2026-06-01 12:00Z', 1) -> 'runs', '1'::jsonb, 'One call expires at most the batch it is given');
select is(workflows_private.expire_workflow_history(timestamptz '2026-06-01 12:00Z', 1) -> 'more', 'true'::jsonb, 'and says when a full batch was taken');
select is(workflows_private.expire_workflow_history(timestamptz '2026-06-01 12:00Z') ->> 'runs', '3', 'The next call takes the rest');
select is(workflows_private.expire_workflow_history(timestamptz '2026-06-01 12:00Z') -> 'runs', '0'::jsonb, 'and a call after that finds nothing');

select is((select array_agg(r.label order by r.label) from runs r join public.workflow_executions e on e.id = r.id),
  array['enterprise-10-kept', 'enterprise-kept', 'free-kept', 'free-running', 'pro-kept', 'team-kept'],
  'Each plan keeps a run on day N-1 and expires it on day N+1 (Free 7, Pro 30, Team 90, Enterprise 365, an Enterprise override of 10), and a run still in flight stays');
select is((select array_agg(r.label || ':' || t.retention_days order by r.label) from runs r join workflows_private.expired_runs t on t.id = r.id),
  array['enterprise-10-gone:10', 'enterprise-gone:365', 'free-gone:7', 'pro-gone:30', 'team-gone:90'],
  'Each expired run leaves a tombstone with the retention that applied');
select is((select expired_at from workflows_private.expired_runs where id = pg_temp.run('free-gone')), timestamptz '2026-06-01 12:00Z',
  'dated by the clock the expiry ran on');
select is((select array_agg(distinct execution_id) from workflows_private.run_checkpoints where execution_id in (pg_temp.run('free-gone'), pg_temp.run('free-kept'))),
  array[pg_temp.run('free-kept')], 'The expired run''s checkpoints go with it');
select is((select array_agg(key) from workflows_private.idempotency_keys where key like 'k-free-%'), array['k-free-kept'], 'and its idempotency keys');
select is_empty(format('select 1 from workflows_private.execution_models where execution_id = %L', pg_temp.run('free-gone')), 'and its model usage rows');
select is_empty(format('select 1 from workflows_private.run_approvals where execution_id = %L', pg_temp.run('free-gone')), 'and its approvals');
select is_empty($$select 1 from workflows_private.run_approval_answers where email = 'a@retention.test'$$, 'with their answers');
select is((select array_agg(subject) from public.workflow_alert_events where workspace_id = pg_temp.ws('free')), array['recent'],
  'Alert events older than the workspace''s retention go too');
select ok((select bool_or(m.message -> 'executionIds' ? pg_temp.run('free-gone')::text and m.message ->> 'workspaceId' = pg_temp.ws('free')::text)
  from pgmq.read('workspace_file_sweeps', 0, 100) m), 'Its files are queued for the file sweeper');
select is(public.expired_run_file_names(pg_temp.ws('free'), array[pg_temp.run('free-gone'), pg_temp.run('free-kept')]),
  array[(select name from storage.objects where name like '%' || pg_temp.run('free-gone') || '%')],
  'The sweeper is given the expired run''s files, never a live run''s even when named');
set local role authenticated;
select throws_ok($$select public.expired_run_file_names(pg_temp.ws('free'), '{}')$$, '42501', null, 'Only the service role lists them');
reset role;

-- Readers answer "expired" -----------------------------------------------------------------------------

select is((select (a ->> 'status') || ' ' || (a ->> 'code') || ' ' || (a ->> 'expiredAt')
  from public.workflow_run_detail(pg_temp.key('owner'), pg_temp.run('free-gone')) a), '410 RUN_EXPIRED 2026-06-01T12:00:00.000Z',
  'The runs API answers 410 RUN_EXPIRED with the date for an expired run');
select is(public.workflow_run_detail(pg_temp.key('owner'), pg_temp.run('free-gone')) ->> 'error',
  format('Run %s expired on 2026-06-01: its workspace keeps runs for 7 days', pg_temp.run('free-gone')), 'saying when and why');
select is(public.workflow_run_detail(pg_temp.key('stranger'), pg_temp.run('free-gone')) ->> 'status', '404',
  'A key that could not read the run learns nothing: 404');
select is(public.workflow_run_detail(pg_temp.key('owner'), pg_temp.run('free-gone'), gen_random_uuid()) ->> 'status', '404',
  'nor does asking under another workflow');
select is(public.workflow_run_detail(pg_temp.key('owner'), gen_random_uuid()) ->> 'code', 'NOT_FOUND', 'A run that never existed stays 404');
select is(public.workflow_log_detail(pg_temp.key('owner'), pg_temp.run('pro-gone')) ->> 'code', 'RUN_EXPIRED', 'The log detail answers RUN_EXPIRED');
select is(public.workflow_execution_detail(pg_temp.key('owner'), pg_temp.run('pro-gone')) ->> 'code', 'RUN_EXPIRED', 'and so does the execution detail');
select is(public.workflow_job_status(pg_temp.run('team-gone'), p_user_id => 'b4000000-0000-4000-8000-000000000002') ->> 'code', 'RUN_EXPIRED',
  'and the job status, to a member signed in');
select is(public.workflow_run_cancel(pg_temp.key('owner'), pg_temp.run('team-gone')) ->> 'code', 'RUN_EXPIRED', 'and cancelling it');
select is(public.admit_workflow_run(p_trigger => 'api', p_mode => 'sync', p_api_key => pg_temp.key('owner'), p_rerun_of => pg_temp.run('free-gone')) ->> 'code',
  'RUN_EXPIRED', 'and re-running it: the input went with it');

-- Tombstones are bounded too ---------------------------------------------------------------------------

select is(workflows_private.expire_workflow_history(timestamptz '2027-06-03 12:00Z') -> 'tombstones', '5'::jsonb,
  'Tombstones go 365 days after their run expired');
select is(public.workflow_run_detail(pg_temp.key('owner'), pg_temp.run('free-gone')) ->> 'status', '404', 'after which the run answers 404');

select * from finish();
rollback;
