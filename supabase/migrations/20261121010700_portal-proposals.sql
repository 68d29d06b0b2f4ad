-- Proposals portal, part 8: proposals and their status machine.
--
--   pending ──(customer, approval link)──▶ approved ──(admin)──▶ active
--      │                                      │                    │
--      ├──(customer, approval link)──▶ rejected                    │
--      └──(technician or admin)──┬──────(admin)────────────────────┴──(admin)──▶ cancelled
--
-- rejected and cancelled are final. A new proposal gets a code (PROP-YYYYMM-NNN), a URL-safe
-- approval token valid for 30 days and single-use, and total_value = monthly_value ×
-- contract_months, which triggers keep true on every change. Values are frozen once the proposal
-- leaves pending: the customer approved those numbers. Activation (order and commission) is wired
-- in the commissions migration.

create type public.proposal_status as enum ('pending', 'approved', 'rejected', 'active', 'cancelled');
comment on type public.proposal_status is 'Lifecycle of a proposal; see docs/proposals-portal.md for the allowed moves.';

create table portal_private.proposal_code_counters (
  year_month text primary key,
  last_value integer not null
);
comment on table portal_private.proposal_code_counters is
  'Last proposal sequence number issued per month (YYYYMM), so codes are gap-tolerant but never collide.';
comment on column portal_private.proposal_code_counters.year_month is 'Month of issue, YYYYMM in São Paulo time.';
comment on column portal_private.proposal_code_counters.last_value is 'Last sequence number issued in that month.';

create table public.proposals (
  id uuid primary key default gen_random_uuid(),
  code text not null constraint proposals_code_key unique,
  customer_id uuid not null references public.customers (id) on delete restrict,
  technician_id uuid not null default auth.uid() references public.profiles (user_id) on delete restrict,
  product_id uuid not null references public.products (id) on delete restrict,
  monthly_value numeric(12, 2) not null constraint proposals_monthly_value_positive check (monthly_value > 0),
  contract_months integer not null constraint proposals_contract_months_range check (contract_months between 1 and 120),
  total_value numeric(14, 2) not null
    constraint proposals_total_value_consistent check (total_value = monthly_value * contract_months),
  status public.proposal_status not null default 'pending',
  notes text,
  approval_token_expires_at timestamptz not null,
  approval_token_used_at timestamptz,
  activated_at timestamptz,
  cancelled_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint proposals_notes_no_control_characters check (shared_private.is_plain_text(notes, true))
);
comment on table public.proposals is
  'Sales proposals: a product offered to a customer for a monthly value over a number of months. Visible to their technician and admins; customers reach one only through its approval token.';
comment on column public.proposals.id is 'Proposal id.';
comment on column public.proposals.code is 'Human-readable code PROP-YYYYMM-NNN (sequence within the month), set on insert.';
comment on column public.proposals.customer_id is
  'The customer (must belong to the proposal''s technician). Fixed when the proposal is made: its approval link answers to this customer''s e-mail.';
comment on column public.proposals.technician_id is 'Technician who made the proposal (profiles.user_id); defaults to the caller.';
comment on column public.proposals.product_id is 'The proposed product (must be active when proposed).';
comment on column public.proposals.monthly_value is 'Negotiated monthly value in BRL, > 0.';
comment on column public.proposals.contract_months is 'Contract length in months, 1 to 120.';
comment on column public.proposals.total_value is 'monthly_value × contract_months in BRL, computed by a trigger (a mismatching value sent by a client is refused).';
comment on column public.proposals.status is 'pending, approved, rejected, active or cancelled; moves are checked by a trigger.';
comment on column public.proposals.notes is 'Free notes from the technician.';
comment on column public.proposals.approval_token_expires_at is
  'The approval link stops working at this instant (30 days after creation); re-sending the e-mail does not extend it.';
comment on column public.proposals.approval_token_used_at is 'When the customer approved or rejected; the link works once.';
comment on column public.proposals.activated_at is 'When an admin activated the proposal (its order and commission were created then).';
comment on column public.proposals.cancelled_at is 'When the proposal was cancelled.';
comment on column public.proposals.created_at is 'When the proposal was created (list order, newest first).';
comment on column public.proposals.updated_at is 'When the proposal last changed.';

-- Serves the technician policies and "proposals of a technician, newest first".
create index proposals_technician_id_created_at_idx on public.proposals (technician_id, created_at desc);
create index proposals_customer_id_idx on public.proposals (customer_id);
create index proposals_product_id_idx on public.proposals (product_id);

/** A fresh approval token: 32 random bytes (256 bits) as unpadded base64url, 43 characters. */
create function public.generate_approval_token()
returns text
language sql
volatile
set search_path = ''
as $$
  select translate(encode(extensions.gen_random_bytes(32), 'base64'), '+/=', '-_');
$$;
comment on function public.generate_approval_token() is
  'A URL-safe approval token with 256 bits of randomness (pgcrypto gen_random_bytes, base64url, no padding).';

revoke execute on function public.generate_approval_token() from public, anon;
grant execute on function public.generate_approval_token() to authenticated, service_role;

-- Triggers, in firing order (BEFORE triggers fire alphabetically) ---------------------------------

/**
 * Trigger function: checks what a proposal points to. The product must exist and, when it is
 * being chosen, be active; the customer must exist and belong to the proposal's technician; the
 * technician must hold the technician role. Security definer so the checks see rows the caller
 * cannot (an inactive product, someone else's customer) and can name the problem.
 */
create function portal_private.check_proposal_references()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  product_active boolean;
  customer_owner uuid;
begin
  if tg_op = 'INSERT' or new.product_id is distinct from old.product_id then
    select is_active into product_active from public.products where id = new.product_id;
    if not found then
      raise exception 'Unknown product %', new.product_id using errcode = 'foreign_key_violation';
    end if;
    if not product_active then
      raise exception 'Product % is inactive and cannot be proposed', new.product_id using errcode = 'check_violation';
    end if;
  end if;

  if tg_op = 'INSERT' or new.customer_id is distinct from old.customer_id or new.technician_id is distinct from old.technician_id then
    select technician_id into customer_owner from public.customers where id = new.customer_id;
    if not found then
      raise exception 'Unknown customer %', new.customer_id using errcode = 'foreign_key_violation';
    end if;
    if customer_owner is distinct from new.technician_id then
      raise exception 'Customer % belongs to another technician', new.customer_id
        using errcode = 'insufficient_privilege', detail = 'A proposal''s customer must belong to the proposal''s technician.';
    end if;
    if not public.has_role(new.technician_id, 'technician') then
      raise exception 'User % is not a technician', new.technician_id using errcode = 'check_violation';
    end if;
  end if;
  return new;
end;
$$;
comment on function portal_private.check_proposal_references() is
  'BEFORE INSERT/UPDATE trigger on proposals: product exists and is active, customer exists and belongs to the technician.';

/**
 * Trigger function: what every new proposal starts with. It must be pending; it gets the next
 * code of the month and its approval link's 30-day expiry. The token itself is issued when the
 * proposal is e-mailed (issue_approval_token), because only then can its clear text go anywhere.
 * Security definer for the private code counters.
 */
create function portal_private.prepare_new_proposal()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  month_key text := to_char(now() at time zone 'America/Sao_Paulo', 'YYYYMM');
  sequence_number integer;
begin
  if new.status is distinct from 'pending' then
    raise exception 'A new proposal must be pending, not %', new.status
      using errcode = 'check_violation', hint = 'Omit status; customers approve through the approval link.';
  end if;

  insert into portal_private.proposal_code_counters as counter (year_month, last_value)
  values (month_key, 1)
  on conflict (year_month) do update set last_value = counter.last_value + 1
  returning last_value into sequence_number;

  new.code := format('PROP-%s-%s', month_key, lpad(sequence_number::text, greatest(3, length(sequence_number::text)), '0'));
  new.approval_token_expires_at := now() + interval '30 days';
  new.approval_token_used_at := null;
  new.activated_at := null;
  new.cancelled_at := null;
  return new;
end;
$$;
comment on function portal_private.prepare_new_proposal() is
  'BEFORE INSERT trigger on proposals: requires pending, assigns code and the approval link''s 30-day expiry.';

/**
 * Trigger function: keeps total_value = monthly_value × contract_months. A client may omit
 * total_value (it is computed) or send it; a value that does not match is refused rather than
 * silently replaced, because it means the client computed something else.
 */
create function portal_private.compute_proposal_total()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  expected numeric := new.monthly_value * new.contract_months;
begin
  if new.total_value is not null
    and new.total_value <> expected
    and (tg_op = 'INSERT' or new.total_value is distinct from old.total_value)
  then
    raise exception 'total_value % does not equal monthly_value × contract_months (%)', new.total_value, expected
      using errcode = 'check_violation', hint = 'Omit total_value; it is computed.';
  end if;
  new.total_value := expected;
  return new;
end;
$$;
comment on function portal_private.compute_proposal_total() is
  'BEFORE INSERT/UPDATE trigger on proposals: sets total_value = monthly_value × contract_months; refuses a mismatching client value.';

/**
 * Trigger function: the status machine and who may drive it. Values are frozen outside pending.
 * Approval and rejection come only from the approval-link flow (respond_to_proposal, which runs
 * as its owner) or a server-side role, never from a signed-in user's own request; activation is
 * for admins; cancelling a pending proposal is also open to its technician.
 */
create function portal_private.guard_proposal_update()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  move text := old.status || ' → ' || new.status;
  -- Requests from the data API run as anon or authenticated; the approval flow and server-side
  -- code run as the function owner or service_role.
  via_api boolean := current_user in ('anon', 'authenticated');
  caller uuid := auth.uid();
  is_admin boolean := portal_private.has_any_role(caller, '{admin,super_admin}');
begin
  if old.status <> 'pending' and (
    new.monthly_value, new.contract_months, new.product_id, new.customer_id, new.technician_id
  ) is distinct from (
    old.monthly_value, old.contract_months, old.product_id, old.customer_id, old.technician_id
  ) then
    raise exception 'Proposal % is % and can no longer be edited', old.code, old.status
      using errcode = 'P0001', hint = 'Only pending proposals can change product, customer, technician or values.';
  end if;

  if new.status is not distinct from old.status then
    return new;
  end if;

  if move in ('pending → approved', 'pending → rejected') then
    if via_api then
      raise exception 'Only the customer can % proposal %, through its approval link', case new.status when 'approved' then 'approve' else 'reject' end, old.code
        using errcode = 'insufficient_privilege';
    end if;
    new.approval_token_used_at := now();
  elsif move = 'approved → active' then
    if via_api and not is_admin then
      raise exception 'Only admins can activate proposals' using errcode = 'insufficient_privilege';
    end if;
    new.activated_at := now();
  elsif move = 'pending → cancelled' or move in ('approved → cancelled', 'active → cancelled') then
    if via_api and not is_admin and not (move = 'pending → cancelled' and old.technician_id = caller) then
      raise exception 'Only admins can cancel a proposal that is %', old.status using errcode = 'insufficient_privilege';
    end if;
    new.cancelled_at := now();
  else
    raise exception 'Illegal status change for proposal %: %', old.code, move
      using errcode = 'P0001',
        hint = 'Allowed: pending → approved | rejected (customer), approved → active (admin), pending | approved | active → cancelled.';
  end if;
  return new;
end;
$$;
comment on function portal_private.guard_proposal_update() is
  'BEFORE UPDATE trigger on proposals: enforces the status machine, who may move it, and frozen values outside pending.';

create trigger proposals_10_check_references
  before insert or update of product_id, customer_id, technician_id on public.proposals
  for each row execute function portal_private.check_proposal_references();

create trigger proposals_20_prepare_new
  before insert on public.proposals
  for each row execute function portal_private.prepare_new_proposal();

create trigger proposals_30_compute_total
  before insert or update of monthly_value, contract_months, total_value on public.proposals
  for each row execute function portal_private.compute_proposal_total();

create trigger proposals_40_guard_update
  before update on public.proposals
  for each row execute function portal_private.guard_proposal_update();

create trigger proposals_50_set_updated_at
  before update on public.proposals
  for each row execute function portal_private.set_updated_at();

/** Trigger function: records proposal creation and every status change (approved, rejected, activated, cancelled). */
create function portal_private.audit_proposal_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    perform portal_private.record_audit('proposal.created', 'proposal', new.id::text, jsonb_build_object(
      'code', new.code, 'customer_id', new.customer_id, 'product_id', new.product_id,
      'technician_id', new.technician_id, 'total_value', new.total_value
    ));
  elsif new.status is distinct from old.status then
    perform portal_private.record_audit(
      'proposal.' || case new.status when 'active' then 'activated' else new.status::text end,
      'proposal', new.id::text,
      jsonb_build_object('code', new.code, 'from', old.status, 'to', new.status)
    );
  end if;
  return null;
end;
$$;
comment on function portal_private.audit_proposal_change() is
  'AFTER INSERT/UPDATE trigger on proposals: appends proposal.created and proposal.<approved|rejected|activated|cancelled>.';

create trigger proposals_audit
  after insert or update of status on public.proposals
  for each row execute function portal_private.audit_proposal_change();

-- Privileges and row-level security ------------------------------------------------------------

alter table public.proposals enable row level security;
alter table portal_private.proposal_code_counters enable row level security;

revoke all on public.proposals from anon, authenticated, service_role;
grant select, delete on public.proposals to authenticated;
grant insert (customer_id, technician_id, product_id, monthly_value, contract_months, total_value, status, notes),
  update (customer_id, technician_id, product_id, monthly_value, contract_months, total_value, status, notes)
  on public.proposals to authenticated;
grant select, insert, update, delete on public.proposals to service_role;

create policy "Technicians can read their own proposals" on public.proposals
  for select to authenticated
  using (technician_id = (select auth.uid()));
create policy "Admins can read every proposal" on public.proposals
  for select to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can read every proposal" on public.proposals
  for select to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')));

create policy "Technicians can create their own proposals" on public.proposals
  for insert to authenticated
  with check (
    technician_id = (select auth.uid())
    and (select public.has_role((select auth.uid()), 'technician'))
  );
create policy "Admins can create proposals for any technician" on public.proposals
  for insert to authenticated
  with check ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can create proposals for any technician" on public.proposals
  for insert to authenticated
  with check ((select public.has_role((select auth.uid()), 'super_admin')));

create policy "Technicians can edit their own proposals" on public.proposals
  for update to authenticated
  using (technician_id = (select auth.uid()))
  with check (technician_id = (select auth.uid()));
create policy "Admins can edit every proposal" on public.proposals
  for update to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')))
  with check ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can edit every proposal" on public.proposals
  for update to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')))
  with check ((select public.has_role((select auth.uid()), 'super_admin')));

-- Proposals are history: technicians and admins cancel them; only super admins delete.
create policy "Super admins can delete proposals" on public.proposals
  for delete to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')));

-- A proposal keeps showing its product after the product is deactivated.
create policy "Technicians can read the products of their proposals" on public.products
  for select to authenticated
  using (exists (
    select 1 from public.proposals
    where proposals.product_id = products.id and proposals.technician_id = (select auth.uid())
  ));

-- What a caller may print or send -------------------------------------------------------------------

/**
 * The document a caller may print or send: the proposal with its customer, product and technician,
 * as the PDF and e-mail renderers take it. Null when the proposal does not exist or the caller is
 * neither its technician nor an admin or super admin, so a stranger's id and a missing one answer
 * alike. Security definer because the embedded rows follow the proposal, not the caller's own
 * policies: a customer since transferred to another technician, or a product since retired, still
 * belongs on the proposal's document. It reads the caller from auth.uid() and nothing else.
 */
create function public.proposal_document(p_proposal_id uuid)
returns jsonb
language sql
stable
security definer
set search_path = ''
as $$
  select jsonb_build_object(
    'id', p.id, 'code', p.code, 'status', p.status, 'technician_id', p.technician_id,
    'monthly_value', p.monthly_value, 'contract_months', p.contract_months, 'total_value', p.total_value,
    'approval_token_expires_at', p.approval_token_expires_at, 'created_at', p.created_at,
    'customers', jsonb_build_object('company_name', c.company_name, 'contact_name', c.contact_name, 'email', c.email,
      'phone', c.phone, 'cnpj', c.cnpj),
    'products', jsonb_build_object('name', pr.name, 'description', pr.description),
    'profiles', jsonb_build_object('full_name', t.full_name, 'email', t.email))
  from public.proposals p
  join public.customers c on c.id = p.customer_id
  join public.products pr on pr.id = p.product_id
  join public.profiles t on t.user_id = p.technician_id
  where p.id = p_proposal_id
    and (p.technician_id = (select auth.uid()) or portal_private.has_any_role((select auth.uid()), '{admin,super_admin}'));
$$;
comment on function public.proposal_document(uuid) is
  'A proposal with its customer, product and technician for the PDF and e-mail, or null unless the caller is its technician or an admin.';

revoke execute on function public.proposal_document(uuid) from public, anon;
grant execute on function public.proposal_document(uuid) to authenticated;

-- Nothing in portal_private is callable by PUBLIC (see the foundation migration).
revoke execute on all functions in schema portal_private from public;
