-- Workflow service: members join a workspace by accepting an invitation (issue 29, finding 7).
--
-- An admin used to insert any user id into workspace_members: the user joined without consent,
-- and the foreign key on auth.users answered 409 23503 for an id that does not exist, so any
-- admin could test whether an id is a user. Now, as Sim and Supabase's own dashboard do, an admin
-- invites and the invited user accepts:
-- - workspace_invitations: one pending invitation per (workspace, user). Its user_id has no
--   foreign key on purpose: inviting an id that is no user answers exactly as inviting one that
--   is (201), so an invitation reveals nothing; it simply can never be accepted.
-- - accept_workspace_invitation(workspace): the invited user becomes a member with the invited role.
-- - Admins no longer insert memberships directly (the insert grant and policy go); creating a
--   workspace still makes its creator the owner (create_workspace, security definer).
-- The invited user sees their invitations (select where user_id is theirs) and declines one by
-- deleting it; admins see and withdraw their workspace's.

create table public.workspace_invitations (
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  user_id uuid not null,
  role text not null check (role in ('owner', 'admin', 'editor', 'viewer')),
  invited_by uuid default auth.uid() references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  primary key (workspace_id, user_id)
);
comment on table public.workspace_invitations is 'Pending invitations to join a workspace: the invited user accepts with accept_workspace_invitation() or declines by deleting the row; admins invite and withdraw.';
comment on column public.workspace_invitations.user_id is 'The invited user. No foreign key on purpose: inviting an id that is no user must answer as inviting one that is, so invitations tell nobody which ids exist.';
comment on column public.workspace_invitations.role is 'The role the user gets on accepting: owner, admin, editor or viewer (only owners invite owners).';
comment on column public.workspace_invitations.invited_by is 'Who invited them (the caller, by default).';
create index workspace_invitations_user_id_idx on public.workspace_invitations (user_id);
create index workspace_invitations_invited_by_idx on public.workspace_invitations (invited_by);

/**
 * The calling user accepts their invitation to `p_workspace_id` and becomes a member with the
 * invited role (an existing membership keeps its role). Security definer because the caller is not
 * yet a member, so no policy on workspace_members could let them in. Without an invitation it
 * answers PT404 (HTTP 404 through the data API) whatever the workspace, so it reveals nothing.
 */
create function public.accept_workspace_invitation(p_workspace_id uuid)
returns public.workspace_members
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_user uuid := (select auth.uid());
  v_invitation public.workspace_invitations;
  v_member public.workspace_members;
begin
  if v_user is null then
    raise exception 'Sign in to accept an invitation' using errcode = '42501';
  end if;
  delete from public.workspace_invitations i
  where i.workspace_id = p_workspace_id and i.user_id = v_user
  returning * into v_invitation;
  if not found then
    raise exception 'You have no invitation to this workspace' using errcode = 'PT404';
  end if;
  insert into public.workspace_members (workspace_id, user_id, role)
  values (p_workspace_id, v_user, v_invitation.role)
  on conflict (workspace_id, user_id) do nothing;
  select * into v_member from public.workspace_members m where m.workspace_id = p_workspace_id and m.user_id = v_user;
  return v_member;
end;
$$;
comment on function public.accept_workspace_invitation(uuid) is 'The caller accepts their invitation to the workspace and becomes a member with the invited role; PT404 (HTTP 404) without one.';

-- Access -------------------------------------------------------------------------------------------

revoke all on public.workspace_invitations from public, anon, authenticated;
grant select, insert (workspace_id, user_id, role), delete on public.workspace_invitations to authenticated;
grant all on public.workspace_invitations to service_role;
alter table public.workspace_invitations enable row level security;

create policy "Admins and the invited user can read an invitation" on public.workspace_invitations
  for select to authenticated
  using (user_id = (select auth.uid()) or workspace_id in (select workflows_private.member_workspace_ids('admin')));
create policy "Admins invite, and only owners invite owners" on public.workspace_invitations
  for insert to authenticated
  with check (workspace_id in (select workflows_private.member_workspace_ids(case when role = 'owner' then 'owner' else 'admin' end)));
create policy "Admins withdraw invitations, only owners an owner's, and the invited user declines" on public.workspace_invitations
  for delete to authenticated
  using (
    user_id = (select auth.uid())
    or workspace_id in (select workflows_private.member_workspace_ids(case when role = 'owner' then 'owner' else 'admin' end))
  );

-- Members join only by accepting: the direct insert admins had is withdrawn.
drop policy "Admins add members, and only owners add owners" on public.workspace_members;
revoke insert on public.workspace_members from authenticated;

revoke execute on function public.accept_workspace_invitation(uuid) from public, anon;
grant execute on function public.accept_workspace_invitation(uuid) to authenticated, service_role;
