-- The product catalogue: every signed-in user lists active products, technicians also see the
-- products of their own proposals, only admins and super admins write; values are checked and
-- every change is audited.
begin;
select plan(28);

select portal_tests.create_user('tech_a', '{technician}');
select portal_tests.create_user('tech_b', '{technician}');
select portal_tests.create_user('admin_1', '{admin}');
select portal_tests.create_user('super_1', '{super_admin}');

create temporary table ids (name text primary key, id uuid) on commit drop;
grant select on ids to authenticated, anon;
insert into ids values
  ('active', portal_tests.create_product('Catalogue Active')),
  ('retired', portal_tests.create_product('Catalogue Retired', _active => false)),
  ('used', portal_tests.create_product('Catalogue Used'));
insert into ids values ('customer_a', portal_tests.create_customer('tech_a', 'Catalogue Customer', '11222333000181'));
select portal_tests.create_proposal('tech_a', (select id from ids where name = 'customer_a'), (select id from ids where name = 'used'));
update public.products set is_active = false where id = (select id from ids where name = 'used');

-- Reading --------------------------------------------------------------------------------------------

select portal_tests.act_as_anon();
select throws_ok($$ select * from public.products $$, '42501', 'permission denied for table products', 'Anonymous callers cannot read products');
reset role;

select portal_tests.act_as('tech_b');
select is_empty($$ select 1 from public.products where not is_active $$, 'A technician sees no inactive product of others');
select ok(exists (select 1 from public.products where id = (select id from ids where name = 'active')), 'A technician lists active products');
reset role;

select portal_tests.act_as('tech_a');
select results_eq($$ select name from public.products where not is_active $$, $$ values ('Catalogue Used') $$,
  'A technician still sees the retired product of their own proposal, and no other');
select throws_ok($$ insert into public.products (name, monthly_price, product_type, commission_percentage) values ('Nope', 1, 'test', 0.1) $$,
  '42501', 'new row violates row-level security policy for table "products"', 'A technician cannot create products');
select is_empty($$ update public.products set monthly_price = 1 where id = (select id from ids where name = 'active') returning 1 $$,
  'A technician cannot edit products');
select is_empty($$ delete from public.products where id = (select id from ids where name = 'active') returning 1 $$,
  'A technician cannot remove products');
reset role;

select portal_tests.act_as('admin_1');
select is((select count(*) from public.products), portal_tests.count_rows('public.products'), 'An admin reads every product, active or not');
reset role;
select portal_tests.act_as('super_1');
select is((select count(*) from public.products), portal_tests.count_rows('public.products'), 'A super admin reads every product, active or not');
reset role;

-- Writing as an admin ------------------------------------------------------------------------------

select portal_tests.act_as('admin_1');
select lives_ok($$ insert into public.products (name, description, price, monthly_price, product_type, commission_percentage)
  values ('Microsoft 365 E3', 'Pacote E3', 0, 199.90, 'microsoft_365', 0.12) $$, 'An admin can create a product');
select results_eq($$ update public.products set monthly_price = 209.90 where name = 'Microsoft 365 E3' returning monthly_price $$,
  $$ values (209.90::numeric) $$, 'An admin can edit a product');
select lives_ok($$ update public.products set monthly_price = 209.90 where name = 'Microsoft 365 E3' $$, 'A no-op edit is accepted');
select throws_ok($$ insert into public.products (name, monthly_price, product_type, commission_percentage) values ('Negative', -1, 'test', 0.1) $$,
  '23514', null, 'A negative monthly price is refused');
select throws_ok($$ insert into public.products (name, price, monthly_price, product_type, commission_percentage) values ('Negative', -5, 1, 'test', 0.1) $$,
  '23514', null, 'A negative price is refused');
select throws_ok($$ insert into public.products (name, monthly_price, product_type, commission_percentage) values ('Too generous', 1, 'test', 1.5) $$,
  '23514', null, 'A commission rate above 1 (100 %) is refused');
select throws_ok($$ insert into public.products (name, monthly_price, product_type, commission_percentage) values ('Negative rate', 1, 'test', -0.1) $$,
  '23514', null, 'A negative commission rate is refused');
select throws_ok($$ insert into public.products (name, monthly_price, product_type, commission_percentage) values ('microsoft 365 e3', 1, 'test', 0.1) $$,
  '23505', null, 'Product names are unique regardless of case');
select throws_ok($$ delete from public.products where id = (select id from ids where name = 'used') $$,
  '23503', null, 'A product used by a proposal cannot be removed (deactivate it instead)');
select results_eq($$ delete from public.products where name = 'Microsoft 365 E3' returning name $$,
  $$ values ('Microsoft 365 E3') $$, 'An admin can remove an unused product');
reset role;

-- Writing as a super admin -----------------------------------------------------------------------

select portal_tests.act_as('super_1');
select lives_ok($$ insert into public.products (name, monthly_price, product_type, commission_percentage) values ('Vivo Fibra', 99.90, 'internet', 0.08) $$,
  'A super admin can create a product');
select results_eq($$ update public.products set is_active = false where name = 'Vivo Fibra' returning is_active $$,
  $$ values (false) $$, 'A super admin can edit a product');
select results_eq($$ delete from public.products where name = 'Vivo Fibra' returning name $$,
  $$ values ('Vivo Fibra') $$, 'A super admin can remove a product');
reset role;

-- Audit and updated_at ---------------------------------------------------------------------------

select results_eq($$
  select action, actor_id from public.audit_log
  where entity_type = 'product' and (details -> 'product' ->> 'name' = 'Microsoft 365 E3'
    or entity_id in (select entity_id from public.audit_log where details -> 'product' ->> 'name' = 'Microsoft 365 E3'))
  order by id
$$, $$ values
  ('product.created', portal_tests.uid('admin_1')),
  ('product.updated', portal_tests.uid('admin_1')),
  ('product.deleted', portal_tests.uid('admin_1'))
$$, 'Creating, editing and removing a product are audited with the admin as actor; a no-op edit is not');
select is(
  (select details -> 'changes' -> 'monthly_price' from public.audit_log
   where action = 'product.updated' and entity_id = (select entity_id from public.audit_log where details -> 'product' ->> 'name' = 'Microsoft 365 E3' limit 1)),
  '{"old": 199.90, "new": 209.90}'::jsonb,
  'A product.updated entry names the changed column with old and new values'
);
select results_eq($$
  select action from public.audit_log
  where entity_type = 'product' and entity_id = (select id::text from ids where name = 'used') order by id
$$, $$ values ('product.created'), ('product.updated') $$, 'Deactivating a product is audited as an update');
select is(
  (select details -> 'changes' -> 'is_active' from public.audit_log
   where action = 'product.updated' and entity_id = (select id::text from ids where name = 'used')),
  '{"old": true, "new": false}'::jsonb, 'The deactivation entry records is_active true → false'
);
update public.products set updated_at = now() - interval '1 day', created_at = now() - interval '1 day' where id = (select id from ids where name = 'active');
select is((select updated_at from public.products where id = (select id from ids where name = 'active')), now(),
  'Updating a product refreshes updated_at');
select is((select created_at from public.products where id = (select id from ids where name = 'active')), now() - interval '1 day',
  'created_at is left alone by updates');

select * from finish();
rollback;
