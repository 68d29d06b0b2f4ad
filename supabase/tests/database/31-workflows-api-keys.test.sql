-- Workflow service: API keys are shown once, stored as digests, listed to their owners (and to the
-- workspace's admins for workspace keys), revoked for good, and looked up by digest.
begin;
select plan(33);

insert into auth.users (id, email, aud, role) values
  ('a4000000-0000-4000-8000-000000000001', 'owner@keys.test', 'authenticated', 'authenticated'),
  ('a4000000-0000-4000-8000-000000000002', 'admin@keys.test', 'authenticated', 'authenticated'),
  ('a4000000-0000-4000-8000-000000000003', 'editor@keys.test', 'authenticated', 'authenticated'),
  ('a4000000-0000-4000-8000-000000000004', 'stranger@keys.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;

select pg_temp.act_as('a4000000-0000-4000-8000-000000000001');
select public.create_workspace('Keys');
reset role;
create temporary table ws as select id from public.workspaces where name = 'Keys';
insert into public.workspace_members (workspace_id, user_id, role) select id, 'a4000000-0000-4000-8000-000000000002', 'admin' from ws;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'a4000000-0000-4000-8000-000000000003', 'editor' from ws;
create temporary table made (label text, id uuid, key text, prefix text);
grant select, insert on ws, made to authenticated;

-- Creating keys ------------------------------------------------------------------------------------

select pg_temp.act_as('a4000000-0000-4000-8000-000000000003');
insert into made select 'editor personal', * from public.create_api_key('CI');
select ok((select key ~ '^orb_[0-9a-f]{48}$' from made where label = 'editor personal'), 'A key is orb_ followed by 48 random hex characters');
select is((select prefix from made where label = 'editor personal'), (select left(key, 12) from made where label = 'editor personal'), 'Its prefix is its first 12 characters');
select throws_ok($$select public.create_api_key('Mine now', (select id from ws))$$, '42501',
  'Only a workspace admin or above may create workspace API keys', 'An editor cannot create workspace keys');
select throws_ok($$select public.create_api_key('   ')$$, '23514', null, 'A key needs a name');

select pg_temp.act_as('a4000000-0000-4000-8000-000000000002');
insert into made select 'workspace', * from public.create_api_key('Production', (select id from ws));
select is((select workspace_id from public.api_keys where id = (select id from made where label = 'workspace')), (select id from ws), 'An admin creates a workspace key');
select is((select user_id from public.api_keys where id = (select id from made where label = 'workspace')), null, 'A workspace key has no owning user');
select is((select created_by from public.api_keys where id = (select id from made where label = 'workspace')), 'a4000000-0000-4000-8000-000000000002'::uuid, 'and records who created it');

select pg_temp.act_as('a4000000-0000-4000-8000-000000000004');
select throws_ok($$select public.create_api_key('Intruder', (select id from ws))$$, 'PT404', null, 'A stranger cannot create keys in a workspace they do not see (404)');
insert into made select 'stranger personal', * from public.create_api_key('Mine');
select set_config('request.jwt.claims', '{"role": "service_role"}', true), set_config('role', 'service_role', true);
select throws_ok($$select public.create_api_key('Nobody')$$, '42501', null, 'Keys belong to someone: the service role alone cannot create one');
reset role;

-- What is stored -----------------------------------------------------------------------------------

select is((select count(*)::int from workflows_private.api_key_hashes h join made m on m.id = h.api_key_id where h.key_hash = sha256(convert_to(m.key, 'UTF8'))), 3,
  'Each key is stored as the SHA-256 digest of its text');
select is((select count(*)::int from public.api_keys k join made m on m.id = k.id where to_jsonb(k)::text like '%' || m.key || '%'), 0,
  'No row holds a key''s text');

-- Who sees which keys ------------------------------------------------------------------------------

select pg_temp.act_as('a4000000-0000-4000-8000-000000000003');
select is((select array_agg(name order by name) from public.api_keys), array['CI'], 'An editor sees only their personal keys, not the workspace''s');
select throws_ok($$select * from workflows_private.api_key_hashes$$, '42501', null, 'No user can read the digests');
select pg_temp.act_as('a4000000-0000-4000-8000-000000000002');
select is((select array_agg(name order by name) from public.api_keys), array['Production'], 'An admin sees the workspace''s keys (and none of the members'' personal keys)');
select pg_temp.act_as('a4000000-0000-4000-8000-000000000001');
select is((select array_agg(name order by name) from public.api_keys), array['Production'], 'The owner, an admin too, sees the workspace''s keys');
select pg_temp.act_as('a4000000-0000-4000-8000-000000000004');
select is((select array_agg(name order by name) from public.api_keys), array['Mine'], 'A stranger sees only their own key');
select throws_ok($$insert into public.api_keys (name, prefix, user_id) values ('forged', 'orb_forged00', 'a4000000-0000-4000-8000-000000000004')$$,
  '42501', null, 'Keys cannot be inserted directly');
select throws_ok($$update public.api_keys set revoked_at = null$$, '42501', null, 'nor updated directly');
reset role;
select pg_temp.act_as('a4000000-0000-4000-8000-000000000004');
select throws_ok($$delete from public.api_keys$$, '42501', null, 'nor deleted directly');
reset role;

set local role anon;
set local request.jwt.claims = '{"role": "anon"}';
select throws_ok($$select * from public.api_keys$$, '42501', null, 'Signed-out visitors cannot read keys');
reset role;

-- Authenticating -----------------------------------------------------------------------------------

select is((workflows_private.authenticate_api_key((select key from made where label = 'workspace'))).id, (select id from made where label = 'workspace'), 'A live key authenticates as itself');
select ok((select last_used_at is not null from public.api_keys where id = (select id from made where label = 'workspace')), 'and is marked used');
update public.api_keys set last_used_at = now() - interval '30 seconds' where id = (select id from made where label = 'workspace');
select workflows_private.authenticate_api_key((select key from made where label = 'workspace'));
select is((select last_used_at from public.api_keys where id = (select id from made where label = 'workspace')), now() - interval '30 seconds',
  'A key used within the last minute is not written again');
select is((workflows_private.authenticate_api_key('orb_' || repeat('0', 48))).id, null, 'An unknown key authenticates nothing');
select is((workflows_private.authenticate_api_key('not a key')).id, null, 'nor does text that is not a key');
select is((workflows_private.authenticate_api_key(null)).id, null, 'nor does no key');

-- Revoking -----------------------------------------------------------------------------------------

select pg_temp.act_as('a4000000-0000-4000-8000-000000000003');
select throws_ok($$select public.revoke_api_key((select id from made where label = 'workspace'))$$, 'PT404', null, 'An editor cannot revoke the workspace''s keys (404)');
select throws_ok($$select public.revoke_api_key((select id from made where label = 'stranger personal'))$$, 'PT404', null, 'nor another user''s key');
select ok((select revoked_at is not null from public.revoke_api_key((select id from made where label = 'editor personal'))), 'A user revokes their own key');
select pg_temp.act_as('a4000000-0000-4000-8000-000000000002');
select ok((select revoked_at is not null from public.revoke_api_key((select id from made where label = 'workspace'))), 'An admin revokes a workspace key');
reset role;
update public.api_keys set revoked_at = now() - interval '1 day' where id = (select id from made where label = 'workspace');
select pg_temp.act_as('a4000000-0000-4000-8000-000000000002');
select is((select revoked_at from public.revoke_api_key((select id from made where label = 'workspace'))), now() - interval '1 day', 'Revoking again keeps the first revocation');
reset role;
select is((workflows_private.authenticate_api_key((select key from made where label = 'workspace'))).id, null, 'A revoked key authenticates nothing');

delete from auth.users where id = 'a4000000-0000-4000-8000-000000000004';
select is((select count(*)::int from workflows_private.api_key_hashes where api_key_id = (select id from made where label = 'stranger personal')), 0,
  'A deleted user''s keys go with them, digests included');

select * from finish();
rollback;
