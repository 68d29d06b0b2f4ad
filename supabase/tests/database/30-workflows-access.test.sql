-- Workflow service: who may see and change workspaces, members, folders, workflows and deployments.
begin;
select plan(52);

-- Five people: an owner, an admin, an editor, a viewer of one workspace, and an outsider.
insert into auth.users (id, email, aud, role) values
  ('a0000000-0000-4000-8000-000000000001', 'owner@wf.test', 'authenticated', 'authenticated'),
  ('a0000000-0000-4000-8000-000000000002', 'admin@wf.test', 'authenticated', 'authenticated'),
  ('a0000000-0000-4000-8000-000000000003', 'editor@wf.test', 'authenticated', 'authenticated'),
  ('a0000000-0000-4000-8000-000000000004', 'viewer@wf.test', 'authenticated', 'authenticated'),
  ('a0000000-0000-4000-8000-000000000005', 'outsider@wf.test', 'authenticated', 'authenticated');

create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create function pg_temp.act_as_anon() returns void language sql as $$
  select set_config('role', 'anon', true), set_config('request.jwt.claims', '{"role": "anon"}', true);
$$;

select pg_temp.act_as('a0000000-0000-4000-8000-000000000001');
select lives_ok($$select public.create_workspace('Acme')$$, 'A signed-in user can create a workspace');
reset role;
create temporary table ids as select id as workspace_id, billing_account_id from public.workspaces where name = 'Acme';
grant select on ids to authenticated, anon;

select is((select role from public.workspace_members where user_id = 'a0000000-0000-4000-8000-000000000001'), 'owner', 'The creator becomes the owner');
select is((select plan from public.billing_accounts where id = (select billing_account_id from ids)), 'free', 'A personal billing account on the Free plan is created for the first workspace');

insert into public.workspace_members (workspace_id, user_id, role)
select workspace_id, u.id, u.role from ids, (values
  ('a0000000-0000-4000-8000-000000000002'::uuid, 'admin'),
  ('a0000000-0000-4000-8000-000000000003'::uuid, 'editor'),
  ('a0000000-0000-4000-8000-000000000004'::uuid, 'viewer')) as u(id, role);
insert into public.workflows (id, workspace_id, name, created_by)
select 'b0000000-0000-4000-8000-000000000001', workspace_id, 'Onboarding', 'a0000000-0000-4000-8000-000000000001' from ids;
insert into public.folders (id, workspace_id, name) select 'c0000000-0000-4000-8000-000000000001', workspace_id, 'Sales' from ids;

-- Outsiders and anonymous callers -------------------------------------------------------------

select pg_temp.act_as('a0000000-0000-4000-8000-000000000005');
select is((select count(*) from public.workspaces), 0::bigint, 'An outsider sees no workspace');
select is((select count(*) from public.workspace_members), 0::bigint, 'An outsider sees no members');
select is((select count(*) from public.workflows), 0::bigint, 'An outsider sees no workflows');
select is((select count(*) from public.folders), 0::bigint, 'An outsider sees no folders');
select is((select count(*) from public.billing_accounts), 0::bigint, 'An outsider sees no billing account of others');
select throws_ok(
  $$insert into public.workflows (workspace_id, name) select workspace_id, 'Intruder' from ids$$,
  '42501', null, 'An outsider cannot create workflows in the workspace'
);
select throws_ok(
  $$insert into public.workspace_members (workspace_id, user_id, role) select workspace_id, 'a0000000-0000-4000-8000-000000000005', 'owner' from ids$$,
  '42501', null, 'An outsider cannot add themselves to a workspace'
);

select pg_temp.act_as_anon();
select throws_ok('select * from public.workflows', '42501', null, 'Anonymous callers cannot read workflows at all');
select throws_ok($$select public.create_workspace('Anon')$$, '42501', null, 'Anonymous callers cannot create workspaces');
reset role;

-- Viewers ----------------------------------------------------------------------------------------

select pg_temp.act_as('a0000000-0000-4000-8000-000000000004');
select is((select count(*) from public.workspaces), 1::bigint, 'A viewer sees the workspace');
select is((select count(*) from public.workspace_members), 4::bigint, 'A viewer sees who else is in it');
select is((select name from public.workflows), 'Onboarding', 'A viewer reads its workflows');
select is((select count(*) from public.billing_accounts), 1::bigint, 'A viewer sees the account that pays for the workspace');
select throws_ok(
  $$insert into public.workflows (workspace_id, name) select workspace_id, 'Viewer draft' from ids$$,
  '42501', null, 'A viewer cannot create workflows'
);
update public.workflows set name = 'Renamed by viewer';
select is((select name from public.workflows), 'Onboarding', 'A viewer cannot edit workflows');
delete from public.workflows;
select is((select count(*) from public.workflows), 1::bigint, 'A viewer cannot delete workflows');
update public.workspaces set name = 'Viewer rename';
select is((select name from public.workspaces), 'Acme', 'A viewer cannot rename the workspace');
select throws_ok(
  $$insert into public.folders (workspace_id, name) select workspace_id, 'Viewer folder' from ids$$,
  '42501', null, 'A viewer cannot create folders'
);
reset role;

-- Editors ----------------------------------------------------------------------------------------

select pg_temp.act_as('a0000000-0000-4000-8000-000000000003');
select lives_ok(
  $$insert into public.workflows (id, workspace_id, folder_id, name) select 'b0000000-0000-4000-8000-000000000002', workspace_id, 'c0000000-0000-4000-8000-000000000001', 'Editor flow' from ids$$,
  'An editor creates workflows, in folders'
);
select is((select created_by from public.workflows where name = 'Editor flow'), 'a0000000-0000-4000-8000-000000000003'::uuid, 'A new workflow records who created it');
select throws_ok(
  $$insert into public.workflows (workspace_id, name, created_by) select workspace_id, 'Forged', 'a0000000-0000-4000-8000-000000000001' from ids$$,
  '42501', null, 'Nobody can claim another user created their workflow'
);
update public.workflows set description = 'Welcome new customers' where name = 'Onboarding';
select is((select description from public.workflows where name = 'Onboarding'), 'Welcome new customers', 'An editor edits workflows');
select throws_ok(
  $$update public.workflows set workspace_id = gen_random_uuid()$$,
  '42501', null, 'A workflow cannot be moved to another workspace'
);
select lives_ok($$insert into public.folders (workspace_id, parent_id, name) select workspace_id, 'c0000000-0000-4000-8000-000000000001', 'Leads' from ids$$, 'An editor nests folders');
select throws_ok(
  $$update public.folders set parent_id = (select id from public.folders where name = 'Leads') where name = 'Sales'$$,
  '23514', 'Folder "Sales" cannot be moved inside itself', 'A folder cannot be moved inside its own subfolder'
);
select throws_ok(
  $$insert into public.workspace_members (workspace_id, user_id, role) select workspace_id, 'a0000000-0000-4000-8000-000000000005', 'viewer' from ids$$,
  '42501', null, 'An editor cannot add members'
);
delete from public.workflows where name = 'Editor flow';
select is((select count(*) from public.workflows), 1::bigint, 'An editor deletes workflows');
reset role;

-- Admins and owners ------------------------------------------------------------------------------

select pg_temp.act_as('a0000000-0000-4000-8000-000000000002');
select throws_ok(
  $$insert into public.workspace_members (workspace_id, user_id, role) select workspace_id, 'a0000000-0000-4000-8000-000000000005', 'viewer' from ids$$,
  '42501', null, 'An admin cannot add members without their consent'
);
select lives_ok(
  $$insert into public.workspace_invitations (workspace_id, user_id, role) select workspace_id, 'a0000000-0000-4000-8000-000000000005', 'viewer' from ids$$,
  'An admin invites them'
);
select pg_temp.act_as('a0000000-0000-4000-8000-000000000005');
select lives_ok($$select public.accept_workspace_invitation((select workspace_id from ids))$$, 'and the invited user accepts, joining');
select pg_temp.act_as('a0000000-0000-4000-8000-000000000002');
select lives_ok($$update public.workspace_members set role = 'editor' where user_id = 'a0000000-0000-4000-8000-000000000005'$$, 'An admin changes roles');
select is((select role from public.workspace_members where user_id = 'a0000000-0000-4000-8000-000000000005'), 'editor', 'The new role is stored');
select throws_ok(
  $$update public.workspace_members set role = 'owner' where user_id = 'a0000000-0000-4000-8000-000000000005'$$,
  '42501', null, 'An admin cannot make anyone an owner'
);
update public.workspace_members set role = 'viewer' where user_id = 'a0000000-0000-4000-8000-000000000001';
select is((select role from public.workspace_members where user_id = 'a0000000-0000-4000-8000-000000000001'), 'owner', 'An admin cannot demote an owner');
update public.workspaces set name = 'Acme Inc';
select is((select name from public.workspaces), 'Acme Inc', 'An admin renames the workspace');
delete from public.workspaces;
select is((select count(*) from public.workspaces), 1::bigint, 'An admin cannot delete the workspace');
reset role;

select pg_temp.act_as('a0000000-0000-4000-8000-000000000001');
select throws_ok(
  $$update public.workspace_members set role = 'admin' where user_id = 'a0000000-0000-4000-8000-000000000001'$$,
  '23514', 'A workspace needs at least one owner; appoint another owner first', 'The last owner cannot step down'
);
select throws_ok(
  $$delete from public.workspace_members where user_id = 'a0000000-0000-4000-8000-000000000001'$$,
  '23514', null, 'The last owner cannot leave'
);
select lives_ok($$update public.workspace_members set role = 'owner' where user_id = 'a0000000-0000-4000-8000-000000000002'$$, 'An owner appoints another owner');
select lives_ok($$delete from public.workspace_members where user_id = 'a0000000-0000-4000-8000-000000000001'$$, 'An owner may leave once another owner remains');
reset role;

select pg_temp.act_as('a0000000-0000-4000-8000-000000000004');
delete from public.workspace_members where user_id = 'a0000000-0000-4000-8000-000000000004';
reset role;
select is((select count(*) from public.workspace_members where user_id = 'a0000000-0000-4000-8000-000000000004'), 0::bigint, 'Anyone may leave a workspace');

select pg_temp.act_as('a0000000-0000-4000-8000-000000000002');
select throws_ok(
  $$select public.create_workspace('Elsewhere', (select billing_account_id from ids))$$,
  '42501', null, 'A workspace can only be billed to an account the creator owns'
);
delete from public.workspaces;
reset role;
select is((select count(*) from public.workflows where workspace_id = (select workspace_id from ids)), 0::bigint, 'Deleting a workspace (as its owner) deletes its workflows');

-- Structure --------------------------------------------------------------------------------------

select ok(
  (select bool_and(c.relrowsecurity) from pg_class c where c.oid in (
    'public.billing_accounts'::regclass, 'public.workspaces'::regclass, 'public.workspace_members'::regclass, 'public.folders'::regclass,
    'public.workflows'::regclass, 'public.workflow_deployments'::regclass, 'public.environment_variables'::regclass)),
  'Every workflow-service table has row-level security on'
);
select has_index('public', 'workspace_members', 'workspace_members_user_id_idx', 'Memberships are indexed by user, as the policies read them');
select has_index('public', 'workflows', 'workflows_workspace_id_idx', 'Workflows are indexed by workspace');
select has_index('public', 'workflow_deployments', 'workflow_deployments_workspace_id_idx', 'Deployments are indexed by workspace');
select has_index('public', 'environment_variables', 'environment_variables_workspace_id_idx', 'Environment variables are indexed by workspace');
select ok(not has_schema_privilege('anon', 'workflows_private', 'usage'), 'Anonymous callers cannot reach the private schema');

select * from finish();
rollback;
