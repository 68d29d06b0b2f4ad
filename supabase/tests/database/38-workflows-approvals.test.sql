-- Workflow service, issue 31 part 3: approval blocks' SQL — opening an approval (refusals, once per
-- block instance), e-mails with fresh tokens kept only as digests, answers through links (wrong
-- e-mail, single use, quorum 2 of 3, rejection), the timeout's default outcomes on a moved clock,
-- reminders, the resume API (another workspace's run 404, a run not waiting 409), waking a parked run,
-- the run detail's pause, and that no API role reads the tables or calls the functions.
begin;
select plan(46);

insert into auth.users (id, email, aud, role) values
  ('b1000000-0000-4000-8000-000000000001', 'owner@approvals.test', 'authenticated', 'authenticated'),
  ('b1000000-0000-4000-8000-000000000002', 'stranger@approvals.test', 'authenticated', 'authenticated'),
  ('b1000000-0000-4000-8000-000000000003', 'Editor@Approvals.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create temporary table keys (label text primary key, key text);
grant select, insert on keys to authenticated;
create function pg_temp.key(p_label text) returns text language sql as $$ select key from keys where label = p_label $$;
select pg_temp.act_as('b1000000-0000-4000-8000-000000000001');
select public.create_workspace('Approvals');
insert into keys select 'owner', key from public.create_api_key('Owner key');
select pg_temp.act_as('b1000000-0000-4000-8000-000000000002');
select public.create_workspace('Elsewhere');
insert into keys select 'stranger', key from public.create_api_key('Stranger key');
reset role;
create temporary table ws as select w.id, w.billing_account_id from public.workspaces w
  join public.workspace_members m on m.workspace_id = w.id and m.user_id = 'b1000000-0000-4000-8000-000000000001';
insert into public.workspace_members (workspace_id, user_id, role) select id, 'b1000000-0000-4000-8000-000000000003', 'editor' from ws;
select set_config('request.jwt.claims', '{"role": "service_role"}', true);
insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute, logs_per_minute) select billing_account_id, 1000, 1000, 1000 from ws;
insert into public.workflows (id, workspace_id, name, state) select 'b1100000-0000-4000-8000-000000000001', id, 'Approved',
  '{"blocks": {"hook": {"id": "hook", "type": "generic_webhook", "name": "Hook", "config": {}}, "ok": {"id": "ok", "type": "approval", "name": "Sign off", "config": {"approvers": ["a@x.test"], "message": "Ship?"}}}, "edges": [{"id": "e1", "source": "hook", "target": "ok"}]}'
from ws;
select public.deploy_workflow('b1100000-0000-4000-8000-000000000001');

create temporary table runs (label text primary key, id uuid);
create function pg_temp.run(p_label text) returns uuid language sql as $$ select id from runs where label = p_label $$;
-- Admits an async run and claims it (attempt 1).
create function pg_temp.started(p_label text) returns uuid language plpgsql as $$
begin
  insert into runs values (p_label, (public.admit_workflow_run('b1100000-0000-4000-8000-000000000001', 'webhook', 'async') ->> 'executionId')::uuid);
  perform public.claim_workflow_runs(10, 60);
  return pg_temp.run(p_label);
end;
$$;
create function pg_temp.open(p_label text, p_request jsonb, p_key text default 'ok') returns jsonb language sql as $$
  select public.open_workflow_approval(pg_temp.run(p_label), 1, p_key, '{"id": "ok", "name": "Sign off"}', p_request);
$$;
create function pg_temp.approval(p_label text) returns workflows_private.run_approvals language sql as $$
  select * from workflows_private.run_approvals where execution_id = pg_temp.run(p_label);
$$;
-- Claims the approval e-mails queued so far, keeping the newest token of each e-mail; answers how many went out.
create temporary table tokens (email text primary key, token text);
create function pg_temp.mail() returns integer language plpgsql as $$
declare
  v_claimed jsonb := public.claim_workflow_approval_mail(100, 60);
begin
  insert into tokens select distinct on (r ->> 'email') r ->> 'email', r ->> 'token' from jsonb_array_elements(v_claimed) m, jsonb_array_elements(m -> 'recipients') r
  on conflict (email) do update set token = excluded.token;
  return (select count(*)::int from jsonb_array_elements(v_claimed) m, jsonb_array_elements(m -> 'recipients') r);
end;
$$;
create function pg_temp.token(p_email text) returns text language sql as $$ select token from tokens where email = p_email $$;
-- Parks a run as the worker does after opening its approval.
create function pg_temp.park(p_label text) returns jsonb language sql as $$
  select public.park_workflow_run(pg_temp.run(p_label), 1, (pg_temp.approval(p_label)).expires_at);
$$;
select pgmq.purge_queue('workflow_approval_mail');

-- Opening ------------------------------------------------------------------------------------------

select pg_temp.started('refused');
select is(pg_temp.open('refused', '{"approvers": ["a@x.test", "b@x.test"], "quorum": 3, "message": "m"}'),
  '{"refused": "quorum 3 is more than the 2 approvers"}'::jsonb, 'A quorum above the number of approvers is refused');
select is(pg_temp.open('refused', '{"approvers": ["not an address"], "message": "m"}') ->> 'refused',
  'every approver must be an e-mail address (at most 254 characters)', 'as is an approver that is not an e-mail address');
select is(pg_temp.open('refused', '{"approverRole": "owner", "message": "m"}') ->> 'decided', 'false', 'A role names the workspace''s members with it');
select is((select array_agg(email order by email) from workflows_private.run_approval_answers where approval_id = (pg_temp.approval('refused')).id),
  array['owner@approvals.test'], 'owner and above: the owner alone');
select is(public.open_workflow_approval(pg_temp.run('refused'), 2, 'other', '{"id": "ok", "name": "x"}', '{"approvers": ["a@x.test"], "message": "m"}'),
  '{"alive": false}'::jsonb, 'An attempt that does not hold the run opens nothing');

select pg_temp.started('quorum');
select is(pg_temp.open('quorum', '{"approvers": ["A@x.test", "b@x.test", "c@x.test", "a@x.test"], "quorum": 2, "message": "Ship <v1>?", "timeoutMinutes": 60, "fields": [{"name": "ticket", "label": "Ticket", "type": "text", "required": true}]}'),
  jsonb_build_object('decided', false, 'expiresAt', now() + interval '60 minutes'), 'An approval opens, waiting until its timeout');
select is((select count(*)::int from workflows_private.run_approval_answers where approval_id = (pg_temp.approval('quorum')).id), 3, 'with each approver once, e-mails compared without case');
select is(pg_temp.open('quorum', '{"approvers": ["z@x.test"], "message": "other"}') ->> 'expiresAt', to_jsonb(now() + interval '60 minutes') #>> '{}',
  'Opening the same block instance again finds it');
select is((select count(*)::int from workflows_private.run_approvals where execution_id = pg_temp.run('quorum')), 1, 'and opens nothing new');
select is(pg_temp.park('quorum') ->> 'parked', 'true', 'The run parks until the timeout');

-- E-mails ------------------------------------------------------------------------------------------

select is(pg_temp.mail(), 4, 'Each approver of each open approval gets an e-mail with a token');
select ok((select bool_and(length(token) = 43) from tokens), 'of 256 bits (43 base64url characters)');
select is((select count(*)::int from workflows_private.run_approval_answers a join tokens t on a.token_digest = sha256(convert_to(t.token, 'UTF8'))), 4,
  'stored only as SHA-256 digests');
select is((select count(*)::int from workflows_private.run_approval_answers a, tokens t where a::text like '%' || t.token || '%'), 0, 'the token itself appears nowhere in the table');
select is(pg_temp.mail(), 0, 'A claimed e-mail is not claimed again while it is being sent');

-- Answers ------------------------------------------------------------------------------------------

select is(public.respond_workflow_approval('no such token', 'a@x.test', 'approve'), '{"outcome": "unknown_token"}'::jsonb, 'An unknown token answers nothing');
select is(public.respond_workflow_approval(pg_temp.token('a@x.test'), 'b@x.test', 'approve', null, '{"ticket": "T-1"}'), '{"outcome": "email_mismatch"}'::jsonb,
  'Another approver''s e-mail is refused');
select is(public.respond_workflow_approval(pg_temp.token('a@x.test'), 'a@x.test', 'approve', null, '{}') ->> 'problem', 'field "ticket" is required', 'A required field is required');
select is(public.respond_workflow_approval(pg_temp.token('a@x.test'), 'a@x.test', 'approve', null, '{"ticket": 5}') ->> 'problem', 'field "ticket" takes text of at most 2000 characters', 'and typed');
select is(public.respond_workflow_approval(pg_temp.token('a@x.test'), ' A@X.test ', 'approve', 'fine', '{"ticket": "T-1"}'),
  '{"outcome": "recorded", "decision": null}'::jsonb, 'The approver''s answer is recorded (case and spaces ignored); 1 of 2 decides nothing');
select is(public.respond_workflow_approval(pg_temp.token('a@x.test'), 'a@x.test', 'reject', null, '{"ticket": "T-1"}'), '{"outcome": "used"}'::jsonb, 'A link answers once');
select is((pg_temp.approval('quorum')).decision, null, 'The approval still waits');
select is(public.respond_workflow_approval(pg_temp.token('b@x.test'), 'b@x.test', 'approve', null, '{"ticket": "T-2"}'),
  '{"outcome": "recorded", "decision": "approved"}'::jsonb, 'The second approval reaches the quorum of 2 of 3');
select is(((pg_temp.approval('quorum')).decision, (pg_temp.approval('quorum')).decided_by)::text, '(approved,quorum)', 'and decides it');
select is((select (parked_until, lease_expires_at <= now()) from public.workflow_executions where id = pg_temp.run('quorum'))::text, '(,t)', 'The parked run is woken: no longer parked, its lease over');
select ok((select vt <= clock_timestamp() from pgmq.q_workflow_runs where message ->> 'executionId' = pg_temp.run('quorum')::text), 'and its queue message visible now');
select is(public.respond_workflow_approval(pg_temp.token('c@x.test'), 'c@x.test', 'approve', null, '{"ticket": "T-3"}'), '{"outcome": "closed"}'::jsonb, 'A decided approval takes no more answers');
select is((select jsonb_path_query_array(workflows_private.approval_output(pg_temp.approval('quorum')), '$.approvals[*].email')), '["a@x.test", "b@x.test"]'::jsonb,
  'Its output lists the approvals in order');
select is(pg_temp.open('quorum', '{}') -> 'output' -> 'approvals' -> 0 -> 'fields', '{"ticket": "T-1"}'::jsonb, 'with their fields, which the resumed block gets');

select pg_temp.started('rejected');
select pg_temp.open('rejected', '{"approvers": ["a@x.test", "b@x.test", "c@x.test"], "quorum": 2, "message": "m"}');
select pg_temp.mail();
select is(public.respond_workflow_approval(pg_temp.token('a@x.test'), 'a@x.test', 'reject') ->> 'decision', null, 'One rejection of 3 leaves the quorum of 2 in reach');
select is(public.respond_workflow_approval(pg_temp.token('b@x.test'), 'b@x.test', 'reject') ->> 'decision', 'rejected', 'a second puts it out of reach: rejected');
select is(pg_temp.park('rejected') ->> 'resumeAt', to_jsonb(now()) #>> '{}', 'A run decided before its worker parked it parks for no time');

-- The clock ----------------------------------------------------------------------------------------

select pg_temp.started('approve'), pg_temp.started('reject'), pg_temp.started('fail');
select pg_temp.open('approve', '{"approvers": ["a@x.test"], "message": "m", "timeoutMinutes": 10, "defaultOutcome": "approve"}');
select pg_temp.open('reject', '{"approvers": ["a@x.test"], "message": "m", "timeoutMinutes": 10, "reminderMinutesBefore": [5, 2, 20]}');
select pg_temp.open('fail', '{"approvers": ["a@x.test"], "message": "m", "timeoutMinutes": 10, "defaultOutcome": "fail"}');
select pg_temp.mail();
select is(public.expire_workflow_approvals(now() + interval '9 minutes'), 0, 'Nothing expires before its timeout');
select is(public.remind_workflow_approvals(now() + interval '4 minutes'), 0, 'nor is reminded early');
select is(public.remind_workflow_approvals(now() + interval '5 minutes'), 1, 'A reminder is due 5 minutes before the timeout (20 is past the start, dropped)');
select is((pg_temp.approval('reject')).next_reminder_at, now() + interval '8 minutes', 'and the next 2 minutes before');
select is(pg_temp.mail(), 1, 'it e-mails the approver a fresh link');
select is(public.expire_workflow_approvals(now() + interval '10 minutes'), 3, 'At the timeout, waiting approvals are decided');
select is(array[(pg_temp.approval('approve')).decision, (pg_temp.approval('reject')).decision, (pg_temp.approval('fail')).decision],
  array['approved', 'rejected', 'failed'], 'by each one''s default outcome');
select is((pg_temp.approval('reject')).decided_by, 'timeout', 'as the timeout''s decision');

-- The resume API -----------------------------------------------------------------------------------

select pg_temp.started('api');
select pg_temp.open('api', '{"approvers": ["a@x.test", "b@x.test"], "quorum": 2, "message": "m"}');
select is(public.resume_workflow_run(pg_temp.key('stranger'), pg_temp.run('api'), null, null, '{"decision": "approve"}') ->> 'status', '404',
  'Another workspace''s key resumes nothing: 404');
select is(public.resume_workflow_run(pg_temp.key('owner'), pg_temp.run('quorum'), null, null, '{"decision": "approve"}') ->> 'code', 'NOT_PAUSED', 'A run not waiting is 409 NOT_PAUSED');
select is(public.resume_workflow_run(pg_temp.key('owner'), pg_temp.run('api'), null, null, '{"decision": "maybe"}') ->> 'status', '400', 'A decision that is not one is 400 INVALID_BODY');
select is(public.resume_workflow_run(pg_temp.key('owner'), pg_temp.run('api'), null, 'ok', '{"decision": "reject", "comment": "no"}') -> 'body',
  jsonb_build_object('data', jsonb_build_object('runId', pg_temp.run('api'), 'contextId', 'ok', 'decision', 'rejected')), 'The workspace''s key decides at once');

-- Access -------------------------------------------------------------------------------------------

select pg_temp.act_as('b1000000-0000-4000-8000-000000000001');
select throws_ok($$select * from workflows_private.run_approvals$$, '42501', null, 'No signed-in user reads approvals');
select throws_ok($$select public.respond_workflow_approval('t', 'a@x.test', 'approve')$$, '42501', null, 'nor answers them directly (only the page''s service role does)');
reset role;

select * from finish();
rollback;
