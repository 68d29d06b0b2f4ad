-- Workflow service, part 7 (issue 32, item 5): dead letters. A delivery that fails for good keeps
-- what the receiver answered and when it died; dead letters are replayed in bulk by subscription
-- and time range, capped per call; a subscription whose deliveries keep dying is switched off with
-- the reason, and only the delivery functions write that record.
begin;
select plan(28);

insert into auth.users (id, email, aud, role) values
  ('ae100000-0000-4000-8000-000000000001', 'owner@dead.test', 'authenticated', 'authenticated'),
  ('ae100000-0000-4000-8000-000000000002', 'editor@dead.test', 'authenticated', 'authenticated'),
  ('ae100000-0000-4000-8000-000000000003', 'viewer@dead.test', 'authenticated', 'authenticated'),
  ('ae100000-0000-4000-8000-000000000004', 'stranger@dead.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create function pg_temp.as_service() returns void language sql as $$
  select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true);
$$;

select pg_temp.act_as('ae100000-0000-4000-8000-000000000001');
select public.create_workspace('Dead letters');
reset role;
create temporary table ws as select w.id from public.workspaces w
  join public.workspace_members m on m.workspace_id = w.id and m.user_id = 'ae100000-0000-4000-8000-000000000001';
grant select on ws to public;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'ae100000-0000-4000-8000-000000000002', 'editor' from ws;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'ae100000-0000-4000-8000-000000000003', 'viewer' from ws;
insert into public.workflows (id, workspace_id, name, state) select 'ae200000-0000-4000-8000-000000000001', id, 'Announced',
  '{"blocks": {"hook": {"id": "hook", "type": "generic_webhook", "name": "Hook", "config": {}}, "done": {"id": "done", "type": "response", "name": "Done", "config": {"body": "ok"}}}, "edges": [{"id": "e1", "source": "hook", "target": "done"}]}'
from ws;
select pg_temp.as_service();
select public.deploy_workflow('ae200000-0000-4000-8000-000000000001');
insert into public.billing_account_overrides (billing_account_id, sync_per_minute) select billing_account_id, 100000 from public.workspaces where id = (select id from ws);
reset role;

create temporary table runs (label text primary key, id uuid);
grant all on runs to public;
create function pg_temp.run(p_label text) returns uuid language sql as $$ select id from runs where label = p_label $$;
create function pg_temp.sub() returns uuid language sql as $$ select id from public.webhook_subscriptions where url = 'https://hooks.example.com/dying' $$;
create function pg_temp.delivery(p_label text) returns public.webhook_deliveries language sql as $$
  select * from public.webhook_deliveries where execution_id = pg_temp.run(p_label) and subscription_id = pg_temp.sub()
$$;
-- Admits and finishes a run, so the subscription gets a delivery, and remembers it.
create function pg_temp.finished(p_label text) returns void language plpgsql as $$
declare v_id uuid;
begin
  perform pg_temp.as_service();
  v_id := (public.admit_workflow_run('ae200000-0000-4000-8000-000000000001', 'webhook', 'sync') ->> 'executionId')::uuid;
  perform public.finish_workflow_run(v_id, 'completed', '{"done": true}');
  insert into runs values (p_label, v_id);
  reset role;
end;
$$;
-- The worker's attempt of the delivery of `p_label`: under way, then recorded with `p_outcome`.
create function pg_temp.attempt(p_label text, p_outcome text, p_status integer, p_excerpt text default null) returns void language plpgsql as $$
begin
  update public.webhook_deliveries set attempts = attempts + 1, round_attempts = round_attempts + 1, attempt_started_at = now()
  where id = (pg_temp.delivery(p_label)).id;
  perform pg_temp.as_service();
  perform public.record_webhook_attempts(jsonb_build_array(jsonb_build_object('deliveryId', (pg_temp.delivery(p_label)).id,
    'attempt', (pg_temp.delivery(p_label)).attempts, 'startedAt', now(), 'durationMs', 5, 'statusCode', p_status,
    'error', case when p_outcome <> 'delivered' then format('The receiver answered HTTP %s', p_status) end,
    'responseExcerpt', p_excerpt, 'outcome', p_outcome, 'retryInMs', case when p_outcome = 'retry' then 1000 end)));
  reset role;
end;
$$;

-- The subscription: two dead deliveries in a row switch it off ---------------------------------------

select pg_temp.act_as('ae100000-0000-4000-8000-000000000002');
insert into public.webhook_subscriptions (workflow_id, url, disable_after_dead_deliveries, disable_after_dead_minutes, consecutive_dead_deliveries, dead_since, disabled_reason)
values ('ae200000-0000-4000-8000-000000000001', 'https://hooks.example.com/dying', 2, 60, 7, now(), 'planted');
select is((select (disable_after_dead_deliveries, disable_after_dead_minutes, consecutive_dead_deliveries, dead_since, disabled_reason)::text from public.webhook_subscriptions where id = pg_temp.sub()),
  '(2,60,0,,)', 'An editor sets the thresholds; the dead-delivery record is not theirs to write');
select throws_ok($$update public.webhook_subscriptions set disable_after_dead_deliveries = 0 where url = 'https://hooks.example.com/dying'$$,
  '23514', null, 'A threshold below 1 is refused');
reset role;

select pg_temp.finished('a');
select pg_temp.attempt('a', 'failed', 410, E'No such hook:\n\tdeleted');
select is(((pg_temp.delivery('a')).status, (pg_temp.delivery('a')).last_status_code, (pg_temp.delivery('a')).last_response_excerpt)::text,
  '(failed,410,"No such hook: deleted")', 'A delivery refused for good is a dead letter with what the receiver said, control characters removed');
select ok((pg_temp.delivery('a')).failed_at is not null, 'and when it died');
select is((select response_excerpt from public.webhook_delivery_attempts where delivery_id = (pg_temp.delivery('a')).id), 'No such hook: deleted',
  'The attempt keeps the excerpt too');
select is((select (active, consecutive_dead_deliveries)::text from public.webhook_subscriptions where id = pg_temp.sub()), '(t,1)',
  'One dead delivery counts, the subscription stays on');

select pg_temp.finished('b');
select pg_temp.attempt('b', 'delivered', 204);
select is((select consecutive_dead_deliveries from public.webhook_subscriptions where id = pg_temp.sub()), 0, 'A delivery that arrives ends the run of dead ones');
select is((pg_temp.delivery('b')).last_response_excerpt, null, 'and keeps no excerpt');

select pg_temp.finished('c');
select pg_temp.attempt('c', 'retry', 503, 'busy');
select is((select consecutive_dead_deliveries from public.webhook_subscriptions where id = pg_temp.sub()), 0, 'A retry is not a death');
update public.webhook_deliveries set attempt_started_at = null where id = (pg_temp.delivery('c')).id;
select pg_temp.attempt('c', 'failed', 503, 'still busy');
select pg_temp.finished('d');
select pg_temp.attempt('d', 'failed', 500, 'broken');
select is((select (active, consecutive_dead_deliveries, dead_since is not null)::text from public.webhook_subscriptions where id = pg_temp.sub()), '(t,2,t)',
  'Two dead deliveries in a row within the hour do not switch it off yet: they must have been dying for its 60 minutes');
-- An hour and more on: the deliveries have been dying since two hours ago.
update public.webhook_subscriptions set dead_since = now() - interval '2 hours' where id = pg_temp.sub();
select pg_temp.finished('d2');
select pg_temp.attempt('d2', 'failed', 500, 'broken again');
select is((select (active, consecutive_dead_deliveries)::text from public.webhook_subscriptions where id = pg_temp.sub()), '(f,3)',
  'A third one, when they have been dying for over an hour, switches the subscription off');
select ok((select disabled_at is not null from public.webhook_subscriptions where id = pg_temp.sub()), 'saying when');
select is((select disabled_reason from public.webhook_subscriptions where id = pg_temp.sub()),
  format('Switched off after 3 dead deliveries in a row; the last (%s) failed: The receiver answered HTTP 500', (pg_temp.delivery('d2')).id),
  'and why');
select is((select (source, email_to, subject)::text from public.workflow_alert_events where data ->> 'subscriptionId' = pg_temp.sub()::text),
  '(subscription_switched_off,{editor@dead.test},"[Orbita] Webhook switched off: https://hooks.example.com/dying")', 'and tells its owner, who made it, by e-mail');

select pg_temp.finished('e');
select ok((pg_temp.delivery('e')).id is null, 'A switched-off subscription gets no new deliveries');

-- Who may change the record -----------------------------------------------------------------------------

select pg_temp.act_as('ae100000-0000-4000-8000-000000000003');
update public.webhook_subscriptions set active = true where id = pg_temp.sub();
select is((select active from public.webhook_subscriptions where id = pg_temp.sub()), false, 'A viewer cannot switch it back on');
select pg_temp.act_as('ae100000-0000-4000-8000-000000000002');
update public.webhook_subscriptions set disabled_reason = 'nothing happened', consecutive_dead_deliveries = 0 where id = pg_temp.sub();
select is((select (consecutive_dead_deliveries, disabled_reason like 'Switched off after 3%')::text from public.webhook_subscriptions where id = pg_temp.sub()),
  '(3,t)', 'An editor cannot rewrite the record');
update public.webhook_subscriptions set active = true where id = pg_temp.sub();
select is((select (active, consecutive_dead_deliveries, dead_since, disabled_at, disabled_reason)::text from public.webhook_subscriptions where id = pg_temp.sub()),
  '(t,0,,,)', 'Switching it back on starts the record afresh');

-- Listing and replaying dead letters -------------------------------------------------------------------
-- Runs of one transaction share its start time: spread them out, as runs ending an hour apart.
reset role;
update public.webhook_deliveries d set created_at = now() - make_interval(hours => r.hours_ago)
from (values ('a', 4), ('b', 4), ('c', 3), ('d', 2), ('d2', 1)) as r (label, hours_ago) where d.id = (pg_temp.delivery(r.label)).id;

select pg_temp.act_as('ae100000-0000-4000-8000-000000000003');
select is((select array_agg(last_response_excerpt order by created_at) from public.webhook_deliveries where subscription_id = pg_temp.sub() and status = 'failed'),
  array['No such hook: deleted', 'still busy', 'broken', 'broken again'], 'Members list the dead letters with what the receiver answered');
select throws_ok(format('select public.redeliver_failed_webhooks(%L)', pg_temp.sub()), '42501', null, 'A viewer may not replay them');
select pg_temp.act_as('ae100000-0000-4000-8000-000000000004');
select throws_ok(format('select public.redeliver_failed_webhooks(%L)', pg_temp.sub()), 'PT404', null, 'Another workspace''s member is told there is no such subscription');

select pg_temp.act_as('ae100000-0000-4000-8000-000000000002');
select throws_ok(format('select public.redeliver_failed_webhooks(%L, now(), now() - interval ''1 hour'')', pg_temp.sub()), '22023', null,
  'A range that ends before it starts is refused');
select is(public.redeliver_failed_webhooks(pg_temp.sub(), (select created_at from public.webhook_deliveries where id = (pg_temp.delivery('c')).id),
  (select created_at from public.webhook_deliveries where id = (pg_temp.delivery('c')).id)), 1, 'An editor replays the dead letters of a time range');
select is(((pg_temp.delivery('c')).status, (pg_temp.delivery('c')).failed_at, (pg_temp.delivery('a')).status)::text, '(pending,,failed)',
  'only those: the replayed one is pending again, no longer dead');
select is(public.redeliver_failed_webhooks(pg_temp.sub()), 3, 'and the rest without a range');
reset role;

-- The cap: at most 1,000 a call ------------------------------------------------------------------------

select pg_temp.as_service();
select public.finish_workflow_run((public.admit_workflow_run('ae200000-0000-4000-8000-000000000001', 'webhook', 'sync') ->> 'executionId')::uuid, 'completed', '{}')
from generate_series(1, 1001);
reset role;
update public.webhook_deliveries set status = 'failed', failed_at = now(), message_id = null
where subscription_id = pg_temp.sub() and status = 'pending' and execution_id not in (select id from runs);
select pg_temp.as_service();
select is(public.redeliver_failed_webhooks(pg_temp.sub()), 1000, 'One call replays at most 1,000 dead letters');
select is(public.redeliver_failed_webhooks(pg_temp.sub()), 1, 'the next one the rest');
select is(public.redeliver_failed_webhooks(pg_temp.sub()), 0, 'and then none are left');
reset role;

select * from finish();
rollback;
