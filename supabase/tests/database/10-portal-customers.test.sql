-- Customers: normalised and validated identifiers (CNPJ numeric and alphanumeric, e-mail, phone,
-- CEP, UF), uniqueness, and the policies for anon, two technicians, a user without role, admins
-- and super admins (technicians own their customers; admins see, edit and transfer all).
begin;
select plan(42);

select portal_tests.create_user('tech_a', '{technician}');
select portal_tests.create_user('tech_b', '{technician}');
select portal_tests.create_user('plain');
select portal_tests.create_user('admin_1', '{admin}');
select portal_tests.create_user('super_1', '{super_admin}');
select portal_tests.create_customer('tech_b', 'Bravo Ltda', '33444555000181', 'compras@bravo.test');

-- A technician writes their own customers --------------------------------------------------------

select portal_tests.act_as('tech_a');
select lives_ok($$
  insert into public.customers (company_name, contact_name, email, phone, cnpj, postal_code, street, city, state)
  values ('  Alfa Comércio Ltda ', 'Ana Lima', ' Ana.Lima@Alfa.Test ', '+55 (11) 98888-7777', '11.222.333/0001-81', '01001-000', 'Praça da Sé', 'São Paulo', 'sp')
$$, 'A technician can add a customer with masked identifiers');
select results_eq($$ select technician_id, company_name, email, phone, cnpj, postal_code, state from public.customers where cnpj = '11222333000181' $$,
  $$ values (portal_tests.uid('tech_a'), 'Alfa Comércio Ltda', 'ana.lima@alfa.test', '11988887777', '11222333000181', '01001000', 'SP') $$,
  'The customer is stored normalised and owned by the caller by default');
select lives_ok($$
  insert into public.customers (company_name, contact_name, email, phone, cnpj)
  values ('Nova Era S.A.', 'Nina', 'nina@novaera.test', '(21) 3333-4444', '12.abc.345/01de-35')
$$, 'A customer with a 2026 alphanumeric CNPJ is accepted');
select is((select cnpj from public.customers where company_name = 'Nova Era S.A.'), '12ABC34501DE35', 'The alphanumeric CNPJ is stored upper case without mask');
select results_eq($$ select company_name from public.customers order by company_name $$,
  $$ values ('Alfa Comércio Ltda'), ('Nova Era S.A.') $$, 'A technician lists only their own customers, ordered by company_name');

select throws_ok($$ insert into public.customers (company_name, contact_name, email, phone, cnpj) values ('X', 'Y', 'x@x.test', '11988887777', '11.222.333/0001-80') $$,
  '23514', 'Invalid CNPJ "11222333000180"', 'A CNPJ with a wrong check digit is refused');
select throws_ok($$ insert into public.customers (company_name, contact_name, email, phone, cnpj) values ('X', 'Y', 'x@x.test', '11988887777', '1122233300018') $$,
  '23514', 'Invalid CNPJ "1122233300018"', 'A CNPJ of the wrong length is refused');
select throws_ok($$ insert into public.customers (company_name, contact_name, email, phone, cnpj) values ('X', 'Y', 'x@x.test', '11988887777', '11111111111111') $$,
  '23514', 'Invalid CNPJ "11111111111111"', 'A CNPJ of one repeated digit is refused');
select throws_ok($$ insert into public.customers (company_name, contact_name, email, phone, cnpj) values ('X', 'Y', 'not-an-email', '11988887777', '55666777000181') $$,
  '23514', 'Invalid e-mail "not-an-email"', 'An invalid e-mail is refused');
select throws_ok($$ insert into public.customers (company_name, contact_name, email, phone, cnpj) values ('X', 'Y', 'x@x.test', '12345', '55666777000181') $$,
  '23514', 'Invalid phone "12345"', 'An invalid phone is refused');
select throws_ok($$ insert into public.customers (company_name, contact_name, email, phone, cnpj, postal_code) values ('X', 'Y', 'x@x.test', '11988887777', '55666777000181', '0100-100') $$,
  '23514', 'Invalid CEP "0100100"', 'A malformed CEP is refused');
select throws_ok($$ insert into public.customers (company_name, contact_name, email, phone, cnpj, state) values ('X', 'Y', 'x@x.test', '11988887777', '55666777000181', 'XX') $$,
  '23514', null, 'An unknown state is refused');
select throws_ok($$ insert into public.customers (company_name, contact_name, email, phone, cnpj) values ('  ', 'Y', 'x@x.test', '11988887777', '55666777000181') $$,
  '23514', null, 'A blank company name is refused');
select throws_ok($$ insert into public.customers (company_name, contact_name, email, phone, cnpj) values ('Dup', 'Y', 'dup@x.test', '11988887777', '11222333/0001-81') $$,
  '23505', null, 'A CNPJ already registered (however masked) is a duplicate customer');
select throws_ok($$ insert into public.customers (company_name, contact_name, email, phone, cnpj) values ('Dup', 'Y', 'ANA.LIMA@alfa.test', '11988887777', '55666777000181') $$,
  '23505', null, 'The same e-mail twice for one technician is a duplicate (case-insensitive)');
select throws_ok($$ insert into public.customers (technician_id, company_name, contact_name, email, phone, cnpj) values (portal_tests.uid('tech_b'), 'Sneaky', 'Y', 's@x.test', '11988887777', '55666777000181') $$,
  '42501', 'new row violates row-level security policy for table "customers"', 'A technician cannot add a customer for another technician');
select is((select count(*)::integer from public.customers), 2, 'None of the refused inserts left a row behind');

select results_eq($$ update public.customers set contact_name = 'Ana L.' where cnpj = '11222333000181' returning contact_name $$,
  $$ values ('Ana L.') $$, 'A technician can edit their own customer');
select throws_ok($$ update public.customers set cnpj = '11222333000180' where cnpj = '11222333000181' $$,
  '23514', 'Invalid CNPJ "11222333000180"', 'Edits are validated too');
select throws_ok($$ update public.customers set technician_id = portal_tests.uid('tech_b') where cnpj = '11222333000181' $$,
  '42501', 'new row violates row-level security policy for table "customers"', 'A technician cannot hand a customer to another technician');
select is_empty($$ update public.customers set company_name = 'Hacked' where cnpj = '33444555000181' returning 1 $$,
  'A technician cannot edit another technician''s customer');
select is_empty($$ delete from public.customers where cnpj = '33444555000181' returning 1 $$,
  'A technician cannot remove another technician''s customer');
select results_eq($$ delete from public.customers where cnpj = '12ABC34501DE35' returning company_name $$,
  $$ values ('Nova Era S.A.') $$, 'A technician can remove their own customer');
reset role;

select portal_tests.act_as('tech_b');
select results_eq($$ select company_name from public.customers $$, $$ values ('Bravo Ltda') $$,
  'The other technician sees only their own customer');
select lives_ok($$ insert into public.customers (company_name, contact_name, email, phone, cnpj) values ('Charlie', 'C', 'ana.lima@alfa.test', '11988887777', '55666777000181') $$,
  'Another technician may use the same contact e-mail for a different company');
reset role;

-- A user without the technician role -------------------------------------------------------------

select portal_tests.act_as('plain');
select is_empty($$ select * from public.customers $$, 'A user without role sees no customers');
select throws_ok($$ insert into public.customers (company_name, contact_name, email, phone, cnpj) values ('P', 'P', 'p@p.test', '11988887777', '77888999000181') $$,
  '23514', format('User %s is not a technician', portal_tests.uid('plain')), 'A user without the technician role cannot add customers');
reset role;

select portal_tests.act_as_anon();
select throws_ok($$ select * from public.customers $$, '42501', 'permission denied for table customers', 'Anonymous callers cannot read customers');
select throws_ok($$ insert into public.customers (company_name, contact_name, email, phone, cnpj) values ('P', 'P', 'p@p.test', '11988887777', '77888999000181') $$,
  '42501', 'permission denied for table customers', 'Anonymous callers cannot add customers');
reset role;

-- Admins and super admins --------------------------------------------------------------------------

select portal_tests.act_as('admin_1');
select is((select count(*) from public.customers), portal_tests.count_rows('public.customers'), 'An admin reads every customer');
select lives_ok($$ insert into public.customers (technician_id, company_name, contact_name, email, phone, cnpj) values (portal_tests.uid('tech_b'), 'Delta', 'D', 'd@d.test', '11988887777', '77888999000181') $$,
  'An admin can add a customer for a technician');
select throws_ok($$ insert into public.customers (technician_id, company_name, contact_name, email, phone, cnpj) values (portal_tests.uid('plain'), 'Echo', 'E', 'e@e.test', '11988887777', '44555666000181') $$,
  '23514', format('User %s is not a technician', portal_tests.uid('plain')), 'A customer must belong to a technician');
select results_eq($$ update public.customers set technician_id = portal_tests.uid('tech_a') where cnpj = '33444555000181' returning technician_id $$,
  $$ select portal_tests.uid('tech_a') $$, 'An admin can transfer a customer to another technician');
select results_eq($$ delete from public.customers where cnpj = '77888999000181' returning company_name $$,
  $$ values ('Delta') $$, 'An admin can remove a customer');
reset role;

select portal_tests.act_as('super_1');
select is((select count(*) from public.customers), portal_tests.count_rows('public.customers'), 'A super admin reads every customer');
select lives_ok($$ insert into public.customers (technician_id, company_name, contact_name, email, phone, cnpj) values (portal_tests.uid('tech_a'), 'Foxtrot', 'F', 'f@f.test', '11988887777', '44555666000181') $$,
  'A super admin can add a customer for a technician');
select results_eq($$ update public.customers set technician_id = portal_tests.uid('tech_b') where cnpj = '33444555000181' returning technician_id $$,
  $$ select portal_tests.uid('tech_b') $$, 'A super admin can transfer a customer');
select results_eq($$ delete from public.customers where cnpj = '44555666000181' returning company_name $$,
  $$ values ('Foxtrot') $$, 'A super admin can remove a customer');
reset role;

-- Rows that cannot go, and updated_at ------------------------------------------------------------

select portal_tests.create_proposal('tech_a', (select id from public.customers where cnpj = '11222333000181'), portal_tests.create_product('Customers Test Product'));
select portal_tests.act_as('tech_a');
select throws_ok($$ delete from public.customers where cnpj = '11222333000181' $$, '23503', null,
  'A customer with proposals cannot be removed');
reset role;
update public.customers set updated_at = now() - interval '1 day' where cnpj = '33444555000181';
select is((select updated_at from public.customers where cnpj = '33444555000181'), now(), 'Updating a customer refreshes updated_at');
select ok(
  (select bool_and(portal_private.is_valid_cnpj(cnpj) and portal_private.is_valid_email(email) and portal_private.is_valid_phone(phone)) from public.customers),
  'Every stored customer satisfies the validators'
);
alter table public.customers disable trigger customers_prepare;
select throws_ok($$ insert into public.customers (technician_id, company_name, contact_name, email, phone, cnpj) values (portal_tests.uid('tech_a'), 'G', 'G', 'g@g.test', '11988887777', '11.222.333/0001-81') $$,
  '23514', 'new row for relation "customers" violates check constraint "customers_cnpj_valid"', 'Without the trigger, the CHECK constraint still refuses an unnormalised CNPJ');
alter table public.customers enable trigger customers_prepare;

select * from finish();
rollback;
