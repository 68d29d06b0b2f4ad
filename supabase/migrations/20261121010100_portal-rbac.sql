-- Proposals portal, part 2: who is who. Profiles (one per auth user, created by a trigger on
-- auth.users), application roles in their own table (never in a column users can edit), and
-- has_role(), which every row-level policy of the portal calls.
--
-- Roles: super_admin (unrestricted, manages admins), admin (products, users, every row),
-- technician (own customers, proposals, commissions). A user may hold several; a user with none
-- sees only their own profile.

create type public.app_role as enum ('super_admin', 'admin', 'technician');
comment on type public.app_role is 'Application roles of the proposals portal.';

-- Profiles ----------------------------------------------------------------------------------------

create table public.profiles (
  user_id uuid primary key references auth.users (id) on delete cascade,
  full_name text not null default ''
    constraint profiles_full_name_length check (char_length(full_name) <= 200),
  email text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint profiles_full_name_no_control_characters check (shared_private.is_plain_text(full_name))
);
comment on table public.profiles is
  'Public details of each auth user (technicians, admins). Created automatically when the auth user is created.';
comment on column public.profiles.user_id is 'The auth user this profile describes (auth.users.id).';
comment on column public.profiles.full_name is 'Display name; taken from the sign-up metadata full_name, editable by the user.';
comment on column public.profiles.email is 'Copy of the auth e-mail, kept in sync by a trigger on auth.users; read-only for clients.';
comment on column public.profiles.created_at is 'When the profile was created.';
comment on column public.profiles.updated_at is 'When the profile last changed.';

create trigger profiles_set_updated_at
  before update on public.profiles
  for each row execute function portal_private.set_updated_at();

-- Roles -------------------------------------------------------------------------------------------

create table public.user_roles (
  id bigint generated always as identity primary key,
  user_id uuid not null references public.profiles (user_id) on delete cascade,
  role public.app_role not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint user_roles_user_id_role_key unique (user_id, role)
);
comment on table public.user_roles is
  'Application roles granted to users, one row per (user, role). Kept apart from profiles so users cannot promote themselves.';
comment on column public.user_roles.id is 'Surrogate key.';
comment on column public.user_roles.user_id is 'The user holding the role (profiles.user_id).';
comment on column public.user_roles.role is 'The granted role.';
comment on column public.user_roles.created_at is 'When the role was granted.';
comment on column public.user_roles.updated_at is 'When the row last changed.';

create trigger user_roles_set_updated_at
  before update on public.user_roles
  for each row execute function portal_private.set_updated_at();

/**
 * Whether a user holds any of the roles: "an admin or a super admin" is one call. Security definer
 * so callers need not read user_roles; it returns one boolean about one user and nothing else.
 */
create function portal_private.has_any_role(p_user_id uuid, p_roles public.app_role[])
returns boolean
language sql
stable
security definer
set search_path = ''
as $$
  select exists (
    select 1 from public.user_roles where user_id = p_user_id and role = any (p_roles)
  );
$$;
comment on function portal_private.has_any_role(uuid, public.app_role[]) is
  'True when the user holds at least one of the roles. For the portal''s functions that let admins and super admins alike through.';

-- The proposals' status trigger calls it as the signed-in caller.
revoke execute on function portal_private.has_any_role(uuid, public.app_role[]) from public, anon;
grant execute on function portal_private.has_any_role(uuid, public.app_role[]) to authenticated, service_role;

/**
 * Whether a user holds a role (has_any_role of one). Each policy names one audience, so policies
 * call this. The leading underscores in the argument names are the RPC contract (PostgREST matches
 * arguments by name).
 */
create function public.has_role(_user_id uuid, _role public.app_role)
returns boolean
language sql
stable
security definer
set search_path = ''
as $$
  select portal_private.has_any_role(_user_id, array[_role]);
$$;
comment on function public.has_role(uuid, public.app_role) is
  'True when the user holds the role. Used by every portal policy; callable as RPC by signed-in users.';

revoke execute on function public.has_role(uuid, public.app_role) from public, anon;
grant execute on function public.has_role(uuid, public.app_role) to authenticated, service_role;

/**
 * Why the caller may not reset `p_target`'s password, or null when they may: 'not_an_admin' for a
 * caller who is neither admin nor super admin (whoever the target, so it tells nothing about
 * which ids exist), 'target_is_super_admin' when an admin aims at a super admin, so an admin
 * cannot take over the one account above theirs.
 */
create function public.password_reset_refusal(p_target uuid)
returns text
language sql
stable
security definer
set search_path = ''
as $$
  select case
    when not portal_private.has_any_role((select auth.uid()), '{admin,super_admin}') then 'not_an_admin'
    when public.has_role(p_target, 'super_admin') and not public.has_role((select auth.uid()), 'super_admin') then 'target_is_super_admin'
  end;
$$;
comment on function public.password_reset_refusal(uuid) is
  'Null when the caller may reset the user''s password; otherwise not_an_admin or target_is_super_admin.';

revoke execute on function public.password_reset_refusal(uuid) from public, anon;
grant execute on function public.password_reset_refusal(uuid) to authenticated;

/**
 * Trigger function: refuses to remove or change the last super_admin grant, so the portal can
 * never lock itself out of its only unrestricted role.
 */
create function portal_private.keep_one_super_admin()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if old.role = 'super_admin'
    and (tg_op = 'DELETE' or new.role is distinct from old.role)
    and not exists (select 1 from public.user_roles where role = 'super_admin' and id <> old.id)
    -- A cascade from a deleted user is allowed: the account is gone either way.
    and exists (select 1 from public.profiles where user_id = old.user_id)
  then
    raise exception 'The last super_admin role cannot be removed'
      using errcode = 'check_violation', hint = 'Grant super_admin to another user first.';
  end if;
  return case when tg_op = 'DELETE' then old else new end;
end;
$$;
comment on function portal_private.keep_one_super_admin() is
  'BEFORE UPDATE/DELETE trigger on user_roles: keeps at least one super_admin.';

create trigger user_roles_keep_one_super_admin
  before update or delete on public.user_roles
  for each row execute function portal_private.keep_one_super_admin();

-- One profile per auth user -----------------------------------------------------------------------

/**
 * Trigger function on auth.users: creates the profile of every new user and keeps its e-mail in
 * sync. Security definer because the auth service (supabase_auth_admin) has no rights on public.
 * The name comes from user metadata the Auth service accepted as is, so it is made plain rather
 * than refused: a refusal here would turn the sign-up into a 500.
 */
create function portal_private.sync_profile_from_auth_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    insert into public.profiles (user_id, full_name, email)
    values (
      new.id,
      left(shared_private.plain_text_of(coalesce(new.raw_user_meta_data ->> 'full_name', new.raw_user_meta_data ->> 'name', '')), 200),
      new.email
    )
    on conflict (user_id) do nothing;
  elsif new.email is distinct from old.email then
    update public.profiles set email = new.email where user_id = new.id;
  end if;
  return new;
end;
$$;
comment on function portal_private.sync_profile_from_auth_user() is
  'AFTER INSERT/UPDATE trigger on auth.users: creates the user''s profile (name made plain) and keeps profiles.email in sync.';

create trigger on_auth_user_saved_sync_portal_profile
  after insert or update of email on auth.users
  for each row execute function portal_private.sync_profile_from_auth_user();

-- Privileges and row-level security ------------------------------------------------------------

alter table public.profiles enable row level security;
alter table public.user_roles enable row level security;

revoke all on public.profiles, public.user_roles from anon, authenticated, service_role;
grant select, update (full_name) on public.profiles to authenticated;
grant select, insert (user_id, role), update (role), delete on public.user_roles to authenticated;
grant select, insert, update, delete on public.profiles, public.user_roles to service_role;

create policy "Users can read their own profile" on public.profiles
  for select to authenticated
  using (user_id = (select auth.uid()));
create policy "Admins can read every profile" on public.profiles
  for select to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can read every profile" on public.profiles
  for select to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')));

create policy "Users can update their own profile" on public.profiles
  for update to authenticated
  using (user_id = (select auth.uid()))
  with check (user_id = (select auth.uid()));
create policy "Admins can update every profile" on public.profiles
  for update to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')))
  with check ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can update every profile" on public.profiles
  for update to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')))
  with check ((select public.has_role((select auth.uid()), 'super_admin')));

create policy "Users can read their own roles" on public.user_roles
  for select to authenticated
  using (user_id = (select auth.uid()));
create policy "Admins can read every role" on public.user_roles
  for select to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can read every role" on public.user_roles
  for select to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')));

create policy "Admins can grant the technician role" on public.user_roles
  for insert to authenticated
  with check (role = 'technician' and (select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can grant any role" on public.user_roles
  for insert to authenticated
  with check ((select public.has_role((select auth.uid()), 'super_admin')));

create policy "Super admins can change roles" on public.user_roles
  for update to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')))
  with check ((select public.has_role((select auth.uid()), 'super_admin')));

create policy "Admins can revoke the technician role" on public.user_roles
  for delete to authenticated
  using (role = 'technician' and (select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can revoke any role" on public.user_roles
  for delete to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')));

-- Nothing in portal_private is callable by PUBLIC (see the foundation migration).
revoke execute on all functions in schema portal_private from public;
