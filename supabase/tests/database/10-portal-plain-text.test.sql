-- Control characters in the portal's typed text, written the way clients write it (as the signed-in
-- technician or admin): names and addresses refuse every control character, product descriptions
-- and proposal notes accept tabs and line breaks only, and a name from sign-up metadata is made
-- plain rather than failing the sign-up.
begin;
select plan(20);

select portal_tests.create_user('tech_a', '{technician}');
select portal_tests.create_user('admin_1', '{admin}');

create temporary table ids (name text primary key, id uuid) on commit drop;
grant select, insert on ids to authenticated;
insert into ids values
  ('product', portal_tests.create_product('Plain Product', 100, 0.1)),
  ('customer', portal_tests.create_customer('tech_a', 'Alfa Plain', '11222333000181'));
insert into ids values ('proposal', portal_tests.create_proposal('tech_a', (select id from ids where name = 'customer'), (select id from ids where name = 'product')));

-- Profiles ------------------------------------------------------------------------------------------

select portal_tests.act_as('tech_a');
select throws_ok($$ update public.profiles set full_name = E'Ana\tSouza' where user_id = portal_tests.uid('tech_a') $$,
  '23514', 'new row for relation "profiles" violates check constraint "profiles_full_name_no_control_characters"',
  'A user cannot rename themselves with a tab in the name');
select throws_ok($$ update public.profiles set full_name = 'Ana' || chr(133) || 'Souza' where user_id = portal_tests.uid('tech_a') $$,
  '23514', null, 'Nor with a C1 control character (NEL)');
select lives_ok($$ update public.profiles set full_name = 'Ana Souza-Dória' where user_id = portal_tests.uid('tech_a') $$,
  'An ordinary name with accents and a hyphen is accepted');

-- Customers -----------------------------------------------------------------------------------------

select throws_ok($$ insert into public.customers (company_name, contact_name, email, phone, cnpj)
  values (E'Bravo\u0007 Ltda', 'Bia', 'bia@bravo.test', '11987654321', '33444555000181') $$,
  '23514', 'new row for relation "customers" violates check constraint "customers_company_name_no_control_characters"',
  'A company name with a bell character is refused');
select throws_ok($$ insert into public.customers (company_name, contact_name, email, phone, cnpj)
  values ('Bravo Ltda', E'Bia\nSouza', 'bia@bravo.test', '11987654321', '33444555000181') $$,
  '23514', 'new row for relation "customers" violates check constraint "customers_contact_name_no_control_characters"',
  'A contact name with a line break is refused');
select throws_ok($$ update public.customers set street = E'Rua A\r\n100' where id = (select id from ids where name = 'customer') $$,
  '23514', 'new row for relation "customers" violates check constraint "customers_street_no_control_characters"',
  'A street with a line break is refused');
select throws_ok($$ update public.customers set city = E'S\u001bo Paulo' where id = (select id from ids where name = 'customer') $$,
  '23514', 'new row for relation "customers" violates check constraint "customers_city_no_control_characters"',
  'A city with an escape character is refused');
select lives_ok($$ update public.customers set street = 'Av. Paulista, 1000 – 5º andar', city = 'São Paulo' where id = (select id from ids where name = 'customer') $$,
  'An ordinary address is accepted');

-- Proposals -----------------------------------------------------------------------------------------

select lives_ok($$ update public.proposals set notes = E'Cliente pediu:\n\t- instalação em março\r\n- 2 pontos' where id = (select id from ids where name = 'proposal') $$,
  'Notes may span lines and hold tabs');
select throws_ok($$ update public.proposals set notes = E'ok\u0008' where id = (select id from ids where name = 'proposal') $$,
  '23514', 'new row for relation "proposals" violates check constraint "proposals_notes_no_control_characters"',
  'Notes with a backspace are refused');
select throws_ok($$ insert into public.proposals (customer_id, product_id, monthly_value, contract_months, notes)
  values ((select id from ids where name = 'customer'), (select id from ids where name = 'product'), 100, 12, E'\u007f') $$,
  '23514', null, 'A new proposal with DEL in its notes is refused');
reset role;

-- Products and holidays (admins) ------------------------------------------------------------------

select portal_tests.act_as('admin_1');
select throws_ok($$ insert into public.products (name, description, monthly_price, product_type, commission_percentage)
  values (E'Fibra\n500', 'Plano', 100, 'fibra', 0.1) $$,
  '23514', 'new row for relation "products" violates check constraint "products_name_no_control_characters"',
  'A product name with a line break is refused');
select lives_ok($$ insert into public.products (name, description, monthly_price, product_type, commission_percentage)
  values ('Fibra 500 Mega', E'Inclui:\n\t- roteador\n\t- instalação', 100, 'fibra', 0.1) $$,
  'A product description may span lines and hold tabs');
select throws_ok($$ update public.products set description = E'Plano\u000c' where name = 'Fibra 500 Mega' $$,
  '23514', 'new row for relation "products" violates check constraint "products_description_no_control_characters"',
  'A product description with a form feed is refused');
select throws_ok($$ insert into public.holidays (holiday_date, name, kind) values ('2031-07-09', E'Revolu\u0009ção', 'national') $$,
  '23514', 'new row for relation "holidays" violates check constraint "holidays_name_no_control_characters"',
  'A holiday name with a tab is refused');
reset role;

select results_eq($$ select full_name from public.profiles where user_id = portal_tests.uid('tech_a') $$, $$ values ('Ana Souza-Dória') $$,
  'The refused renames changed nothing');
select results_eq($$ select company_name, street, city from public.customers where technician_id = portal_tests.uid('tech_a') $$,
  $$ values ('Alfa Plain', 'Av. Paulista, 1000 – 5º andar', 'São Paulo') $$, 'Nor did the refused customer writes');

-- Names from sign-up metadata -------------------------------------------------------------------

insert into auth.users (instance_id, id, aud, role, email, encrypted_password, raw_app_meta_data, raw_user_meta_data,
  created_at, updated_at, confirmation_token, recovery_token, email_change_token_new, email_change)
values ('00000000-0000-0000-0000-000000000000', 'f1a1a000-0000-4000-8000-000000000001', 'authenticated', 'authenticated',
  'metadata@portal.test', '', '{}', jsonb_build_object('full_name', E'\tBeto\u0007\u0007Lima\n'), now(), now(), '', '', '', '');
select results_eq($$ select full_name from public.profiles where user_id = 'f1a1a000-0000-4000-8000-000000000001' $$, $$ values ('Beto Lima') $$,
  'A sign-up whose metadata name holds control characters still gets a profile, its name made plain');
insert into auth.users (instance_id, id, aud, role, email, encrypted_password, raw_app_meta_data, raw_user_meta_data,
  created_at, updated_at, confirmation_token, recovery_token, email_change_token_new, email_change)
values ('00000000-0000-0000-0000-000000000000', 'f1a1a000-0000-4000-8000-000000000002', 'authenticated', 'authenticated',
  'metadata2@portal.test', '', '{}', jsonb_build_object('name', E'\u0001\u0002'), now(), now(), '', '', '', '');
select results_eq($$ select full_name from public.profiles where user_id = 'f1a1a000-0000-4000-8000-000000000002' $$, $$ values ('') $$,
  'A metadata name of nothing but control characters becomes an empty name');
select results_eq($$ select count(*)::integer from public.profiles where not shared_private.is_plain_text(full_name) $$, $$ values (0) $$,
  'No profile, seeded or created by a test, holds a control character');

select * from finish();
rollback;
