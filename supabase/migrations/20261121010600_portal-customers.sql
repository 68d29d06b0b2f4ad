-- Proposals portal, part 7: customers. Each customer (a company) belongs to one technician, who
-- alone sees and edits it; admins see all and may transfer a customer to another technician.
--
-- Identifiers are stored normalised: CNPJ without mask and upper case (numeric or the 2026
-- alphanumeric format), e-mail lower case, phone as area code + number digits, CEP as 8 digits.
-- A BEFORE trigger normalises and rejects bad values with a clear message; CHECK constraints
-- guarantee the same for any path that skips the trigger. A CNPJ is unique across the portal (one
-- company, one technician); an e-mail is unique per technician.

create table public.customers (
  id uuid primary key default gen_random_uuid(),
  technician_id uuid not null default auth.uid() references public.profiles (user_id) on delete restrict,
  company_name text not null
    constraint customers_company_name_length check (char_length(btrim(company_name)) between 1 and 200),
  contact_name text not null
    constraint customers_contact_name_length check (char_length(btrim(contact_name)) between 1 and 200),
  email text not null constraint customers_email_valid check (portal_private.is_valid_email(email)),
  phone text not null constraint customers_phone_valid check (portal_private.is_valid_phone(phone)),
  cnpj text not null constraint customers_cnpj_valid check (portal_private.is_valid_cnpj(cnpj)),
  postal_code text
    constraint customers_postal_code_valid check (postal_code is null or portal_private.is_valid_postal_code(postal_code)),
  street text,
  city text,
  state text constraint customers_state_valid check (state in (
    'AC', 'AL', 'AP', 'AM', 'BA', 'CE', 'DF', 'ES', 'GO', 'MA', 'MT', 'MS', 'MG', 'PA',
    'PB', 'PR', 'PE', 'PI', 'RJ', 'RN', 'RS', 'RO', 'RR', 'SC', 'SP', 'SE', 'TO'
  )),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint customers_cnpj_key unique (cnpj),
  constraint customers_technician_id_email_key unique (technician_id, email),
  constraint customers_company_name_no_control_characters check (shared_private.is_plain_text(company_name)),
  constraint customers_contact_name_no_control_characters check (shared_private.is_plain_text(contact_name)),
  constraint customers_street_no_control_characters check (shared_private.is_plain_text(street)),
  constraint customers_city_no_control_characters check (shared_private.is_plain_text(city))
);
comment on table public.customers is 'Companies a technician sells to. Visible to their technician and to admins.';
comment on column public.customers.id is 'Customer id.';
comment on column public.customers.technician_id is 'Technician who owns the customer (profiles.user_id); defaults to the caller. Only admins change it (a transfer).';
comment on column public.customers.company_name is 'Legal company name (razão social).';
comment on column public.customers.contact_name is 'Person to talk to at the company.';
comment on column public.customers.email is
  'Contact e-mail, stored lower case; unique per technician. Approval links are sent only here and the approval page checks answers against it, so it cannot change while a proposal of the customer awaits an answer.';
comment on column public.customers.phone is 'Brazilian phone, stored as area code + number digits (10 or 11 digits).';
comment on column public.customers.cnpj is 'CNPJ, stored normalised (14 characters, no mask); numeric or 2026 alphanumeric, check digits verified. Unique.';
comment on column public.customers.postal_code is 'CEP, 8 digits without hyphen (optional); the postal-code-lookup function fills the address from it.';
comment on column public.customers.street is 'Street address (logradouro, number, complement).';
comment on column public.customers.city is 'City (localidade).';
comment on column public.customers.state is 'State (UF), two upper-case letters.';
comment on column public.customers.created_at is 'When the customer was created.';
comment on column public.customers.updated_at is 'When the customer last changed.';

-- Serves the technician policies and "customers of a technician ordered by company_name".
create index customers_technician_id_company_name_idx on public.customers (technician_id, company_name);

create trigger customers_set_updated_at
  before update on public.customers
  for each row execute function portal_private.set_updated_at();

/**
 * Trigger function: normalises the identifiers of a customer and refuses invalid ones with a
 * message naming the field, before the CHECK constraints would refuse them less clearly. Also
 * requires the owner to be a technician.
 */
create function portal_private.prepare_customer()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.company_name := btrim(new.company_name);
  new.contact_name := btrim(new.contact_name);
  new.email := lower(btrim(new.email));
  new.cnpj := portal_private.normalize_cnpj(new.cnpj);
  new.phone := portal_private.normalize_phone(new.phone);
  new.postal_code := nullif(portal_private.normalize_postal_code(new.postal_code), '');
  new.state := nullif(upper(btrim(new.state)), '');

  if not portal_private.is_valid_cnpj(new.cnpj) then
    raise exception 'Invalid CNPJ "%"', new.cnpj
      using errcode = 'check_violation',
        detail = 'A CNPJ has 12 letters or digits followed by 2 check digits, and the check digits must match.';
  end if;
  if not portal_private.is_valid_email(new.email) then
    raise exception 'Invalid e-mail "%"', new.email using errcode = 'check_violation';
  end if;
  if not portal_private.is_valid_phone(new.phone) then
    raise exception 'Invalid phone "%"', new.phone
      using errcode = 'check_violation',
        detail = 'Expected a Brazilian number with area code, e.g. (11) 99999-9999 or (11) 3333-4444.';
  end if;
  if new.postal_code is not null and not portal_private.is_valid_postal_code(new.postal_code) then
    raise exception 'Invalid CEP "%"', new.postal_code
      using errcode = 'check_violation', detail = 'A CEP has 8 digits, e.g. 01001-000.';
  end if;
  if tg_op = 'INSERT' or new.technician_id is distinct from old.technician_id then
    if not public.has_role(new.technician_id, 'technician') then
      raise exception 'User % is not a technician', new.technician_id
        using errcode = 'check_violation', detail = 'Customers belong to users holding the technician role.';
    end if;
  end if;
  return new;
end;
$$;
comment on function portal_private.prepare_customer() is
  'BEFORE INSERT/UPDATE trigger on customers: normalises CNPJ, e-mail, phone, CEP and state, and rejects invalid values clearly.';

create trigger customers_prepare
  before insert or update on public.customers
  for each row execute function portal_private.prepare_customer();

alter table public.customers enable row level security;

revoke all on public.customers from anon, authenticated, service_role;
grant select, delete on public.customers to authenticated;
grant insert (technician_id, company_name, contact_name, email, phone, cnpj, postal_code, street, city, state),
  update (technician_id, company_name, contact_name, email, phone, cnpj, postal_code, street, city, state)
  on public.customers to authenticated;
grant select, insert, update, delete on public.customers to service_role;

create policy "Technicians can read their own customers" on public.customers
  for select to authenticated
  using (technician_id = (select auth.uid()));
create policy "Admins can read every customer" on public.customers
  for select to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can read every customer" on public.customers
  for select to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')));

create policy "Technicians can add their own customers" on public.customers
  for insert to authenticated
  with check (
    technician_id = (select auth.uid())
    and (select public.has_role((select auth.uid()), 'technician'))
  );
create policy "Admins can add customers for any technician" on public.customers
  for insert to authenticated
  with check ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can add customers for any technician" on public.customers
  for insert to authenticated
  with check ((select public.has_role((select auth.uid()), 'super_admin')));

-- The WITH CHECK keeps a technician from handing a customer to someone else: only admins transfer.
create policy "Technicians can edit their own customers" on public.customers
  for update to authenticated
  using (technician_id = (select auth.uid()))
  with check (technician_id = (select auth.uid()));
create policy "Admins can edit and transfer every customer" on public.customers
  for update to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')))
  with check ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can edit and transfer every customer" on public.customers
  for update to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')))
  with check ((select public.has_role((select auth.uid()), 'super_admin')));

create policy "Technicians can remove their own customers" on public.customers
  for delete to authenticated
  using (technician_id = (select auth.uid()));
create policy "Admins can remove every customer" on public.customers
  for delete to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can remove every customer" on public.customers
  for delete to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')));

-- Nothing in portal_private is callable by PUBLIC (see the foundation migration).
revoke execute on all functions in schema portal_private from public;
