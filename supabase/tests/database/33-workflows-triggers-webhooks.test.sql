-- Workflow service: webhook paths follow the active deployment, are unique, and resolve to their
-- workflow and secret; runs of keyless triggers record the trigger block they start from.
begin;
select plan(29);

insert into auth.users (id, email, aud, role) values
  ('ac000000-0000-4000-8000-000000000001', 'owner@hooks.test', 'authenticated', 'authenticated'),
  ('ac000000-0000-4000-8000-000000000002', 'viewer@hooks.test', 'authenticated', 'authenticated'),
  ('ac000000-0000-4000-8000-000000000003', 'stranger@hooks.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create function pg_temp.as_service() returns void language sql as $$
  select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true);
$$;
-- A state with a webhook block `hook` (config as given) leading to a Response.
create function pg_temp.hook_state(p_config jsonb, p_extra jsonb default '{}') returns jsonb language sql as $$
  select jsonb_build_object('blocks', jsonb_build_object(
      'hook', jsonb_build_object('id', 'hook', 'type', 'generic_webhook', 'name', 'Webhook 1', 'config', p_config),
      'done', jsonb_build_object('id', 'done', 'type', 'response', 'name', 'Done', 'config', jsonb_build_object('body', 'ok'))) || p_extra,
    'edges', jsonb_build_array(jsonb_build_object('id', 'e1', 'source', 'hook', 'target', 'done')));
$$;

select pg_temp.act_as('ac000000-0000-4000-8000-000000000001');
select public.create_workspace('Hooks');
select pg_temp.act_as('ac000000-0000-4000-8000-000000000003');
select public.create_workspace('Elsewhere');
reset role;
create temporary table ws as select id, name from public.workspaces where name in ('Hooks', 'Elsewhere');
grant select on ws to authenticated, service_role;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'ac000000-0000-4000-8000-000000000002', 'viewer' from ws where name = 'Hooks';
insert into public.workflows (id, workspace_id, name, state) values
  ('ad000000-0000-4000-8000-000000000001', (select id from ws where name = 'Hooks'), 'Orders',
    pg_temp.hook_state('{"path": "orders", "requireAuth": true, "token": "{{HOOK_TOKEN}}", "secretHeaderName": "X-Service-Secret", "inputFormat": [{"name": "total", "type": "number"}]}')),
  ('ad000000-0000-4000-8000-000000000002', (select id from ws where name = 'Hooks'), 'Copycat', pg_temp.hook_state('{"path": "orders"}')),
  ('ad000000-0000-4000-8000-000000000003', (select id from ws where name = 'Elsewhere'), 'Stranger', pg_temp.hook_state('{"path": "orders"}')),
  ('ad000000-0000-4000-8000-000000000004', (select id from ws where name = 'Hooks'), 'Twins',
    pg_temp.hook_state('{"path": "twins"}', '{"hook2": {"id": "hook2", "type": "generic_webhook", "name": "Webhook 2", "config": {"path": "twins"}}}')),
  ('ad000000-0000-4000-8000-000000000005', (select id from ws where name = 'Hooks'), 'Quiet',
    pg_temp.hook_state('{"path": "quiet"}', '{"hook2": {"id": "hook2", "type": "generic_webhook", "name": "Webhook 2", "config": {}}, "hook3": {"id": "hook3", "type": "generic_webhook", "name": "Webhook 3", "config": {"path": "off"}, "enabled": false}}'));

-- Deploying registers the path ---------------------------------------------------------------------

select pg_temp.act_as('ac000000-0000-4000-8000-000000000001');
select public.set_environment_variable((select id from ws where name = 'Hooks'), 'HOOK_TOKEN', 'the-webhook-token-value');
select lives_ok($$select public.deploy_workflow('ad000000-0000-4000-8000-000000000001')$$, 'A workflow with a webhook path deploys');
reset role;
select is((select (block_id, require_auth, secret_header_name, deployment_id = (select id from public.workflow_deployments where workflow_id = 'ad000000-0000-4000-8000-000000000001' and is_active))::text
  from public.workflow_webhooks where path = 'orders'), '(hook,t,X-Service-Secret,t)', 'and its path is registered for the active snapshot, with its authentication');

select pg_temp.as_service();
select is(public.webhook_trigger_target('orders') - 'inputFormat',
  jsonb_build_object('status', 200, 'workflowId', 'ad000000-0000-4000-8000-000000000001', 'workspaceId', (select id from ws where name = 'Hooks'),
    'blockId', 'hook', 'blockName', 'Webhook 1', 'requireAuth', true, 'secretHeaderName', 'X-Service-Secret', 'token', 'the-webhook-token-value', 'tokenVariable', 'HOOK_TOKEN'),
  'The target of a path holds the workflow, block and the token with its {{NAME}} resolved');
select is(public.webhook_trigger_target('orders') -> 'inputFormat', '[{"name": "total", "type": "number"}]'::jsonb, 'and the block''s Input Format');
select is(public.webhook_trigger_target('nope') ->> 'status', '404', 'An unknown path is a 404');
reset role;

-- Paths are unique among active deployments --------------------------------------------------------

select pg_temp.act_as('ac000000-0000-4000-8000-000000000001');
select throws_ok($$select public.deploy_workflow('ad000000-0000-4000-8000-000000000002')$$, '23505',
  'Webhook path "orders" is already used by workflow "Orders": choose another path or undeploy that workflow',
  'Deploying a path another workflow serves is refused, naming that workflow');
select pg_temp.act_as('ac000000-0000-4000-8000-000000000003');
select throws_ok($$select public.deploy_workflow('ad000000-0000-4000-8000-000000000003')$$, '23505',
  'Webhook path "orders" is already used by a workflow of another workspace: choose another path',
  'and from another workspace, without naming a workflow its deployer may not see');
select pg_temp.act_as('ac000000-0000-4000-8000-000000000001');
select throws_ok($$select public.deploy_workflow('ad000000-0000-4000-8000-000000000004')$$, '23505',
  'Webhook path "twins" is used by two blocks of this workflow ("Webhook 1" and "Webhook 2"): give each its own path',
  'Two blocks of one workflow cannot share a path');
select is((select count(*)::int from public.workflow_deployments where workflow_id in ('ad000000-0000-4000-8000-000000000002', 'ad000000-0000-4000-8000-000000000004')), 0,
  'A refused deploy leaves no snapshot behind');
select lives_ok($$select public.deploy_workflow('ad000000-0000-4000-8000-000000000005')$$, 'A workflow with a path-less and a disabled webhook deploys');
reset role;
select is((select array_agg(path || ':' || block_id order by path) from public.workflow_webhooks where workflow_id = 'ad000000-0000-4000-8000-000000000005'),
  array['quiet:hook'], 'and registers only the enabled block with a path');

-- The index follows the active snapshot ------------------------------------------------------------

select pg_temp.act_as('ac000000-0000-4000-8000-000000000001');
update public.workflows set state = pg_temp.hook_state('{"path": "orders-v2"}') where id = 'ad000000-0000-4000-8000-000000000001';
select public.deploy_workflow('ad000000-0000-4000-8000-000000000001');
reset role;
select is((select array_agg(path) from public.workflow_webhooks where workflow_id = 'ad000000-0000-4000-8000-000000000001'), array['orders-v2'],
  'A new deploy replaces the old path with the new one');
select pg_temp.act_as('ac000000-0000-4000-8000-000000000001');
select public.activate_deployment('ad000000-0000-4000-8000-000000000001', 1);
reset role;
select is((select array_agg(path) from public.workflow_webhooks where workflow_id = 'ad000000-0000-4000-8000-000000000001'), array['orders'],
  'Rolling back to version 1 brings its path back');
select pg_temp.act_as('ac000000-0000-4000-8000-000000000001');
select public.undeploy_workflow('ad000000-0000-4000-8000-000000000001');
reset role;
select is((select count(*)::int from public.workflow_webhooks where workflow_id = 'ad000000-0000-4000-8000-000000000001'), 0, 'Undeploying removes it');
select pg_temp.as_service();
select is(public.webhook_trigger_target('orders') ->> 'status', '404', 'and the path answers 404');
reset role;
select pg_temp.act_as('ac000000-0000-4000-8000-000000000001');
select lives_ok($$select public.deploy_workflow('ad000000-0000-4000-8000-000000000002')$$, 'Once undeployed, its path is free for another workflow');
reset role;

-- Who reads and calls what -------------------------------------------------------------------------

select pg_temp.act_as('ac000000-0000-4000-8000-000000000002');
select is((select array_agg(path order by path) from public.workflow_webhooks), array['orders', 'quiet'], 'A viewer reads their workspace''s webhook paths');
select pg_temp.act_as('ac000000-0000-4000-8000-000000000003');
select is((select count(*)::int from public.workflow_webhooks), 0, 'Someone outside the workspace reads none');
select throws_ok($$insert into public.workflow_webhooks (path, workflow_id, workspace_id, deployment_id, block_id, require_auth)
  select 'mine', workflow_id, workspace_id, deployment_id, block_id, false from public.workflow_webhooks limit 1$$, '42501', null, 'Nobody writes the index directly');
select throws_ok($$select public.webhook_trigger_target('orders')$$, '42501', null, 'Only the service role reads a path''s target (it holds the token)');
reset role;

-- Keyless runs record their trigger block ----------------------------------------------------------

select pg_temp.as_service();
create temporary table admitted as
  select public.admit_trigger_run('webhook', 'ad000000-0000-4000-8000-000000000005', 'hook', 'async', '{"total": 3}') as async_run,
         public.admit_trigger_run('webhook', 'ad000000-0000-4000-8000-000000000005', 'hook', 'sync') as sync_run;
select is((select async_run ->> 'status' from admitted), '202', 'A webhook run is admitted without a key');
select is((select (trigger, trigger_block_id, input)::text from public.workflow_executions where id = (select (async_run ->> 'executionId')::uuid from admitted)),
  '(webhook,hook,"{""total"": 3}")', 'and recorded as a webhook run from its block, with its input');
select is((select sync_run ->> 'triggerBlockId' from admitted), 'hook', 'A sync answer names the trigger block');
select is((select r ->> 'triggerBlockId' from jsonb_array_elements(public.claim_workflow_runs(10, 60) -> 'runs') r
  where r ->> 'executionId' = (select async_run ->> 'executionId' from admitted)), 'hook', 'and so does the worker''s claim of an async run');
select is(public.admit_trigger_run('webhook', 'ad000000-0000-4000-8000-000000000001', 'hook') ->> 'code', 'NOT_DEPLOYED',
  'An undeployed workflow is refused as for any trigger');
select throws_ok($$select public.admit_trigger_run('api', 'ad000000-0000-4000-8000-000000000005', 'hook')$$, '22023', null,
  'API runs are not admitted without their key');
select throws_ok($$select public.admit_trigger_run('webhook', 'ad000000-0000-4000-8000-000000000005', null)$$, '22023', null,
  'A trigger block is required');
select pg_temp.act_as('ac000000-0000-4000-8000-000000000001');
select throws_ok($$select public.admit_trigger_run('webhook', 'ad000000-0000-4000-8000-000000000005', 'hook')$$, '42501', null,
  'Signed-in users cannot admit keyless runs');
reset role;
select is((select count(*)::int from public.workflow_executions where workflow_id = 'ad000000-0000-4000-8000-000000000005'), 2, 'Only the two admitted runs were recorded');

select * from finish();
rollback;
