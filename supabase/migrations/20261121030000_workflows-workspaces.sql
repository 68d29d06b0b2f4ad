-- Workflow service, part 1: workspaces, their members and the billing accounts that pay for them.
-- Everything of the workflow service belongs to a workspace; row-level security grants access by
-- workspace membership and role. Internals (role checks, the validator, the encryption key) live
-- in the private schema `workflows_private`, which PostgREST does not expose.

-- Private schema -------------------------------------------------------------------------------

create schema if not exists workflows_private;
comment on schema workflows_private is 'Internals of the workflow service: role checks, the state validator, secrets. Not exposed by the data API.';

revoke all on schema workflows_private from public;
-- Policies run as the caller and call the role helpers below, so the API roles need usage on the
-- schema and execute on those helpers only; nothing here is reachable over HTTP.
grant usage on schema workflows_private to authenticated, service_role;
alter default privileges for role postgres in schema workflows_private revoke execute on functions from public;

-- Billing accounts -----------------------------------------------------------------------------

create table public.billing_accounts (
  id uuid primary key default gen_random_uuid(),
  owner_id uuid not null references auth.users (id) on delete cascade,
  name text not null check (char_length(btrim(name)) between 1 and 100),
  plan text not null default 'free' check (plan in ('free', 'pro', 'team', 'enterprise')),
  created_at timestamptz not null default now(),
  constraint billing_accounts_name_no_control_characters check (shared_private.is_plain_text(name))
);
comment on table public.billing_accounts is 'Who pays: usage, rate limits and plan limits of every workspace billed to the account are attributed here (decisions, "Cost"). A Team account pays for several workspaces and their usage is pooled.';
comment on column public.billing_accounts.owner_id is 'The user who owns the account and receives its bills.';
comment on column public.billing_accounts.plan is 'free, pro, team or enterprise; sets the limits of every workspace billed to this account. Changed by the billing system (service role), not by clients.';
create index billing_accounts_owner_id_idx on public.billing_accounts (owner_id);

-- Workspaces -----------------------------------------------------------------------------------

create table public.workspaces (
  id uuid primary key default gen_random_uuid(),
  name text not null check (char_length(btrim(name)) between 1 and 100),
  billing_account_id uuid not null references public.billing_accounts (id) on delete restrict,
  created_by uuid references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint workspaces_name_no_control_characters check (shared_private.is_plain_text(name))
);
comment on table public.workspaces is 'A team''s space for workflows, folders and environment variables. Created through create_workspace(); its plan is its billing account''s plan.';
comment on column public.workspaces.billing_account_id is 'The account that pays for runs of this workspace''s workflows.';
create index workspaces_billing_account_id_idx on public.workspaces (billing_account_id);

create table public.workspace_members (
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  role text not null check (role in ('owner', 'admin', 'editor', 'viewer')),
  created_at timestamptz not null default now(),
  primary key (workspace_id, user_id)
);
comment on table public.workspace_members is 'Who may use a workspace, and how: viewers read; editors also build, deploy and run workflows; admins also manage members and environment variables; owners also delete the workspace and appoint owners.';
comment on column public.workspace_members.role is 'owner > admin > editor > viewer; each role can do everything the ones below it can.';
create index workspace_members_user_id_idx on public.workspace_members (user_id);

-- Role helpers ---------------------------------------------------------------------------------

/**
 * A role's rank (owner 4, admin 3, editor 2, viewer 1, else 0), as PL/pgSQL for the same
 * reason as api_key_digest: every access check of the run lifecycle ranks two roles.
 */
create function workflows_private.role_rank(p_role text)
returns integer
language plpgsql
immutable
set search_path = ''
as $$
begin
  return case p_role when 'owner' then 4 when 'admin' then 3 when 'editor' then 2 when 'viewer' then 1 else 0 end;
end;
$$;
comment on function workflows_private.role_rank(text) is 'Rank of a workspace role: owner 4, admin 3, editor 2, viewer 1.';

/**
 * Workspaces where the caller holds at least `p_min_role`. Security definer so policies on
 * workspace_members itself can use it without recursing into their own RLS; it only ever reveals
 * the caller's own memberships.
 */
create function workflows_private.member_workspace_ids(p_min_role text)
returns setof uuid
language sql
stable
security definer
set search_path = ''
as $$
  select m.workspace_id
  from public.workspace_members m
  where m.user_id = (select auth.uid())
    and workflows_private.role_rank(m.role) >= workflows_private.role_rank(p_min_role);
$$;
comment on function workflows_private.member_workspace_ids(text) is 'Ids of the workspaces where the calling user holds at least the given role (for RLS policies).';

/** Whether the caller holds at least `p_min_role` in a workspace. */
create function workflows_private.has_workspace_role(p_workspace_id uuid, p_min_role text)
returns boolean
language sql
stable
security definer
set search_path = ''
as $$
  select exists (
    select 1 from public.workspace_members m
    where m.workspace_id = p_workspace_id
      and m.user_id = (select auth.uid())
      and workflows_private.role_rank(m.role) >= workflows_private.role_rank(p_min_role)
  );
$$;
comment on function workflows_private.has_workspace_role(uuid, text) is 'True when the calling user holds at least the given role in the workspace.';

/**
 * Raises insufficient_privilege (HTTP 403 through the data API) unless the caller holds the role,
 * naming what was refused. Used by the security-definer RPCs, which bypass RLS.
 */
create function workflows_private.require_workspace_role(p_workspace_id uuid, p_min_role text, p_action text)
returns void
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if (select auth.uid()) is null then
    raise exception 'Sign in to %', p_action using errcode = '42501';
  end if;
  if not workflows_private.has_workspace_role(p_workspace_id, p_min_role) then
    raise exception 'Only a workspace % or above may %', p_min_role, p_action using errcode = '42501';
  end if;
end;
$$;
comment on function workflows_private.require_workspace_role(uuid, text, text) is 'Raises 42501 unless the calling user holds at least the given role in the workspace.';

grant execute on function workflows_private.role_rank(text) to authenticated, service_role;
grant execute on function workflows_private.member_workspace_ids(text) to authenticated, service_role;
grant execute on function workflows_private.has_workspace_role(uuid, text) to authenticated, service_role;

/** Keeps updated_at current on every update. */
create function workflows_private.touch_updated_at()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.updated_at := now();
  return new;
end;
$$;
comment on function workflows_private.touch_updated_at() is 'Trigger: sets updated_at to now() on update.';

create trigger workspaces_touch_updated_at before update on public.workspaces
  for each row execute function workflows_private.touch_updated_at();

/**
 * A workspace always keeps an owner: refuses to demote or remove its last one. When the whole
 * workspace is being deleted its members cascade away with it, which is allowed.
 */
create function workflows_private.keep_an_owner()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if old.role = 'owner'
    and exists (select 1 from public.workspaces w where w.id = old.workspace_id)
    and not exists (select 1 from public.workspace_members m where m.workspace_id = old.workspace_id and m.role = 'owner')
  then
    raise exception 'A workspace needs at least one owner; appoint another owner first' using errcode = '23514';
  end if;
  return null;
end;
$$;
comment on function workflows_private.keep_an_owner() is 'Trigger: refuses to leave a workspace without an owner.';

create trigger workspace_members_keep_an_owner after update or delete on public.workspace_members
  for each row execute function workflows_private.keep_an_owner();

/**
 * The caller's role in a workspace, or null when they are not a member. Lets clients (and the
 * manual-run endpoint) decide what to offer without reading every membership row.
 */
create function public.my_workspace_role(p_workspace_id uuid)
returns text
language sql
stable
set search_path = ''
as $$
  select m.role from public.workspace_members m where m.workspace_id = p_workspace_id and m.user_id = (select auth.uid());
$$;
comment on function public.my_workspace_role(uuid) is 'The calling user''s role in the workspace (owner, admin, editor, viewer), or null.';

-- Creating a workspace -------------------------------------------------------------------------

/**
 * Creates a workspace with the caller as its owner. It is billed to `p_billing_account_id` (which
 * the caller must own) or, when omitted, to the caller's first account, created on the Free plan
 * if they have none. Security definer because the caller is not yet a member of the new workspace,
 * so no insert policy could let the first membership in.
 */
create function public.create_workspace(p_name text, p_billing_account_id uuid default null)
returns public.workspaces
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_user uuid := (select auth.uid());
  v_account uuid := p_billing_account_id;
  v_workspace public.workspaces;
begin
  if v_user is null then
    raise exception 'Sign in to create a workspace' using errcode = '42501';
  end if;
  if v_account is null then
    select a.id into v_account from public.billing_accounts a where a.owner_id = v_user order by a.created_at, a.id limit 1;
    if v_account is null then
      insert into public.billing_accounts (owner_id, name) values (v_user, 'Personal') returning id into v_account;
    end if;
  elsif not exists (select 1 from public.billing_accounts a where a.id = v_account and a.owner_id = v_user) then
    raise exception 'Billing account % is not yours', v_account using errcode = '42501';
  end if;
  insert into public.workspaces (name, billing_account_id, created_by) values (p_name, v_account, v_user) returning * into v_workspace;
  insert into public.workspace_members (workspace_id, user_id, role) values (v_workspace.id, v_user, 'owner');
  return v_workspace;
end;
$$;
comment on function public.create_workspace(text, uuid) is 'Creates a workspace owned by the caller, billed to the given account (theirs) or to their personal Free account.';

-- Access: default deny, then grants, then policies ----------------------------------------------

revoke all on public.billing_accounts, public.workspaces, public.workspace_members from public, anon, authenticated;
grant select on public.billing_accounts to authenticated;
grant select, update (name), delete on public.workspaces to authenticated;
grant select, insert, update (role), delete on public.workspace_members to authenticated;
grant all on public.billing_accounts, public.workspaces, public.workspace_members to service_role;

revoke execute on function public.create_workspace(text, uuid), public.my_workspace_role(uuid) from public, anon;
grant execute on function public.create_workspace(text, uuid), public.my_workspace_role(uuid) to authenticated, service_role;

alter table public.billing_accounts enable row level security;
alter table public.workspaces enable row level security;
alter table public.workspace_members enable row level security;

create policy "Owners and members of billed workspaces can read a billing account" on public.billing_accounts
  for select to authenticated
  using (
    owner_id = (select auth.uid())
    or id in (select w.billing_account_id from public.workspaces w where w.id in (select workflows_private.member_workspace_ids('viewer')))
  );

create policy "Members can read their workspaces" on public.workspaces
  for select to authenticated
  using (id in (select workflows_private.member_workspace_ids('viewer')));
create policy "Admins can rename their workspaces" on public.workspaces
  for update to authenticated
  using (id in (select workflows_private.member_workspace_ids('admin')))
  with check (id in (select workflows_private.member_workspace_ids('admin')));
create policy "Owners can delete their workspaces" on public.workspaces
  for delete to authenticated
  using (id in (select workflows_private.member_workspace_ids('owner')));

create policy "Members can see who else is in their workspaces" on public.workspace_members
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));
create policy "Admins change roles, and only owners touch owners" on public.workspace_members
  for update to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids(case when role = 'owner' then 'owner' else 'admin' end)))
  with check (workspace_id in (select workflows_private.member_workspace_ids(case when role = 'owner' then 'owner' else 'admin' end)));
create policy "Admins remove members, only owners remove owners, and anyone may leave" on public.workspace_members
  for delete to authenticated
  using (
    user_id = (select auth.uid())
    or workspace_id in (select workflows_private.member_workspace_ids(case when role = 'owner' then 'owner' else 'admin' end))
  );
-- Invitations ------------------------------------------------------------------------------------
-- Members join a workspace by accepting an invitation, as Sim and Supabase's own dashboard do:
-- - workspace_invitations: one pending invitation per (workspace, user). Its user_id has no
--   foreign key on purpose: inviting an id that is no user answers exactly as inviting one that
--   is (201), so an invitation reveals nothing; it simply can never be accepted.
-- - accept_workspace_invitation(workspace): the invited user becomes a member with the invited role.
-- - Admins do not insert memberships directly (no insert grant or policy on workspace_members);
--   creating a workspace makes its creator the owner (create_workspace, security definer).
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
revoke insert on public.workspace_members from authenticated;
revoke execute on function public.accept_workspace_invitation(uuid) from public, anon;
grant execute on function public.accept_workspace_invitation(uuid) to authenticated, service_role;
