-- The approval token never reaches a signed-in user: only its SHA-256 digest is stored, in
-- portal_private.proposal_approval_tokens, which no API role can read (no privilege, RLS with no
-- policy, a schema PostgREST does not expose). proposals holds nothing secret, so `select *`,
-- RETURNING and embeddings work for everyone RLS lets read the rows. Only the service role issues
-- a token (send-proposal-email, which puts the clear token in the customer's e-mail).
begin;
select plan(39);

select portal_tests.create_user('tech_a', '{technician}');
select portal_tests.create_user('admin_1', '{admin}');
select portal_tests.create_user('super_1', '{super_admin}');

create temporary table ids (name text primary key, id uuid) on commit drop;
grant select, insert on ids to authenticated;
grant select on ids to service_role;
insert into ids values
  ('product', portal_tests.create_product('Token Product', 100, 0.1)),
  ('customer', portal_tests.create_customer('tech_a', 'Alfa Token', '11222333000181', 'compras@alfa.test'));
insert into ids values ('existing', portal_tests.create_proposal('tech_a', (select id from ids where name = 'customer'), (select id from ids where name = 'product')));

-- The digest table ---------------------------------------------------------------------------------

select has_table('portal_private', 'proposal_approval_tokens', 'Token digests live in portal_private.proposal_approval_tokens');
select hasnt_column('public', 'proposals', 'approval_token', 'proposals has no clear-token column any more');
select col_type_is('portal_private', 'proposal_approval_tokens', 'token_digest', 'bytea', 'The token is kept as a digest (bytea)');
select ok((select relrowsecurity from pg_class where oid = 'portal_private.proposal_approval_tokens'::regclass),
  'RLS is on for the digest table');
select is_empty($$ select policyname from pg_policies where schemaname = 'portal_private' and tablename = 'proposal_approval_tokens' $$,
  'It has no policy, so RLS gives no API role a row');
select ok(not has_table_privilege(r, 'portal_private.proposal_approval_tokens', 'select, insert, update, delete, truncate, references, trigger'),
  format('%s holds no privilege on the digest table', r))
from unnest(array['anon', 'authenticated', 'service_role']) as r;
select ok(not has_function_privilege(r, 'public.issue_approval_token(uuid)', 'execute'), format('%s cannot issue a token', r))
from unnest(array['anon', 'authenticated']) as r;
select ok(has_function_privilege('service_role', 'public.issue_approval_token(uuid)', 'execute'),
  'The service role (send-proposal-email) issues tokens');
select is_empty($$
  select attname from pg_attribute
  where attrelid = 'public.proposals'::regclass and attnum > 0 and not attisdropped
    and not has_column_privilege('authenticated', 'public.proposals', attname, 'select')
$$, 'Every proposal column is readable by signed-in users (RLS picks the rows)');

-- Issuing -------------------------------------------------------------------------------------------

create temporary table issued on commit drop as
select public.issue_approval_token(id) as token, code from public.proposals where id = (select id from ids where name = 'existing');
grant select on issued to anon, authenticated, service_role;
select matches((select token from issued), '^[A-Za-z0-9_-]{43}$', 'An issued token is 43 base64url characters (256 bits)');
select is((select token_digest from portal_private.proposal_approval_tokens where proposal_id = (select id from ids where name = 'existing')),
  sha256(convert_to((select token from issued), 'UTF8')), 'Only its SHA-256 digest is stored');
select is_empty($$ select 1 from portal_private.proposal_approval_tokens t, issued i where position(convert_to(i.token, 'UTF8') in t.token_digest) > 0 $$,
  'The clear token is nowhere in the table');
select is_empty($$ select id from public.audit_log where details::text like '%' || (select token from issued) || '%' $$,
  'No audit entry copies it');
select throws_ok($$ select public.issue_approval_token('00000000-0000-4000-8000-0000000000ff') $$, 'P0002', null,
  'Issuing for an unknown proposal is refused');

-- Every signed-in user reads proposals with *, and never the token ----------------------------------

select portal_tests.act_as('tech_a');
with created as (
  insert into public.proposals (customer_id, product_id, monthly_value, contract_months)
  values ((select id from ids where name = 'customer'), (select id from ids where name = 'product'), 100, 12)
  returning *
)
insert into ids select 'created', id from created;
select isnt((select id from ids where name = 'created'), null, 'A technician''s insert returning * works (insert().select())');
select results_eq($$ select count(*)::integer from (select * from public.proposals) p $$, $$ values (2) $$,
  'select * lists the technician''s proposals');
select lives_ok($$ update public.proposals set notes = 'x' where id = (select id from ids where name = 'created') returning * $$,
  'An update returning * works (update().select())');
select results_eq($$ select jsonb_array_length(coalesce((select json_agg(p) from public.proposals p where p.customer_id = c.id)::jsonb, '[]')) from public.customers c $$,
  $$ values (2) $$, 'Embedding proposals(*) in customers works (whole-row references)');
select throws_ok($$ select * from portal_private.proposal_approval_tokens $$, '42501', null,
  'A technician cannot read the digest table');
select throws_ok($$ update portal_private.proposal_approval_tokens set token_digest = sha256('mine') $$, '42501', null,
  'Nor overwrite a digest with one of a token they know');
select throws_ok($$ insert into portal_private.proposal_approval_tokens (proposal_id, token_digest) values ((select id from ids where name = 'created'), sha256('mine')) $$,
  '42501', null, 'Nor plant one for their own new proposal');
select throws_ok($$ select public.issue_approval_token((select id from ids where name = 'created')) $$, '42501', null,
  'Nor issue a token for their own proposal');
select results_eq($$ select outcome from public.respond_to_proposal('not-the-token', 'compras@alfa.test', 'approve') $$, $$ values ('unknown_token') $$,
  'Knowing the customer''s e-mail without the token approves nothing');
select isnt(public.generate_approval_token(), (select token from issued),
  'generate_approval_token draws a fresh token; it does not reveal the one a proposal got');
select is_empty($$
  select 1 from public.get_proposal_for_approval((select token from issued)) g where to_jsonb(g)::text like '%' || (select token from issued) || '%'
$$, 'The approval summary does not echo the token');
reset role;

select portal_tests.act_as('admin_1');
select results_eq($$ select count(*)::integer from (select * from public.proposals where technician_id = portal_tests.uid('tech_a')) p $$, $$ values (2) $$,
  'An admin reads every proposal with select *');
select throws_ok($$ select * from portal_private.proposal_approval_tokens $$, '42501', null, 'An admin cannot read the digest table');
select throws_ok($$ select public.issue_approval_token((select id from ids where name = 'existing')) $$, '42501', null, 'Nor issue a token');
reset role;

select portal_tests.act_as('super_1');
select lives_ok($$ select * from public.proposals $$, 'A super admin reads proposals with select *');
select throws_ok($$ select * from portal_private.proposal_approval_tokens $$, '42501', null, 'A super admin cannot read the digest table either');
reset role;

select portal_tests.act_as_anon();
select throws_ok($$ select * from portal_private.proposal_approval_tokens $$, '42501', null, 'Anonymous callers cannot read the digest table');
select throws_ok($$ select * from public.proposals $$, '42501', 'permission denied for table proposals', 'Nor list proposals');
select results_eq($$ select code from public.get_proposal_for_approval((select token from issued)) $$,
  $$ select code from issued $$,
  'The issued token opens its proposal''s summary (matched by digest)');
reset role;

-- A new token replaces the old one ------------------------------------------------------------------

select isnt(public.issue_approval_token((select id from ids where name = 'existing')), (select token from issued), 'Issuing again gives a new token');
select is_empty($$ select 1 from public.get_proposal_for_approval((select token from issued)) $$,
  'and the previous one stops working (the newest e-mail holds the only working link)');
select portal_tests.set_status((select id from ids where name = 'created'), 'cancelled');
select throws_ok($$ select public.issue_approval_token((select id from ids where name = 'created')) $$, 'P0001', null,
  'No token is issued for a proposal that is no longer pending');

select * from finish();
rollback;
