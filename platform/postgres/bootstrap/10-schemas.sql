-- Schemas, extensions and default privileges as the Supabase image sets them.

alter schema public owner to postgres;
grant usage on schema public to anon, authenticated, service_role;
grant create on schema public to postgres;

create schema if not exists extensions;
grant usage on schema extensions to postgres, anon, authenticated, service_role;
grant all on schema extensions to postgres with grant option;

create extension if not exists "uuid-ossp" with schema extensions;
create extension if not exists pgcrypto with schema extensions;
-- plpgsql_check is what `supabase db lint` runs; it is not a trusted extension, so it is created
-- here the way the Supabase image makes it available.
create extension if not exists plpgsql_check with schema extensions;

create schema if not exists graphql_public;
grant usage on schema graphql_public to postgres, anon, authenticated, service_role;

-- pg_cron is preloaded (shared_preload_libraries) and owned by the bootstrap superuser; postgres
-- schedules jobs, as on Supabase once the Cron integration is enabled.
create extension if not exists pg_cron;
grant usage on schema cron to postgres;
grant all on all tables in schema cron to postgres;
grant all on all sequences in schema cron to postgres;
grant all on all routines in schema cron to postgres;

-- Default privileges as a 2026 Supabase project has them: objects supabase_admin creates in public
-- are granted to the API roles, but those postgres creates (every migration) are not, since new
-- projects no longer auto-expose tables. Migrations therefore grant explicitly, which also keeps
-- them portable to older projects that still auto-expose.
alter default privileges for role postgres in schema public grant all on tables to postgres;
alter default privileges for role postgres in schema public grant all on functions to postgres;
alter default privileges for role postgres in schema public grant all on sequences to postgres;
alter default privileges for role supabase_admin in schema public grant all on tables to postgres, anon, authenticated, service_role;
alter default privileges for role supabase_admin in schema public grant all on functions to postgres, anon, authenticated, service_role;
alter default privileges for role supabase_admin in schema public grant all on sequences to postgres, anon, authenticated, service_role;

-- Realtime's publication exists (empty) on every Supabase database; migrations may add tables to it.
create publication supabase_realtime;

-- PostgREST reloads its schema cache when DDL runs, as Supabase's pgrst_ddl_watch triggers arrange.
create or replace function extensions.pgrst_ddl_watch() returns event_trigger
language plpgsql as $$
declare
  cmd record;
begin
  for cmd in select * from pg_event_trigger_ddl_commands() loop
    if cmd.command_tag in (
      'CREATE SCHEMA', 'ALTER SCHEMA', 'CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO', 'ALTER TABLE',
      'CREATE FOREIGN TABLE', 'ALTER FOREIGN TABLE', 'CREATE VIEW', 'ALTER VIEW',
      'CREATE MATERIALIZED VIEW', 'ALTER MATERIALIZED VIEW', 'CREATE FUNCTION', 'ALTER FUNCTION',
      'CREATE TRIGGER', 'CREATE TYPE', 'ALTER TYPE', 'CREATE RULE', 'COMMENT')
      and cmd.schema_name is distinct from 'pg_temp' then
      notify pgrst, 'reload schema';
    end if;
  end loop;
end $$;

create or replace function extensions.pgrst_drop_watch() returns event_trigger
language plpgsql as $$
declare
  obj record;
begin
  for obj in select * from pg_event_trigger_dropped_objects() loop
    if obj.object_type in ('schema', 'table', 'foreign table', 'view', 'materialized view',
      'function', 'trigger', 'type', 'rule') and obj.is_temporary is false then
      notify pgrst, 'reload schema';
    end if;
  end loop;
end $$;

create event trigger pgrst_ddl_watch on ddl_command_end execute procedure extensions.pgrst_ddl_watch();
create event trigger pgrst_drop_watch on sql_drop execute procedure extensions.pgrst_drop_watch();
