-- Workflow service: no function of workflows_private is executable by PUBLIC or anon; the ones the
-- row-level security policies call stay executable by authenticated.
begin;
select plan(5);

select is(
  (select array_agg(p.oid::regprocedure::text order by p.oid::regprocedure::text) from pg_catalog.pg_proc p
   where p.pronamespace = 'workflows_private'::regnamespace
     and (p.proacl is null or exists (select 1 from aclexplode(p.proacl) a where a.grantee = 0 and a.privilege_type = 'EXECUTE'))),
  null,
  'No function of workflows_private is executable by PUBLIC (a null ACL would mean it is)');
select is(
  (select array_agg(p.oid::regprocedure::text order by p.oid::regprocedure::text) from pg_catalog.pg_proc p
   where p.pronamespace = 'workflows_private'::regnamespace and has_function_privilege('anon', p.oid, 'execute')),
  null,
  'No function of workflows_private is executable by anon');
select ok(has_function_privilege('authenticated', 'workflows_private.member_workspace_ids(text)', 'execute'),
  'The policies'' membership helper stays executable by signed-in users');
select ok(has_function_privilege('authenticated', 'workflows_private.owned_billing_account_ids()', 'execute'),
  'and so does the billing owner helper');
select ok(not has_function_privilege('authenticated', 'workflows_private.spend(uuid, text, boolean, numeric, timestamptz)', 'execute'),
  'while the lifecycle internals stay closed to them');

select * from finish();
rollback;
