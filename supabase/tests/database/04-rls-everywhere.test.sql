-- Row-level security on every table the project creates, in every schema it owns: a table added
-- without it fails here, whichever domain it belongs to (each domain's tests check its own policies).
begin;
select plan(6);

select is_empty($$
  select n.nspname || '.' || c.relname
  from pg_class c
  join pg_namespace n on n.oid = c.relnamespace
  where c.relkind in ('r', 'p')
    and n.nspname in ('public', 'gamificacao', 'portal_private', 'shared_private', 'workflows_private')
    and not c.relrowsecurity
  order by 1
$$, 'Every table in public and the project''s own schemas has row-level security on');

select is_empty($$
  select n.nspname || '.' || c.relname || ' to ' || g.grantee
  from pg_class c
  join pg_namespace n on n.oid = c.relnamespace
  join information_schema.role_table_grants g on g.table_schema = n.nspname and g.table_name = c.relname
  where c.relkind in ('r', 'p')
    and n.nspname in ('gamificacao', 'portal_private', 'shared_private', 'workflows_private')
    and g.grantee in ('anon', 'authenticated', 'PUBLIC')
    and not (n.nspname = 'workflows_private' and c.relname in ('block_types', 'schemas') and g.grantee = 'authenticated' and g.privilege_type = 'SELECT')
  order by 1
$$, 'No table in a private schema is granted to the API roles, but the two workflow catalogues');

-- The catalogues' read policies: signed-in users read them; anonymous callers cannot reach them.
set local role authenticated;
set local request.jwt.claims = '{"sub": "8f7ad3f4-2f4c-4a5e-9a59-6b1f9c1b2f10", "role": "authenticated"}';
select ok((select count(*) from workflows_private.block_types) > 0, 'A signed-in user reads the block catalogue');
select ok((select count(*) from workflows_private.schemas) > 0, 'A signed-in user reads the config schemas');
reset role;
set local role anon;
select throws_ok('select count(*) from workflows_private.block_types', '42501', null, 'An anonymous caller cannot read the block catalogue');
select throws_ok('select count(*) from workflows_private.schemas', '42501', null, 'An anonymous caller cannot read the config schemas');
reset role;

select * from finish();
rollback;
