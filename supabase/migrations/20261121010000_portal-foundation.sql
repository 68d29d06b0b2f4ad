-- Proposals portal, part 1: the private schema that holds the portal's internals (trigger
-- functions, validators, counters) and the updated_at helper every portal table uses.
--
-- PostgREST exposes only the schemas listed in config.toml ([api] schemas), so nothing in
-- portal_private is reachable over HTTP. The API roles still get USAGE on it because invoker
-- trigger functions resolve helpers by name as the calling role; EXECUTE is granted function by
-- function, never by default.

create schema portal_private;
comment on schema portal_private is
  'Internals of the proposals portal (trigger functions, validators, counters). Not exposed by the data API.';

revoke all on schema portal_private from public;
grant usage on schema portal_private to authenticated, service_role;

/**
 * Trigger function: stamps updated_at with the transaction time on every UPDATE, so clients never
 * have to (and cannot) set it themselves.
 */
create function portal_private.set_updated_at()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.updated_at := now();
  return new;
end;
$$;
comment on function portal_private.set_updated_at() is
  'BEFORE UPDATE trigger: sets updated_at to now() on every portal table.';

revoke execute on all functions in schema portal_private from public;
revoke execute on all functions in schema portal_private from public;
