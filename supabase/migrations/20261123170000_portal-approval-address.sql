-- Proposals portal: the address an approval link goes to cannot be redirected while it is open.
--
-- send-proposal-email sends the link only to the customer's e-mail on file, and the approval page
-- accepts only that address. Both read the address when they run, so whoever can change it while
-- a link is open can redirect the link: a technician could set their customer's e-mail to their
-- own, send the proposal to "the customer", and approve it. Two doors, closed here for every
-- caller (technicians, admins, server code alike):
--
--   1. customers.email cannot change while the customer has a pending proposal whose link has not
--      expired. Rotating the tokens instead would not help: the new link would go to the new
--      address. To fix a wrong address, cancel the open proposals, change it, make new ones.
--   2. proposals.customer_id never changes once a proposal exists (values were already frozen
--      outside pending; this freezes the customer while pending too), since pointing a pending
--      proposal at another customer changes the address it answers to just the same.
--
-- What remains is a customer registered with an address the technician controls from the start;
-- admin activation is the safeguard for that (docs/proposals-portal.md, "Known limits").

-- The customer's address --------------------------------------------------------------------------

/**
 * Trigger function: refuses a new e-mail for a customer while any of its proposals is pending
 * with an unexpired link (that link was, or will be, sent to the current address, and the page
 * checks the answer against it). Security definer so it sees every proposal of the customer,
 * including those of the technician it was transferred from, which the caller's RLS hides.
 */
create function portal_private.keep_approval_address()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  open_codes text;
begin
  select string_agg(code, ', ' order by code) into open_codes
  from public.proposals
  where customer_id = old.id and status = 'pending' and approval_token_expires_at > now();
  if open_codes is not null then
    raise exception 'The e-mail of customer "%" cannot change while proposals await its answer (%)', old.company_name, open_codes
      using errcode = 'P0001',
        detail = 'Their approval links go to the current address, and the approval page checks answers against it.',
        hint = 'Cancel those proposals, change the e-mail, then make new proposals.';
  end if;
  return new;
end;
$$;
comment on function portal_private.keep_approval_address() is
  'BEFORE UPDATE OF email trigger on customers: refuses a new e-mail while the customer has a pending proposal with an open approval link.';

-- Fires after customers_prepare (BEFORE triggers fire in name order), so the comparison is between
-- normalised addresses: re-typing the same address in another case changes nothing and passes.
create trigger customers_protect_approval_address
  before update of email on public.customers
  for each row
  when (new.email is distinct from old.email)
  execute function portal_private.keep_approval_address();

-- The proposal's customer -------------------------------------------------------------------------

/** Trigger function: refuses moving a proposal to another customer (see the migration comment). */
create function portal_private.keep_proposal_customer()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  raise exception 'The customer of proposal % cannot change', old.code
    using errcode = 'P0001',
      detail = 'Its approval link is answered with the customer''s e-mail, so the customer is fixed when the proposal is made.',
      hint = 'Cancel it and make a new proposal for the other customer.';
end;
$$;
comment on function portal_private.keep_proposal_customer() is
  'BEFORE UPDATE OF customer_id trigger on proposals: a proposal''s customer never changes.';

-- Named to fire after proposals_40_guard_update, which already answers "can no longer be edited"
-- for proposals outside pending; this adds pending ones.
create trigger proposals_45_keep_customer
  before update of customer_id on public.proposals
  for each row
  when (new.customer_id is distinct from old.customer_id)
  execute function portal_private.keep_proposal_customer();

comment on column public.proposals.customer_id is
  'The customer (must belong to the proposal''s technician). Fixed when the proposal is made: its approval link answers to this customer''s e-mail.';
comment on column public.customers.email is
  'Contact e-mail, stored lower case; unique per technician. Approval links are sent only here and the approval page checks answers against it, so it cannot change while a proposal of the customer awaits an answer.';

revoke execute on all functions in schema portal_private from public;
