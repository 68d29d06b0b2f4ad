-- Workflow service: traces out. A run's trace context (joined or its own), trace exporters under
-- row-level security with write-only headers, and the export queue's outbox, claim and record.
begin;
select plan(27);

insert into auth.users (id, email, aud, role) values
  ('ae100000-0000-4000-8000-000000000001', 'owner@trace.test', 'authenticated', 'authenticated'),
  ('ae100000-0000-4000-8000-000000000002', 'editor@trace.test', 'authenticated', 'authenticated'),
  ('ae100000-0000-4000-8000-000000000003', 'viewer@trace.test', 'authenticated', 'authenticated'),
  ('ae100000-0000-4000-8000-000000000004', 'stranger@trace.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create function pg_temp.as_service() returns void language sql as $$
  select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true);
$$;

select pg_temp.act_as('ae100000-0000-4000-8000-000000000001');
select public.create_workspace('Traced');
reset role;
create temporary table ws as select w.id from public.workspaces w
  join public.workspace_members m on m.workspace_id = w.id and m.user_id = 'ae100000-0000-4000-8000-000000000001';
grant select on ws to public;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'ae100000-0000-4000-8000-000000000002', 'editor' from ws;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'ae100000-0000-4000-8000-000000000003', 'viewer' from ws;
insert into public.workflows (id, workspace_id, name, state) select 'ae200000-0000-4000-8000-000000000001', id, 'Traced flow',
  '{"blocks": {"hook": {"id": "hook", "type": "generic_webhook", "name": "Hook", "config": {}}, "done": {"id": "done", "type": "response", "name": "Done", "config": {"body": "ok"}}}, "edges": [{"id": "e1", "source": "hook", "target": "done"}]}'
from ws;
select pg_temp.as_service();
select public.deploy_workflow('ae200000-0000-4000-8000-000000000001');
insert into public.billing_account_overrides (billing_account_id, sync_per_minute) select billing_account_id, 1000 from public.workspaces where id = (select id from ws);
reset role;

-- Trace context ----------------------------------------------------------------------------------------

select pg_temp.as_service();
create temporary table answers (label text primary key, answer jsonb);
grant all on answers to public;
insert into answers values
  ('own', public.admit_workflow_run('ae200000-0000-4000-8000-000000000001', 'webhook', 'sync')),
  ('joined', public.admit_workflow_run('ae200000-0000-4000-8000-000000000001', 'webhook', 'sync', p_trace =>
    '{"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "parentSpanId": "00f067aa0ba902b7", "traceState": "vendor=1"}'));
reset role;
select ok((select answer -> 'trace' ->> 'traceId' ~ '^[0-9a-f]{32}$' and answer -> 'trace' ->> 'spanId' ~ '^[0-9a-f]{16}$'
  and not (answer -> 'trace' ? 'parentSpanId') from answers where label = 'own'),
  'A run admitted without a trace context starts a trace of its own, and admit hands its ids to the executor');
select is((select (answer -> 'trace') - 'spanId'::text from answers where label = 'joined'),
  '{"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "parentSpanId": "00f067aa0ba902b7", "traceState": "vendor=1"}'::jsonb,
  'A run admitted with the caller''s trace context joins that trace under the caller''s span');
select isnt((select answer -> 'trace' ->> 'spanId' from answers where label = 'joined'), '00f067aa0ba902b7',
  'and its root span is a span of its own');
select is((select (e.trace_id, e.trace_parent_span_id, e.trace_state)::text from public.workflow_executions e
  where e.id = (select (answer ->> 'executionId')::uuid from answers where label = 'joined')),
  '(4bf92f3577b34da6a3ce929d0e0e4736,00f067aa0ba902b7,vendor=1)', 'The run records the trace it joined');
select is((select workflows_private.run_detail(e) -> 'trace' from public.workflow_executions e
  where e.id = (select (answer ->> 'executionId')::uuid from answers where label = 'joined')),
  jsonb_build_object('traceId', '4bf92f3577b34da6a3ce929d0e0e4736', 'parentSpanId', '00f067aa0ba902b7',
    'spanId', (select answer -> 'trace' ->> 'spanId' from answers where label = 'joined')),
  'The runs API shows the run''s trace ids');
select throws_ok($$update public.workflow_executions set trace_id = repeat('0', 32) where id = (select (answer ->> 'executionId')::uuid from answers where label = 'own')$$,
  '23514', null, 'An all-zero trace id is refused');

-- Exporters under row-level security -----------------------------------------------------------------------

select pg_temp.act_as('ae100000-0000-4000-8000-000000000002');
select throws_ok($$insert into public.workflow_trace_exporters (workspace_id, endpoint) select id, 'https://otel.example.com/v1/traces' from ws$$,
  '42501', null, 'An editor cannot add the workspace''s trace exporter');
select pg_temp.act_as('ae100000-0000-4000-8000-000000000001');
select lives_ok($$insert into public.workflow_trace_exporters (workspace_id, endpoint, headers)
  select id, 'https://otel.example.com/v1/traces', '{"x-honeycomb-team": "hc-secret-key-123"}' from ws$$,
  'An admin can add the workspace''s trace exporter with headers');
select is((select (headers, header_names)::text from public.workflow_trace_exporters), '(,{x-honeycomb-team})',
  'The row never holds the headers, only their names');
reset role;
select is((select extensions.pgp_sym_decrypt(h.headers_encrypted, workflows_private.environment_key())::jsonb from workflows_private.trace_exporter_headers h),
  '{"x-honeycomb-team": "hc-secret-key-123"}'::jsonb, 'The headers are stored encrypted with the environment key');
select pg_temp.act_as('ae100000-0000-4000-8000-000000000001');
select throws_ok($$update public.workflow_trace_exporters set endpoint = 'ftp://nope'$$, '23514', null, 'An endpoint must be an http(s) URL');
select throws_ok($$update public.workflow_trace_exporters set headers = '{"bad header": "x"}'$$, '23514', null, 'Header names must be HTTP header names');
select throws_ok($$update public.workflow_trace_exporters set headers = '{"a": 1}'$$, '23514', null, 'Header values must be text');
update public.workflow_trace_exporters set exported_spans = 99, dropped_spans = 99;
select is((select (exported_spans, dropped_spans)::text from public.workflow_trace_exporters), '(0,0)', 'The counters are the worker''s: an admin cannot set them');

select pg_temp.act_as('ae100000-0000-4000-8000-000000000003');
select is((select count(*)::int from public.workflow_trace_exporters), 1, 'A viewer reads the workspace''s exporter');
update public.workflow_trace_exporters set enabled = false;
delete from public.workflow_trace_exporters;
select pg_temp.act_as('ae100000-0000-4000-8000-000000000002');
update public.workflow_trace_exporters set enabled = false;
delete from public.workflow_trace_exporters;
reset role;
select is((select (count(*), bool_and(enabled))::text from public.workflow_trace_exporters), '(1,t)', 'Neither a viewer nor an editor can change or delete it');
select pg_temp.act_as('ae100000-0000-4000-8000-000000000004');
select is((select count(*)::int from public.workflow_trace_exporters), 0, 'A stranger cannot read it');
update public.workflow_trace_exporters set enabled = false;
delete from public.workflow_trace_exporters;
reset role;
select is((select (count(*), bool_and(enabled))::text from public.workflow_trace_exporters), '(1,t)', 'nor change or delete it');
select pg_temp.act_as('ae100000-0000-4000-8000-000000000001');
select lives_ok($$update public.workflow_trace_exporters set enabled = false$$, 'An admin can change it');
update public.workflow_trace_exporters set enabled = true;
select pg_temp.act_as('ae100000-0000-4000-8000-000000000003');
select throws_ok($$select * from workflows_private.trace_exporter_headers$$, '42501', null, 'No API role reads the stored headers');

-- The export queue ---------------------------------------------------------------------------------------------

select pg_temp.as_service();
select public.finish_workflow_run((answer ->> 'executionId')::uuid, 'completed', '{}', null,
  '[{"id": "start", "blockId": "start", "name": "Start", "type": "api_trigger", "status": "success", "startedAt": "2026-01-01T00:00:00Z", "endedAt": "2026-01-01T00:00:00.010Z", "durationMs": 10}]')
from answers where label = 'joined';
select is((select jsonb_path_query_array(public.claim_trace_exports(10, 1), '$.exports[*] ? (@.attempt == 1)') -> 0
    -> 'run' ->> 'executionId'), (select answer ->> 'executionId' from answers where label = 'joined'),
  'A run that ends in an exporting workspace is queued for export');
reset role;
create temporary table claimed as select m.msg_id, m.message from pgmq.q_workflow_trace_exports m;
grant all on claimed to public;
reset role;
select is((select count(*)::int from claimed), 1, 'One message per run');
update pgmq.q_workflow_trace_exports set vt = now();
select pg_temp.as_service();
select is((select e -> 'headers' from jsonb_array_elements(public.claim_trace_exports(10, 60) -> 'exports') e),
  '{"x-honeycomb-team": "hc-secret-key-123"}'::jsonb, 'The claim hands the worker the exporter''s headers, decrypted');
select public.record_trace_exports(jsonb_build_object(
  'messages', jsonb_build_array(jsonb_build_object('messageId', (select msg_id from claimed), 'outcome', 'retry', 'retryInSeconds', 30)),
  'exporters', jsonb_build_array(jsonb_build_object('workspaceId', (select id from ws), 'droppedSpans', 0, 'error', 'HTTP 503'))));
reset role;
select ok((select vt > now() + interval '20 seconds' from pgmq.q_workflow_trace_exports), 'A retry hides the message until it is due');
select pg_temp.as_service();
select public.record_trace_exports(jsonb_build_object(
  'messages', jsonb_build_array(jsonb_build_object('messageId', (select msg_id from claimed), 'outcome', 'exported')),
  'exporters', jsonb_build_array(jsonb_build_object('workspaceId', (select id from ws), 'exportedSpans', 2))));
reset role;
select is((select count(*)::int from pgmq.q_workflow_trace_exports), 0, 'An exported run leaves the queue');
select is((select (exported_spans, last_error)::text from public.workflow_trace_exporters), '(2,"HTTP 503")', 'and the exporter counts what was exported and the last error');

select pg_temp.act_as('ae100000-0000-4000-8000-000000000001');
update public.workflow_trace_exporters set enabled = false;
select pg_temp.as_service();
select public.finish_workflow_run((answer ->> 'executionId')::uuid, 'completed', '{}') from answers where label = 'own';
reset role;
select is((select count(*)::int from pgmq.q_workflow_trace_exports), 0, 'A disabled exporter queues nothing');

select * from finish();
rollback;
