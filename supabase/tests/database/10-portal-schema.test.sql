-- The proposals portal's schema as a contract: tables, documentation, default-deny privileges,
-- row-level security on every table with exactly the intended policies, indexes behind the
-- policies, and the hygiene of its functions (search_path pinned, no accidental EXECUTE).
begin;
select plan(46);

select tables_are('public', array[
  'profiles', 'user_roles', 'products', 'customers', 'proposals', 'orders', 'commissions', 'audit_log', 'holidays'
]::name[] || array(
  -- Other backends share the public schema; only the portal's tables are asserted here.
  select tablename from pg_tables where schemaname = 'public'
    and tablename <> all (array['profiles', 'user_roles', 'products', 'customers', 'proposals', 'orders', 'commissions', 'audit_log', 'holidays'])
), 'The portal''s nine tables exist in public');
select has_schema('portal_private', 'Internals live in the portal_private schema');
select enum_has_labels('public', 'app_role', array['super_admin', 'admin', 'technician'], 'app_role has the three portal roles');
select enum_has_labels('public', 'proposal_status', array['pending', 'approved', 'rejected', 'active', 'cancelled'], 'proposal_status has the five lifecycle states');
select col_type_is('public', 'proposals', 'monthly_value', 'numeric(12,2)', 'Money is numeric, not float');
select col_type_is('public', 'proposals', 'total_value', 'numeric(14,2)', 'Proposal totals are numeric');
select col_type_is('public', 'commissions', 'amount', 'numeric(14,2)', 'Commission amounts are numeric');
select col_type_is('public', 'products', 'commission_percentage', 'numeric(5,4)', 'Commission rates are numeric fractions');

select is_empty($$
  select c.relname from pg_class c
  where c.relnamespace = 'public'::regnamespace and c.relkind = 'r'
    and c.relname in ('profiles', 'user_roles', 'products', 'customers', 'proposals', 'orders', 'commissions', 'audit_log', 'holidays')
    and obj_description(c.oid, 'pg_class') is null
$$, 'Every portal table has a comment');
select is_empty($$
  select c.relname || '.' || a.attname from pg_attribute a
  join pg_class c on c.oid = a.attrelid
  where c.relnamespace = 'public'::regnamespace
    and c.relname in ('profiles', 'user_roles', 'products', 'customers', 'proposals', 'orders', 'commissions', 'audit_log', 'holidays')
    and a.attnum > 0 and not a.attisdropped and col_description(c.oid, a.attnum) is null
$$, 'Every column of every portal table has a comment');
select is_empty($$
  select c.relname from pg_class c
  where c.relnamespace = 'public'::regnamespace and c.relkind = 'r'
    and c.relname in ('profiles', 'user_roles', 'products', 'customers', 'proposals', 'orders', 'commissions', 'audit_log', 'holidays')
    and not c.relrowsecurity
$$, 'Row-level security is enabled on every portal table');
select is_empty($$
  select table_name || ':' || privilege_type from information_schema.role_table_grants
  where grantee in ('anon', 'PUBLIC') and table_schema = 'public'
    and table_name in ('profiles', 'user_roles', 'products', 'customers', 'proposals', 'orders', 'commissions', 'audit_log', 'holidays')
$$, 'The anon role has no privilege on any portal table (default deny)');
select is_empty($$
  select c.relname from pg_class c
  where c.relnamespace = 'public'::regnamespace and c.relkind = 'r'
    and c.relname in ('profiles', 'user_roles', 'products', 'customers', 'proposals', 'orders', 'commissions', 'holidays')
    and not exists (
      select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'updated_at'
    )
$$, 'Every updatable portal table has updated_at');
select is_empty($$
  select c.relname from pg_class c
  where c.relnamespace = 'public'::regnamespace and c.relkind = 'r'
    and c.relname in ('profiles', 'user_roles', 'products', 'customers', 'proposals', 'orders', 'commissions', 'holidays')
    and not exists (
      select 1 from pg_trigger t where t.tgrelid = c.oid and t.tgfoid = 'portal_private.set_updated_at()'::regprocedure
    )
$$, 'Every updatable portal table has an updated_at trigger');

select policies_are('public', 'profiles', array[
  'Users can read their own profile', 'Admins can read every profile', 'Super admins can read every profile',
  'Users can update their own profile', 'Admins can update every profile', 'Super admins can update every profile'
], 'profiles has one policy per command and audience');
select policies_are('public', 'user_roles', array[
  'Users can read their own roles', 'Admins can read every role', 'Super admins can read every role',
  'Admins can grant the technician role', 'Super admins can grant any role', 'Super admins can change roles',
  'Admins can revoke the technician role', 'Super admins can revoke any role'
], 'user_roles has one policy per command and audience');
select policies_are('public', 'products', array[
  'Signed-in users can read active products', 'Technicians can read the products of their proposals',
  'Admins can read every product', 'Super admins can read every product',
  'Admins can create products', 'Super admins can create products',
  'Admins can edit products', 'Super admins can edit products',
  'Admins can remove products', 'Super admins can remove products'
], 'products has one policy per command and audience');
select policies_are('public', 'customers', array[
  'Technicians can read their own customers', 'Admins can read every customer', 'Super admins can read every customer',
  'Technicians can add their own customers', 'Admins can add customers for any technician', 'Super admins can add customers for any technician',
  'Technicians can edit their own customers', 'Admins can edit and transfer every customer', 'Super admins can edit and transfer every customer',
  'Technicians can remove their own customers', 'Admins can remove every customer', 'Super admins can remove every customer'
], 'customers has one policy per command and audience');
select policies_are('public', 'proposals', array[
  'Technicians can read their own proposals', 'Admins can read every proposal', 'Super admins can read every proposal',
  'Technicians can create their own proposals', 'Admins can create proposals for any technician', 'Super admins can create proposals for any technician',
  'Technicians can edit their own proposals', 'Admins can edit every proposal', 'Super admins can edit every proposal',
  'Super admins can delete proposals'
], 'proposals has one policy per command and audience');
select policies_are('public', 'orders', array[
  'Technicians can read their own orders', 'Admins can read every order', 'Super admins can read every order'
], 'orders is read-only for clients');
select policies_are('public', 'commissions', array[
  'Technicians can read their own commissions', 'Admins can read every commission', 'Super admins can read every commission',
  'Admins can record commission payments', 'Super admins can record commission payments'
], 'commissions: reads, and payment updates by admins');
select policies_are('public', 'audit_log', array[
  'Admins can read the audit log', 'Super admins can read the audit log'
], 'audit_log is readable by admins only and writable by nobody');
select policies_are('public', 'holidays', array[
  'Signed-in users can read the holidays', 'Admins can add holidays', 'Super admins can add holidays',
  'Admins can change holidays', 'Super admins can change holidays', 'Admins can remove holidays', 'Super admins can remove holidays'
], 'holidays has one policy per command and audience');
select is_empty($$
  select tablename || ': ' || policyname from pg_policies
  where schemaname = 'public'
    and tablename in ('profiles', 'user_roles', 'products', 'customers', 'proposals', 'orders', 'commissions', 'audit_log', 'holidays')
    and (roles <> '{authenticated}' or cmd = 'ALL')
$$, 'Every portal policy is for authenticated callers and one command');
select is_empty($$
  select tablename || ': ' || policyname from pg_policies
  where schemaname = 'public'
    and tablename in ('profiles', 'user_roles', 'products', 'customers', 'proposals', 'orders', 'commissions', 'audit_log', 'holidays')
    and (coalesce(qual, '') || coalesce(with_check, '')) ~ 'auth\.uid\(\)'
    and (coalesce(qual, '') || coalesce(with_check, '')) !~ 'SELECT auth\.uid\(\)'
$$, 'Policies call auth.uid() through (select auth.uid()), once per statement');

select has_index('public', 'customers', 'customers_technician_id_company_name_idx', array['technician_id', 'company_name'], 'customers.technician_id is indexed for the policies');
select has_index('public', 'proposals', 'proposals_technician_id_created_at_idx', array['technician_id', 'created_at'], 'proposals.technician_id is indexed for the policies');
select has_index('public', 'proposals', 'proposals_product_id_idx', array['product_id'], 'proposals.product_id is indexed for the product policy');
select has_index('public', 'orders', 'orders_technician_id_idx', array['technician_id'], 'orders.technician_id is indexed for the policies');
select has_index('public', 'commissions', 'commissions_technician_id_created_at_idx', array['technician_id', 'created_at'], 'commissions.technician_id is indexed for the policies');
select has_index('public', 'user_roles', 'user_roles_user_id_role_key', array['user_id', 'role'], 'user_roles (user_id, role) is unique and indexed for has_role');
select has_index('public', 'products', 'products_is_active_idx', array['is_active'], 'products.is_active is indexed for the active-products policy');

select is_empty($$
  select p.oid::regprocedure::text from pg_proc p
  where p.pronamespace in ('portal_private'::regnamespace, 'public'::regnamespace)
    and p.prosecdef
    and p.oid::regprocedure::text ~ '^(portal_private\.|has_role|get_proposal_for_approval|respond_to_proposal)'
    and not coalesce(p.proconfig @> array['search_path=""'], false)
$$, 'Every portal security definer function pins search_path to empty');
select is_empty($$
  select p.oid::regprocedure::text from pg_proc p
  where p.pronamespace = 'portal_private'::regnamespace and obj_description(p.oid, 'pg_proc') is null
$$, 'Every portal_private function has a comment');
select is_empty($$
  select p.oid::regprocedure::text from pg_proc p
  where p.pronamespace = 'portal_private'::regnamespace and has_function_privilege('anon', p.oid, 'execute')
$$, 'The anon role cannot execute any portal_private function');
select ok(not has_function_privilege('anon', 'public.has_role(uuid, public.app_role)', 'execute'), 'anon cannot call has_role');
select ok(has_function_privilege('authenticated', 'public.has_role(uuid, public.app_role)', 'execute'), 'authenticated can call has_role as RPC');
select ok(not has_function_privilege('anon', 'public.calculate_payment_dates(date)', 'execute'), 'anon cannot call calculate_payment_dates');
select ok(has_function_privilege('authenticated', 'public.calculate_payment_dates(date)', 'execute'), 'authenticated can call calculate_payment_dates');
select ok(has_function_privilege('anon', 'public.get_proposal_for_approval(text)', 'execute'), 'anon can look up a proposal by approval token');
select ok(has_function_privilege('anon', 'public.respond_to_proposal(text, text, text)', 'execute'), 'anon can answer a proposal by approval token');
select ok(not has_function_privilege('anon', 'public.generate_approval_token()', 'execute'), 'anon cannot call generate_approval_token');
select is(
  (select provolatile from pg_proc where oid = 'public.calculate_payment_dates(date)'::regprocedure), 's',
  'calculate_payment_dates is stable (it reads the holidays table)'
);
select is(
  (select prosecdef from pg_proc where oid = 'public.has_role(uuid, public.app_role)'::regprocedure), true,
  'has_role is security definer'
);
select function_returns('public', 'has_role', array['uuid', 'app_role'], 'boolean', 'has_role returns boolean');
select ok(
  exists (select 1 from storage.buckets where id = 'proposal-pdfs' and not public and allowed_mime_types = array['application/pdf']),
  'The private proposal-pdfs bucket exists and accepts only PDFs'
);

select * from finish();
rollback;
