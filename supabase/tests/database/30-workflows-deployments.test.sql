-- Workflow service: deploy, history, diff, promote and roll back; one active snapshot per workflow.
begin;
select plan(41);

insert into auth.users (id, email, aud, role) values
  ('a2000000-0000-4000-8000-000000000001', 'editor@deploy.test', 'authenticated', 'authenticated'),
  ('a2000000-0000-4000-8000-000000000002', 'viewer@deploy.test', 'authenticated', 'authenticated'),
  ('a2000000-0000-4000-8000-000000000003', 'outsider@deploy.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;

select pg_temp.act_as('a2000000-0000-4000-8000-000000000001');
select public.create_workspace('Deploys');
reset role;
insert into public.workspace_members (workspace_id, user_id, role)
select id, 'a2000000-0000-4000-8000-000000000002', 'viewer' from public.workspaces where name = 'Deploys';
insert into public.workflows (id, workspace_id, name, state)
select 'b2000000-0000-4000-8000-000000000001', id, 'Greeter', '{
  "blocks": {
    "start": {"id": "start", "type": "manual_trigger", "name": "Start", "config": {}, "enabled": true},
    "greet": {"id": "greet", "type": "function", "name": "Greet", "config": {"code": "return 1;"}, "enabled": true},
    "note": {"id": "note", "type": "variables", "name": "Note", "config": {"assignments": []}, "enabled": true}
  },
  "edges": [{"id": "e1", "source": "start", "target": "greet"}, {"id": "e2", "source": "greet", "target": "note"}]
}' from public.workspaces where name = 'Deploys';

-- Deploying ---------------------------------------------------------------------------------------

select pg_temp.act_as('a2000000-0000-4000-8000-000000000001');
select is(
  (select (d.version, d.is_active, d.note) from public.deploy_workflow('b2000000-0000-4000-8000-000000000001', 'First release') d)::text,
  '(1,t,"First release")', 'The first deploy is version 1, active, with its note'
);
select is((select created_by from public.workflow_deployments where version = 1), 'a2000000-0000-4000-8000-000000000001'::uuid, 'A snapshot records who deployed it');
select is((select state from public.workflow_deployments where version = 1), (select state from public.workflows), 'A snapshot is the draft as it was');

update public.workflows set state = jsonb_set(state, '{blocks,greet,config,code}', '"return 2;"');
select is((select version from public.deploy_workflow('b2000000-0000-4000-8000-000000000001')), 2, 'Deploying again publishes version 2');
select is((select array_agg(version order by version) from public.workflow_deployments where is_active), array[2], 'Only the newest snapshot is active');
select is((select state -> 'blocks' -> 'greet' -> 'config' ->> 'code' from public.workflow_deployments where version = 1), 'return 1;', 'Older snapshots keep their state');
select is((select note from public.workflow_deployments where version = 2), null, 'The note is optional');

update public.workflows set state = '{"blocks": {"greet": {"id": "greet", "type": "function", "name": "Greet", "config": {"code": "return 3;"}}}}';
select throws_ok(
  $$select public.deploy_workflow('b2000000-0000-4000-8000-000000000001')$$,
  '23514', 'The workflow has no enabled trigger block, so nothing can start it',
  'A draft without a trigger cannot be deployed'
);
select is((select count(*) from public.workflow_deployments), 2::bigint, 'A refused deploy publishes nothing');
reset role;
update public.workflows set state = (select state from public.workflow_deployments where version = 2);

select pg_temp.act_as('a2000000-0000-4000-8000-000000000002');
select throws_ok($$select public.deploy_workflow('b2000000-0000-4000-8000-000000000001')$$, '42501', 'Only a workspace editor or above may deploy workflows', 'A viewer cannot deploy');
select throws_ok($$select public.activate_deployment('b2000000-0000-4000-8000-000000000001', 1)$$, '42501', null, 'A viewer cannot roll back');
select is((select count(*) from public.workflow_deployments), 2::bigint, 'A viewer reads the deployment history');
select throws_ok(
  $$insert into public.workflow_deployments (workflow_id, workspace_id, version, state, is_active) select workflow_id, workspace_id, 9, state, true from public.workflow_deployments limit 1$$,
  '42501', null, 'Nobody writes snapshots directly'
);
reset role;

select pg_temp.act_as('a2000000-0000-4000-8000-000000000003');
select throws_ok($$select public.deploy_workflow('b2000000-0000-4000-8000-000000000001')$$, 'PT404', 'Workflow b2000000-0000-4000-8000-000000000001 not found', 'To an outsider the workflow does not exist');
select throws_ok($$select public.diff_workflow_deployment('b2000000-0000-4000-8000-000000000001')$$, 'PT404', null, 'An outsider cannot diff it either');
select is((select count(*) from public.workflow_deployments), 0::bigint, 'An outsider sees no deployments');
reset role;

-- Promote and roll back ---------------------------------------------------------------------------

select pg_temp.act_as('a2000000-0000-4000-8000-000000000001');
select is((select (version, is_active)::text from public.activate_deployment('b2000000-0000-4000-8000-000000000001', 1)), '(1,t)', 'Rolling back activates version 1');
select is((select array_agg(version) from public.workflow_deployments where is_active), array[1], 'and deactivates version 2');
create temporary table first_activation as select activated_at from public.workflow_deployments where version = 1;
select is((select (version, is_active)::text from public.activate_deployment('b2000000-0000-4000-8000-000000000001', 1)), '(1,t)', 'Activating the active version again is fine');
select is((select activated_at from public.workflow_deployments where version = 1), (select activated_at from first_activation), 'and changes nothing');
select throws_ok(
  $$select public.activate_deployment('b2000000-0000-4000-8000-000000000001', 9)$$,
  'PT404', 'Workflow "Greeter" has no deployment version 9', 'An unknown version is a clear "not found"'
);
select is((select array_agg(version) from public.workflow_deployments where is_active), array[1], 'A failed activation changes nothing');
select is((select version from public.activate_deployment('b2000000-0000-4000-8000-000000000001', 2)), 2, 'Promoting version 2 again works');
select lives_ok($$select public.undeploy_workflow('b2000000-0000-4000-8000-000000000001')$$, 'A workflow can be taken offline');
select is((select count(*) from public.workflow_deployments where is_active), 0::bigint, 'Then no snapshot is active');
select lives_ok($$select public.undeploy_workflow('b2000000-0000-4000-8000-000000000001')$$, 'Taking it offline twice is fine');
select is((select version from public.deploy_workflow('b2000000-0000-4000-8000-000000000001', 'Back online')), 3, 'Deploying after that continues the numbering');
reset role;

select throws_ok(
  $$update public.workflow_deployments set is_active = true where workflow_id = 'b2000000-0000-4000-8000-000000000001' and version = 1$$,
  '23505', null, 'The database itself refuses a second active snapshot'
);

-- Diff ---------------------------------------------------------------------------------------------

select pg_temp.act_as('a2000000-0000-4000-8000-000000000001');
select is(
  (select d -> 'identical' from public.diff_workflow_deployment('b2000000-0000-4000-8000-000000000001') d),
  'true'::jsonb, 'The draft just deployed is identical to the active snapshot'
);
update public.workflows set state = jsonb_set(jsonb_set(jsonb_set(state,
  '{blocks,greet}', '{"id": "greet", "type": "function", "name": "Greet Politely", "config": {"code": "return 4;", "timeoutMs": 500}, "enabled": false, "position": {"x": 1, "y": 2}}'),
  '{blocks,bye}', '{"id": "bye", "type": "response", "name": "Bye", "config": {}}'),
  '{edges}', '[{"id": "e1", "source": "start", "target": "greet"}, {"id": "e9", "source": "greet", "target": "bye", "sourceHandle": "error"}]');
update public.workflows set state = state #- '{blocks,note}';
create temporary table draft_diff as select public.diff_workflow_deployment('b2000000-0000-4000-8000-000000000001') as d;
select is((select d -> 'from' from draft_diff), '{"version": 3, "active": true}'::jsonb, 'By default the active snapshot is compared');
select is((select d -> 'to' from draft_diff), '{"draft": true}'::jsonb, 'with the draft');
select is((select d -> 'blocks' -> 'added' from draft_diff), '[{"id": "bye", "name": "Bye", "type": "response"}]'::jsonb, 'It lists blocks added to the draft');
select is((select d -> 'blocks' -> 'removed' from draft_diff), '[{"id": "note", "name": "Note", "type": "variables"}]'::jsonb, 'and blocks removed');
select is(
  (select d -> 'blocks' -> 'changed' from draft_diff),
  '[{"id": "greet", "name": "Greet Politely", "type": "function", "fields": ["name", "enabled"], "configKeys": ["code", "timeoutMs"]}]'::jsonb,
  'and changed blocks with the fields and config keys that changed (layout ignored)'
);
select is((select d -> 'edges' -> 'added' from draft_diff), '[{"id": "e9", "source": "greet", "target": "bye", "sourceHandle": "error"}]'::jsonb, 'It lists edges added');
select is((select d -> 'edges' -> 'removed' from draft_diff), '[{"id": "e2", "source": "greet", "target": "note"}]'::jsonb, 'and edges removed');
select is((select d -> 'identical' from draft_diff), 'false'::jsonb, 'A changed draft is not identical');

select is(
  (select d -> 'blocks' -> 'changed' -> 0 -> 'configKeys' from public.diff_workflow_deployment('b2000000-0000-4000-8000-000000000001', 1, 2) d),
  '["code"]'::jsonb, 'Two snapshots can be compared'
);
select is(
  (select d -> 'to' from public.diff_workflow_deployment('b2000000-0000-4000-8000-000000000001', 1, 2) d),
  '{"version": 2}'::jsonb, 'naming both versions'
);
select throws_ok($$select public.diff_workflow_deployment('b2000000-0000-4000-8000-000000000001', 7)$$, 'PT404', 'Workflow "Greeter" has no deployment version 7', 'Diffing an unknown version is "not found"');
select is(
  workflows_private.diff_states(
    '{"loops": {"l": {"nodes": ["a"], "loopType": "for", "iterations": 2}}, "parallels": {"p": {"nodes": [], "parallelType": "count", "count": 1}}}',
    '{"loops": {"l": {"nodes": ["a", "b"], "loopType": "for", "iterations": 3}}, "parallels": {"q": {"nodes": [], "parallelType": "count", "count": 1}}}'
  ) -> 'subflows',
  '{"added": [{"id": "q", "kind": "parallel"}], "removed": [{"id": "p", "kind": "parallel"}], "changed": [{"id": "l", "kind": "loop", "keys": ["iterations", "nodes"]}]}'::jsonb,
  'Loops and parallels are compared too'
);
reset role;

select * from finish();
rollback;
