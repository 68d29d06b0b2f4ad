-- The approval token never reaches a signed-in user through the data API: no column privilege on
-- it (so no SELECT, RETURNING, filter, sort, whole-row or embedded read), no exposed function or
-- view that hands it out, no audit entry that copies it. The server (service_role) still reads it
-- to put the link in the PDF and the e-mail.
begin;
select plan(28);

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

-- Privileges ----------------------------------------------------------------------------------------

select ok(not has_column_privilege('authenticated', 'public.proposals', 'approval_token', 'select'),
  'Signed-in users have no SELECT on approval_token');
select ok(not has_column_privilege('authenticated', 'public.proposals', 'approval_token', 'insert')
  and not has_column_privilege('authenticated', 'public.proposals', 'approval_token', 'update')
  and not has_column_privilege('authenticated', 'public.proposals', 'approval_token', 'references'),
  'Nor INSERT, UPDATE or REFERENCES on it');
select ok(not has_column_privilege('anon', 'public.proposals', 'approval_token', 'select'), 'Anonymous callers have none either');
select is_empty($$
  select attname from pg_attribute
  where attrelid = 'public.proposals'::regclass and attnum > 0 and not attisdropped and attname <> 'approval_token'
    and not has_column_privilege('authenticated', 'public.proposals', attname, 'select')
$$, 'Every other proposal column stays readable, so explicit column lists and embeddings keep working');
select ok(has_column_privilege('service_role', 'public.proposals', 'approval_token', 'select'),
  'The service role (the PDF and e-mail functions) still reads it');

-- Every way a technician could read it ------------------------------------------------------------

select portal_tests.act_as('tech_a');
select throws_ok($$ insert into public.proposals (customer_id, product_id, monthly_value, contract_months)
  values ((select id from ids where name = 'customer'), (select id from ids where name = 'product'), 100, 12) returning approval_token $$,
  '42501', 'permission denied for table proposals', 'A technician''s insert cannot return the token (Prefer: return=representation)');
select throws_ok($$ insert into public.proposals (customer_id, product_id, monthly_value, contract_months)
  values ((select id from ids where name = 'customer'), (select id from ids where name = 'product'), 100, 12) returning * $$,
  '42501', 'permission denied for table proposals', 'Nor return every column (select=*)');
with created as (
  insert into public.proposals (customer_id, product_id, monthly_value, contract_months)
  values ((select id from ids where name = 'customer'), (select id from ids where name = 'product'), 100, 12)
  returning id, code, status, approval_token_expires_at
)
insert into ids select 'created', id from created;
select isnt((select id from ids where name = 'created'), null, 'An insert returning the other columns works');
select throws_ok($$ update public.proposals set notes = 'x' where id = (select id from ids where name = 'created') returning approval_token $$,
  '42501', 'permission denied for table proposals', 'An update cannot return the token');
select throws_ok($$ select approval_token from public.proposals $$, '42501', 'permission denied for table proposals',
  'A technician cannot select the token of their own proposal');
select throws_ok($$ select * from public.proposals $$, '42501', 'permission denied for table proposals',
  'select * is refused rather than silently including it');
select throws_ok($$ select p from public.proposals p $$, '42501', 'permission denied for table proposals',
  'A whole-row reference is refused');
select throws_ok($$ select id from public.proposals where approval_token like 'a%' $$, '42501', 'permission denied for table proposals',
  'Filtering on it (guessing it a character at a time) is refused');
select throws_ok($$ select id from public.proposals order by approval_token $$, '42501', 'permission denied for table proposals',
  'Sorting on it is refused');
select throws_ok($$ select c.id, (select json_agg(p) from public.proposals p where p.customer_id = c.id) from public.customers c $$,
  '42501', 'permission denied for table proposals', 'Embedding proposals(*) in customers is refused');
select results_eq($$ select count(*)::integer from public.proposals where technician_id = portal_tests.uid('tech_a') $$, $$ values (2) $$,
  'Listing the proposals with named columns works');
select throws_ok($$ update public.proposals set approval_token = 'chosen' where id = (select id from ids where name = 'created') $$,
  '42501', 'permission denied for table proposals', 'A technician cannot overwrite the token with one they know');
reset role;

select portal_tests.act_as('admin_1');
select throws_ok($$ select approval_token from public.proposals $$, '42501', 'permission denied for table proposals',
  'An admin cannot read it through the data API either');
reset role;
select portal_tests.act_as('super_1');
select throws_ok($$ select approval_token from public.proposals $$, '42501', 'permission denied for table proposals',
  'Nor can a super admin');
reset role;

-- Nothing else hands it out ---------------------------------------------------------------------

create temporary table created_token on commit drop as
select approval_token as token from public.proposals where id = (select id from ids where name = 'created');
grant select on created_token to authenticated, service_role;

select is_empty($$
  select p.oid::regprocedure from pg_proc p
  where p.pronamespace = 'public'::regnamespace
    and (p.prorettype in ('public.proposals'::regtype, 'public._proposals'::regtype)
      or exists (select 1 from unnest(coalesce(p.proallargtypes, p.proargtypes::oid[])) as t where t in ('public.proposals'::regtype, 'public._proposals'::regtype)))
$$, 'No function in the exposed schema returns or takes a proposals row');
select is_empty($$
  select distinct v.oid::regclass from pg_depend d
  join pg_rewrite r on r.oid = d.objid
  join pg_class v on v.oid = r.ev_class
  where d.refobjid = 'public.proposals'::regclass
    and d.refobjsubid = (select attnum from pg_attribute where attrelid = 'public.proposals'::regclass and attname = 'approval_token')
    and v.oid <> 'public.proposals'::regclass
$$, 'No view reads the token column');
select is_empty($$
  select id from public.audit_log where details::text like '%' || (select token from created_token) || '%'
$$, 'The audit entry of a new proposal does not copy its token');

select portal_tests.act_as('tech_a');
select isnt(public.generate_approval_token(), (select token from created_token),
  'generate_approval_token draws a fresh token; it does not reveal the one a proposal got');
select is_empty($$
  select 1 from public.get_proposal_for_approval((select token from created_token)) g where to_jsonb(g)::text like '%' || (select token from created_token) || '%'
$$, 'The approval summary does not echo the token');
select results_eq($$ select outcome from public.respond_to_proposal('not-the-token', 'compras@alfa.test', 'approve') $$, $$ values ('unknown_token') $$,
  'Knowing the customer''s e-mail without the token approves nothing');
select results_eq($$ select status::text from public.proposals where id = (select id from ids where name = 'created') $$, $$ values ('pending') $$,
  'So the technician''s proposal stays pending');
reset role;

select portal_tests.act_as_anon();
select throws_ok($$ select approval_token from public.proposals $$, '42501', 'permission denied for table proposals',
  'Anonymous callers still cannot read it');
reset role;

set local role service_role;
select is((select approval_token from public.proposals where id = (select id from ids where name = 'created')), (select token from created_token),
  'The service role reads it, as the PDF and e-mail functions do');
reset role;

select * from finish();
rollback;
