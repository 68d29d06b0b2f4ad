-- Workflow service: nobody but the roles that need them may call the functions of the private
-- schema workflows_private.
--
-- The part-1 migrations meant to deny PUBLIC by default with `alter default privileges in schema
-- workflows_private revoke execute on functions from public`, but per-schema default privileges
-- can only add to the global defaults, never take away from them, so every function created there
-- kept PUBLIC's EXECUTE (ACL `=X/postgres`, or no ACL at all, which means the same). Schema USAGE
-- is granted only to authenticated and service_role, so no anonymous request could reach them,
-- but the privilege was still wider than intended. This revokes it from every function in the
-- schema; the explicit grants already made (authenticated for the helpers the row-level security
-- policies call, such as member_workspace_ids and owned_billing_account_ids; authenticated and
-- service_role for the validator the save trigger runs) stay as they are. Trigger functions need
-- no EXECUTE to fire.
--
-- A function added to workflows_private later must revoke EXECUTE from public itself;
-- supabase/tests/database/32-workflows-private-execute.test.sql names any that does not.

do $$
declare
  v_function regprocedure;
begin
  for v_function in
    select p.oid::regprocedure from pg_catalog.pg_proc p
    where p.pronamespace = 'workflows_private'::regnamespace
  loop
    execute format('revoke execute on function %s from public, anon', v_function);
  end loop;
end;
$$;
