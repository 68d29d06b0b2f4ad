-- Proposals portal, part 6: the product catalogue. Every signed-in user lists the active
-- products; only admins (and super admins) create, edit or remove them, and every change is
-- audited. Money is numeric(12,2) and the commission rate a fraction (0.1 = 10 %).

create table public.products (
  id uuid primary key default gen_random_uuid(),
  name text not null constraint products_name_not_blank check (btrim(name) <> ''),
  description text not null default '',
  price numeric(12, 2) not null default 0 constraint products_price_not_negative check (price >= 0),
  monthly_price numeric(12, 2) not null constraint products_monthly_price_not_negative check (monthly_price >= 0),
  product_type text not null constraint products_product_type_slug check (product_type ~ '^[a-z0-9_]+$'),
  commission_percentage numeric(5, 4) not null
    constraint products_commission_percentage_fraction check (commission_percentage between 0 and 1),
  is_active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint products_name_no_control_characters check (shared_private.is_plain_text(name)),
  constraint products_description_no_control_characters check (shared_private.is_plain_text(description, true))
);
comment on table public.products is 'Products technicians can propose (e.g. Google Workspace, Microsoft 365 plans).';
comment on column public.products.id is 'Product id.';
comment on column public.products.name is 'Product name, unique regardless of case.';
comment on column public.products.description is 'Description shown in proposals and on the approval page.';
comment on column public.products.price is 'One-off price in BRL (setup, licence), ≥ 0.';
comment on column public.products.monthly_price is 'List monthly price in BRL, ≥ 0; a proposal''s monthly_value may differ (negotiated).';
comment on column public.products.product_type is 'Product family as a lower-case slug, e.g. google_workspace, microsoft_365.';
comment on column public.products.commission_percentage is 'Commission rate as a fraction of the proposal total (0.1 = 10 %), between 0 and 1.';
comment on column public.products.is_active is 'Whether the product can be proposed; inactive products stay for history.';
comment on column public.products.created_at is 'When the product was created.';
comment on column public.products.updated_at is 'When the product last changed.';

create unique index products_name_key on public.products (lower(name));
create index products_is_active_idx on public.products (is_active);

create trigger products_set_updated_at
  before update on public.products
  for each row execute function portal_private.set_updated_at();

/**
 * The columns whose values differ between two versions of a row, as {column: {old, new}},
 * ignoring updated_at. Used to make audit entries say what changed.
 */
create function portal_private.changed_columns(_old jsonb, _new jsonb)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  select coalesce(jsonb_object_agg(n.key, jsonb_build_object('old', o.value, 'new', n.value)), '{}'::jsonb)
  from jsonb_each(_new) as n
  join jsonb_each(_old) as o using (key)
  where o.value is distinct from n.value and n.key <> 'updated_at';
$$;
comment on function portal_private.changed_columns(jsonb, jsonb) is
  'Columns that differ between two row versions as {column: {old, new}} (updated_at ignored).';

/** Trigger function: records product creation, changes (with the changed columns) and removal. */
create function portal_private.audit_product_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  changes jsonb;
begin
  if tg_op = 'INSERT' then
    perform portal_private.record_audit('product.created', 'product', new.id::text, jsonb_build_object('product', to_jsonb(new)));
  elsif tg_op = 'DELETE' then
    perform portal_private.record_audit('product.deleted', 'product', old.id::text, jsonb_build_object('product', to_jsonb(old)));
  else
    changes := portal_private.changed_columns(to_jsonb(old), to_jsonb(new));
    if changes <> '{}'::jsonb then
      perform portal_private.record_audit('product.updated', 'product', new.id::text, jsonb_build_object('changes', changes));
    end if;
  end if;
  return null;
end;
$$;
comment on function portal_private.audit_product_change() is
  'AFTER INSERT/UPDATE/DELETE trigger on products: appends product.created / product.updated / product.deleted.';

create trigger products_audit
  after insert or update or delete on public.products
  for each row execute function portal_private.audit_product_change();

alter table public.products enable row level security;

revoke all on public.products from anon, authenticated, service_role;
grant select, delete on public.products to authenticated;
grant insert (name, description, price, monthly_price, product_type, commission_percentage, is_active),
  update (name, description, price, monthly_price, product_type, commission_percentage, is_active)
  on public.products to authenticated;
grant select, insert, update, delete on public.products to service_role;

create policy "Signed-in users can read active products" on public.products
  for select to authenticated
  using (is_active);
create policy "Admins can read every product" on public.products
  for select to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can read every product" on public.products
  for select to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')));

create policy "Admins can create products" on public.products
  for insert to authenticated
  with check ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can create products" on public.products
  for insert to authenticated
  with check ((select public.has_role((select auth.uid()), 'super_admin')));

create policy "Admins can edit products" on public.products
  for update to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')))
  with check ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can edit products" on public.products
  for update to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')))
  with check ((select public.has_role((select auth.uid()), 'super_admin')));

create policy "Admins can remove products" on public.products
  for delete to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can remove products" on public.products
  for delete to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')));

-- Nothing in portal_private is callable by PUBLIC (see the foundation migration).
revoke execute on all functions in schema portal_private from public;
