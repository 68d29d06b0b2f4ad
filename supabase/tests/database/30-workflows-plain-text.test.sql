-- Control characters in the workflow service's names, written the way clients write them: creating
-- and renaming a workspace, folders, workflows and their descriptions, and a deployment's note.
-- Names refuse every control character; descriptions and notes accept tabs and line breaks only.
begin;
select plan(12);

insert into auth.users (id, email, aud, role) values
  ('a3000000-0000-4000-8000-000000000001', 'editor@plain.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;

select pg_temp.act_as('a3000000-0000-4000-8000-000000000001');
select throws_ok($$ select public.create_workspace(E'Acme\tLabs') $$,
  '23514', 'new row for relation "workspaces" violates check constraint "workspaces_name_no_control_characters"',
  'A workspace cannot be created with a tab in its name');
select lives_ok($$ select public.create_workspace('Acme Labs') $$, 'An ordinary name is accepted');
reset role;
create temporary table ids on commit drop as select id as workspace_id from public.workspaces where name = 'Acme Labs';
grant select on ids to authenticated;

select pg_temp.act_as('a3000000-0000-4000-8000-000000000001');
select throws_ok($$ update public.workspaces set name = E'Acme\nLabs' where id = (select workspace_id from ids) $$,
  '23514', 'new row for relation "workspaces" violates check constraint "workspaces_name_no_control_characters"',
  'Nor renamed with a line break');
select throws_ok($$ insert into public.folders (workspace_id, name) select workspace_id, E'Vendas\u0007' from ids $$,
  '23514', 'new row for relation "folders" violates check constraint "folders_name_no_control_characters"',
  'A folder name with a bell character is refused');
select throws_ok($$ insert into public.workflows (workspace_id, name) select workspace_id, E'Onboarding\u001b' from ids $$,
  '23514', 'new row for relation "workflows" violates check constraint "workflows_name_no_control_characters"',
  'A workflow name with an escape character is refused');
select throws_ok($$ insert into public.workflows (workspace_id, name, description) select workspace_id, 'Onboarding', E'Passo 1\u000b' from ids $$,
  '23514', 'new row for relation "workflows" violates check constraint "workflows_description_no_control_characters"',
  'A workflow description with a vertical tab is refused');
select lives_ok($$ insert into public.workflows (id, workspace_id, name, description, state)
  select 'b3000000-0000-4000-8000-000000000001', workspace_id, 'Onboarding', E'Passos:\n\t1. boas-vindas\r\n\t2. e-mail', '{
    "blocks": {"start": {"id": "start", "type": "manual_trigger", "name": "Start", "config": {}, "enabled": true}},
    "edges": []
  }' from ids $$,
  'A workflow description may span lines and hold tabs');
select throws_ok($$ select public.deploy_workflow('b3000000-0000-4000-8000-000000000001', E'Primeira\u0008 versão') $$,
  '23514', 'new row for relation "workflow_deployments" violates check constraint "workflow_deployments_note_no_control_characters"',
  'A deployment note with a backspace is refused');
select lives_ok($$ select public.deploy_workflow('b3000000-0000-4000-8000-000000000001', E'Primeira versão:\n- boas-vindas') $$,
  'A deployment note may span lines');
reset role;

select is((select count(*)::integer from public.workspaces where created_by = 'a3000000-0000-4000-8000-000000000001'), 1, 'The refused workspace was not created');
select is((select count(*)::integer from public.workflows where workspace_id = (select workspace_id from ids)), 1, 'Nor were the refused workflows');
select is((select count(*)::integer from public.billing_accounts where not shared_private.is_plain_text(name)), 0,
  'No billing account name holds a control character');

select * from finish();
rollback;
