-- Supabase's cluster roles on a plain Debian Postgres. On `supabase start` and hosted projects the
-- image creates these; here the local platform does, once, right after initdb. The bootstrap
-- superuser is supabase_admin (as on Supabase); postgres is demoted the way Supabase demotes it, so
-- migrations that only work as a superuser fail here as they would on a hosted project.

create role postgres with login createdb createrole replication bypassrls password 'postgres';

create role anon nologin noinherit;
create role authenticated nologin noinherit;
create role service_role nologin noinherit bypassrls;
-- Supabase's 2023-05 migration made the API roles inheriting.
alter role anon inherit;
alter role authenticated inherit;
alter role service_role inherit;

create role authenticator with login noinherit password 'postgres';
grant anon, authenticated, service_role to authenticator;

create role supabase_auth_admin with login noinherit createrole password 'postgres';
create role supabase_storage_admin with login noinherit createrole password 'postgres';
grant authenticator, anon, authenticated, service_role to supabase_storage_admin;

create role dashboard_user with nologin createdb createrole replication;

-- postgres can become any API role, so `set local role authenticated` works in tests and seeds.
grant anon, authenticated, service_role to postgres with admin option;
-- Membership in the service owners lets migrations add RLS policies and triggers on auth.users and
-- storage.objects, as Supabase's grant_auth_roles_to_postgres migration allows.
grant supabase_auth_admin, supabase_storage_admin to postgres;

alter role anon set statement_timeout = '3s';
alter role authenticated set statement_timeout = '8s';
alter role authenticator set statement_timeout = '8s';
alter role authenticator set lock_timeout = '8s';

alter role supabase_admin set search_path = "$user", public, auth, extensions;
alter role postgres set search_path = "$user", public, extensions;
alter role supabase_auth_admin set search_path = auth;
alter role supabase_storage_admin set search_path = storage;

grant all on database postgres to postgres;
grant connect on database postgres to anon, authenticated, service_role, authenticator,
  supabase_auth_admin, supabase_storage_admin;
