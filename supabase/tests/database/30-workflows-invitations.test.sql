-- Workflow service: people join a workspace only by accepting an invitation, and an invitation tells nobody which user ids exist.
begin;
select plan(16);

insert into auth.users (id, email, aud, role) values
  ('a7000000-0000-4000-8000-000000000001', 'owner@invite.test', 'authenticated', 'authenticated'),
  ('a7000000-0000-4000-8000-000000000002', 'admin@invite.test', 'authenticated', 'authenticated'),
  ('a7000000-0000-4000-8000-000000000003', 'guest@invite.test', 'authenticated', 'authenticated'),
  ('a7000000-0000-4000-8000-000000000004', 'stranger@invite.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;

select pg_temp.act_as('a7000000-0000-4000-8000-000000000001');
select public.create_workspace('Invites');
reset role;
create temporary table ws as select id from public.workspaces where name = 'Invites';
grant select on ws to authenticated;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'a7000000-0000-4000-8000-000000000002', 'admin' from ws;

select pg_temp.act_as('a7000000-0000-4000-8000-000000000002');
select throws_ok(
  $$insert into public.workspace_members (workspace_id, user_id, role) select id, 'a7000000-0000-4000-8000-000000000003', 'viewer' from ws$$,
  '42501', null, 'An admin cannot add a user to the workspace without their consent');
select throws_ok(
  $$insert into public.workspace_members (workspace_id, user_id, role) select id, 'a7000000-0000-4000-8000-00000000dead', 'viewer' from ws$$,
  '42501', null, 'and is refused the same way for an id that is no user');
select lives_ok(
  $$insert into public.workspace_invitations (workspace_id, user_id, role) select id, 'a7000000-0000-4000-8000-000000000003', 'editor' from ws$$,
  'An admin invites a user');
select lives_ok(
  $$insert into public.workspace_invitations (workspace_id, user_id, role) select id, 'a7000000-0000-4000-8000-00000000dead', 'editor' from ws$$,
  'and invites an id that is no user just the same, learning nothing');
select throws_ok(
  $$insert into public.workspace_invitations (workspace_id, user_id, role) select id, 'a7000000-0000-4000-8000-000000000004', 'owner' from ws$$,
  '42501', null, 'Only owners invite owners');
select is((select invited_by from public.workspace_invitations where user_id = 'a7000000-0000-4000-8000-000000000003'), 'a7000000-0000-4000-8000-000000000002'::uuid, 'An invitation records who invited');
select is((select count(*) from public.workspace_invitations), 2::bigint, 'Admins see their workspace''s invitations');
reset role;

select pg_temp.act_as('a7000000-0000-4000-8000-000000000004');
select is((select count(*) from public.workspace_invitations), 0::bigint, 'A stranger sees no one else''s invitation');
select throws_ok($$select public.accept_workspace_invitation((select id from ws))$$, 'PT404', 'You have no invitation to this workspace', 'and cannot join without one');
select throws_ok($$select public.accept_workspace_invitation(gen_random_uuid())$$, 'PT404', 'You have no invitation to this workspace', 'which answers as for a workspace that does not exist');
reset role;

select pg_temp.act_as('a7000000-0000-4000-8000-000000000003');
select is((select count(*) from public.workspace_invitations), 1::bigint, 'The invited user sees their invitation');
select is((select role from public.accept_workspace_invitation((select id from ws))), 'editor', 'and accepts it, joining with the invited role');
select is(public.my_workspace_role((select id from ws)), 'editor', 'They are now a member');
select is((select count(*) from public.workspace_invitations where user_id = 'a7000000-0000-4000-8000-000000000003'), 0::bigint, 'The accepted invitation is gone');
reset role;

select pg_temp.act_as('a7000000-0000-4000-8000-000000000001');
insert into public.workspace_invitations (workspace_id, user_id, role) select id, 'a7000000-0000-4000-8000-000000000004', 'viewer' from ws;
reset role;
select pg_temp.act_as('a7000000-0000-4000-8000-000000000004');
delete from public.workspace_invitations;
select throws_ok($$select public.accept_workspace_invitation((select id from ws))$$, 'PT404', null, 'A user who declined (deleted the invitation) cannot accept it');
select is(public.my_workspace_role((select id from ws)), null, 'and is not a member');
reset role;

select * from finish();
rollback;
