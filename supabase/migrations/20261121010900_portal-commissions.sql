-- Proposals portal, part 10: orders and commissions, created when an admin activates an approved
-- proposal, in the same transaction as the status change. commission amount = total_value ×
-- the product's commission_percentage, with the payment dates of calculate_payment_dates(the
-- activation day in São Paulo). Cancelling an active proposal cancels its order and any unpaid
-- commission. Both tables are derived records: clients read them, admins mark commissions paid,
-- and nobody inserts or deletes them through the API.

create type public.order_status as enum ('active', 'cancelled');
comment on type public.order_status is 'An order is active from activation until its proposal is cancelled.';

create type public.commission_status as enum ('pending', 'paid', 'cancelled');
comment on type public.commission_status is 'pending until the portal pays the technician (paid), or cancelled with the order.';

create table public.orders (
  id uuid primary key default gen_random_uuid(),
  proposal_id uuid not null constraint orders_proposal_id_key unique references public.proposals (id) on delete restrict,
  technician_id uuid not null references public.profiles (user_id) on delete restrict,
  total_value numeric(14, 2) not null constraint orders_total_value_not_negative check (total_value >= 0),
  status public.order_status not null default 'active',
  ordered_at timestamptz not null default now(),
  cancelled_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
comment on table public.orders is 'One order per activated proposal. Visible to its technician and admins.';
comment on column public.orders.id is 'Order id.';
comment on column public.orders.proposal_id is 'The activated proposal (one order each).';
comment on column public.orders.technician_id is 'Technician of the proposal, copied so policies need no join.';
comment on column public.orders.total_value is 'Contract total in BRL at activation (the proposal''s total_value).';
comment on column public.orders.status is 'active, or cancelled when the proposal is cancelled.';
comment on column public.orders.ordered_at is 'Activation instant; its São Paulo date is the sale date for payment dates.';
comment on column public.orders.cancelled_at is 'When the order was cancelled.';
comment on column public.orders.created_at is 'When the order was created.';
comment on column public.orders.updated_at is 'When the order last changed.';

create index orders_technician_id_idx on public.orders (technician_id);

create table public.commissions (
  id uuid primary key default gen_random_uuid(),
  order_id uuid not null constraint commissions_order_id_key unique references public.orders (id) on delete restrict,
  technician_id uuid not null references public.profiles (user_id) on delete restrict,
  base_value numeric(14, 2) not null constraint commissions_base_value_not_negative check (base_value >= 0),
  commission_percentage numeric(5, 4) not null
    constraint commissions_commission_percentage_fraction check (commission_percentage between 0 and 1),
  amount numeric(14, 2) not null constraint commissions_amount_not_negative check (amount >= 0),
  sale_date date not null,
  carrier_payment_date date not null,
  portal_payment_date date not null,
  status public.commission_status not null default 'pending',
  paid_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
comment on table public.commissions is 'The technician''s commission for an order. Visible to the technician and admins; admins mark it paid.';
comment on column public.commissions.id is 'Commission id.';
comment on column public.commissions.order_id is 'The order it pays for (one commission each).';
comment on column public.commissions.technician_id is 'Technician to be paid, copied from the order so policies need no join.';
comment on column public.commissions.base_value is 'The proposal total_value the commission is computed on, in BRL.';
comment on column public.commissions.commission_percentage is 'The product''s commission rate at activation (fraction).';
comment on column public.commissions.amount is 'base_value × commission_percentage, rounded to cents, in BRL.';
comment on column public.commissions.sale_date is 'Activation date in São Paulo time, the input of calculate_payment_dates.';
comment on column public.commissions.carrier_payment_date is 'When the carrier is expected to pay the portal (day 20 of the second month after the sale, next business day).';
comment on column public.commissions.portal_payment_date is 'When the portal pays the technician (next 15th or month end after the carrier date, next business day).';
comment on column public.commissions.status is 'pending, paid or cancelled.';
comment on column public.commissions.paid_at is 'When an admin marked the commission paid.';
comment on column public.commissions.created_at is 'When the commission was created.';
comment on column public.commissions.updated_at is 'When the commission last changed.';

create index commissions_technician_id_created_at_idx on public.commissions (technician_id, created_at desc);

create trigger orders_set_updated_at
  before update on public.orders
  for each row execute function portal_private.set_updated_at();

create trigger commissions_set_updated_at
  before update on public.commissions
  for each row execute function portal_private.set_updated_at();

/**
 * Trigger function on proposals: on activation creates the order and the commission (amount and
 * payment dates); on cancelling an active proposal cancels its order and unpaid commission.
 * Security definer because no API role may write orders or commissions.
 */
create function portal_private.fulfil_proposal_status()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  new_order_id uuid;
  rate numeric;
  sold_on date := (now() at time zone 'America/Sao_Paulo')::date;
  dates record;
begin
  if new.status = 'active' and old.status <> 'active' then
    insert into public.orders (proposal_id, technician_id, total_value)
    values (new.id, new.technician_id, new.total_value)
    returning id into new_order_id;

    select commission_percentage into rate from public.products where id = new.product_id;
    dates := public.calculate_payment_dates(sold_on);
    insert into public.commissions (
      order_id, technician_id, base_value, commission_percentage, amount,
      sale_date, carrier_payment_date, portal_payment_date
    ) values (
      new_order_id, new.technician_id, new.total_value, rate, round(new.total_value * rate, 2),
      sold_on, dates.carrier_payment_date, dates.portal_payment_date
    );
  elsif new.status = 'cancelled' and old.status = 'active' then
    update public.orders set status = 'cancelled', cancelled_at = now() where proposal_id = new.id
    returning id into new_order_id;
    update public.commissions set status = 'cancelled' where order_id = new_order_id and status = 'pending';
  end if;
  return null;
end;
$$;
comment on function portal_private.fulfil_proposal_status() is
  'AFTER UPDATE trigger on proposals: activation creates order + commission; cancelling an active proposal cancels them.';

create trigger proposals_fulfil_status
  after update of status on public.proposals
  for each row execute function portal_private.fulfil_proposal_status();

/**
 * Trigger function: commission payment moves. pending → paid (stamps paid_at) or cancelled; paid
 * and cancelled are final. The amounts and dates never change once computed.
 */
create function portal_private.guard_commission_update()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if (new.base_value, new.commission_percentage, new.amount, new.sale_date, new.carrier_payment_date, new.portal_payment_date, new.order_id, new.technician_id)
    is distinct from
    (old.base_value, old.commission_percentage, old.amount, old.sale_date, old.carrier_payment_date, old.portal_payment_date, old.order_id, old.technician_id)
  then
    raise exception 'Commission amounts and dates cannot be changed' using errcode = 'P0001';
  end if;
  if new.status is distinct from old.status then
    if old.status <> 'pending' then
      raise exception 'Illegal commission status change: % → %', old.status, new.status
        using errcode = 'P0001', hint = 'Allowed: pending → paid | cancelled.';
    end if;
    if new.status = 'paid' then
      new.paid_at := now();
    end if;
  end if;
  return new;
end;
$$;
comment on function portal_private.guard_commission_update() is
  'BEFORE UPDATE trigger on commissions: only pending → paid | cancelled; amounts and dates are immutable.';

create trigger commissions_guard_update
  before update on public.commissions
  for each row execute function portal_private.guard_commission_update();

alter table public.orders enable row level security;
alter table public.commissions enable row level security;

revoke all on public.orders, public.commissions from anon, authenticated, service_role;
grant select on public.orders to authenticated;
grant select, update (status) on public.commissions to authenticated;
grant select, insert, update, delete on public.orders, public.commissions to service_role;

create policy "Technicians can read their own orders" on public.orders
  for select to authenticated
  using (technician_id = (select auth.uid()));
create policy "Admins can read every order" on public.orders
  for select to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can read every order" on public.orders
  for select to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')));

create policy "Technicians can read their own commissions" on public.commissions
  for select to authenticated
  using (technician_id = (select auth.uid()));
create policy "Admins can read every commission" on public.commissions
  for select to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can read every commission" on public.commissions
  for select to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')));

create policy "Admins can record commission payments" on public.commissions
  for update to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')))
  with check ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can record commission payments" on public.commissions
  for update to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')))
  with check ((select public.has_role((select auth.uid()), 'super_admin')));

-- Nothing in portal_private is callable by PUBLIC (see the foundation migration).
revoke execute on all functions in schema portal_private from public;
