-- Proposals portal, part 9: the customer's approval link, the only way to reach a proposal
-- without signing in. Anonymous callers get no table grants on proposals, so they can never list
-- them; these two security-definer functions return or change exactly one proposal, identified by
-- its 256-bit approval token. The approve-proposal edge function renders them as an HTML page.
--
-- Token states: open (pending, unused, not expired), expired (pending, past its 30 days), used
-- (the customer already approved or rejected), closed (cancelled before the customer answered).

/** The state of a proposal's approval link, from its status and token timestamps. */
create function portal_private.approval_token_state(_proposal public.proposals)
returns text
language sql
stable
set search_path = ''
as $$
  select case
    when _proposal.approval_token_used_at is not null then 'used'
    when _proposal.status <> 'pending' then 'closed'
    when _proposal.approval_token_expires_at <= now() then 'expired'
    else 'open'
  end;
$$;
comment on function portal_private.approval_token_state(public.proposals) is
  'open, expired, used or closed: whether the proposal''s approval link can still be answered.';

/**
 * The customer's answer through the approval link. Approves or rejects when the token is open and
 * the e-mail matches the customer's (case-insensitive); otherwise changes nothing and says why.
 * outcome: approved, rejected, unknown_token, expired, used, closed, email_mismatch or
 * invalid_action. The row is locked so two answers cannot both win.
 */
create function public.respond_to_proposal(
  _token text,
  _email text,
  _action text,
  out outcome text,
  out proposal_code text,
  out proposal_status public.proposal_status
)
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  proposal public.proposals;
  customer_email text;
  state text;
begin
  select p.* into proposal
  from portal_private.proposal_approval_tokens as k
  join public.proposals as p on p.id = k.proposal_id
  where k.token_digest = portal_private.approval_token_digest(_token)
  for update of p;
  if not found then
    outcome := 'unknown_token';
    return;
  end if;
  proposal_code := proposal.code;
  proposal_status := proposal.status;

  state := portal_private.approval_token_state(proposal);
  if state <> 'open' then
    outcome := state;
    return;
  end if;
  if _action is null or _action not in ('approve', 'reject') then
    outcome := 'invalid_action';
    return;
  end if;

  select email into customer_email from public.customers where id = proposal.customer_id;
  if customer_email is distinct from lower(btrim(_email)) then
    outcome := 'email_mismatch';
    return;
  end if;

  update public.proposals
  set status = case _action when 'approve' then 'approved' else 'rejected' end::public.proposal_status
  where id = proposal.id
  returning status into proposal_status;
  outcome := proposal_status::text;
end;
$$;
comment on function public.respond_to_proposal(text, text, text) is
  'Approves or rejects the proposal behind an approval token (matched by digest) when the e-mail matches the customer''s. Callable without sign-in; returns outcome, proposal_code, proposal_status.';

-- Nothing in portal_private is callable by PUBLIC (see the foundation migration).
revoke execute on all functions in schema portal_private from public;
-- Column grants on proposals -------------------------------------------------------------------
-- Signed-in users get SELECT on proposals by column, listed here by name: a column added to
-- proposals later is not readable by authenticated until it is granted here too.

revoke select on public.proposals from authenticated;
grant select (
  id, code, customer_id, technician_id, product_id, monthly_value, contract_months, total_value,
  status, notes, approval_token_expires_at, approval_token_used_at, activated_at, cancelled_at,
  created_at, updated_at
) on public.proposals to authenticated;
-- The address an approval link goes to cannot be redirected while it is open -------------------
-- send-proposal-email sends the link only to the customer's e-mail on file, and the approval page
-- accepts only that address. Both read the address when they run, so whoever could change it while
-- a link is open could redirect the link: a technician could set their customer's e-mail to their
-- own, send the proposal to "the customer", and approve it. Two doors, closed for every caller
-- (technicians, admins, server code alike):
--
--   1. customers.email cannot change while the customer has a pending proposal whose link has not
--      expired. Rotating the tokens instead would not help: the new link would go to the new
--      address. To fix a wrong address, cancel the open proposals, change it, make new ones.
--   2. proposals.customer_id never changes once a proposal exists (values are frozen outside
--      pending; this freezes the customer while pending too), since pointing a pending proposal at
--      another customer changes the address it answers to just the same.
--
-- What remains is a customer registered with an address the technician controls from the start;
-- admin activation is the safeguard for that (docs/proposals-portal.md, "Known limits").

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
revoke execute on all functions in schema portal_private from public;
-- Approval tokens -------------------------------------------------------------------------------
-- The approval token is kept only as a SHA-256 digest, in a private table, the way workflow API
-- keys are (workflows_private.api_key_hashes). proposals holds nothing secret, so authenticated
-- reads it whole and `select=*` works on every portal table.
--
-- Only the digest is stored, so the clear token exists only in what the customer receives (the
-- e-mail and its PDF): a leaked table or backup opens no proposal. The consequence is that a token
-- can be shown once only: send-proposal-email asks issue_approval_token() for a fresh one each time
-- it sends, which replaces the previous one (the newest e-mail holds the only working link). The
-- expiry stays on the proposal (30 days from creation), so re-sending never extends it.

create table portal_private.proposal_approval_tokens (
  proposal_id uuid primary key references public.proposals (id) on delete cascade,
  token_digest bytea not null constraint proposal_approval_tokens_token_digest_key unique,
  issued_at timestamptz not null default now()
);
comment on table portal_private.proposal_approval_tokens is
  'SHA-256 digest of each proposal''s current approval token, the only trace of the token itself. At most one per proposal; no API role may read it.';
comment on column portal_private.proposal_approval_tokens.proposal_id is 'The proposal the token answers.';
comment on column portal_private.proposal_approval_tokens.token_digest is 'sha256 of the token''s UTF-8 text; lookups compare digests.';
comment on column portal_private.proposal_approval_tokens.issued_at is 'When the token was issued (each e-mail issues a new one, replacing the previous).';
-- Default deny: portal_private is not exposed by PostgREST, and on top of that no API role holds a
-- privilege on the table and RLS (with no policy) refuses every row, so even a future grant or an
-- exposed schema would show nothing. Only the security-definer functions below touch it.
alter table portal_private.proposal_approval_tokens enable row level security;
revoke all on portal_private.proposal_approval_tokens from public, anon, authenticated, service_role;
/**
 * The stored digest of an approval token. PL/pgSQL rather than SQL for the reason
 * workflows_private.api_key_digest gives: a SQL function with a SET clause is planned anew on every
 * call, and this one runs for every approval page view.
 */
create function portal_private.approval_token_digest(_token text)
returns bytea
language plpgsql
immutable
set search_path = ''
as $$
begin
  return pg_catalog.sha256(pg_catalog.convert_to(_token, 'UTF8'));
end;
$$;
comment on function portal_private.approval_token_digest(text) is
  'SHA-256 of an approval token''s text: what proposal_approval_tokens stores and lookups compare.';
-- Nothing in proposals is secret any more: the whole table is readable (RLS still picks the rows),
-- so `select *`, RETURNING and embeddings work, and columns added later need no grant by name.
grant select on public.proposals to authenticated;
-- Issuing a token ---------------------------------------------------------------------------------

/**
 * A fresh approval token for a pending proposal whose link has not expired, returned in clear this
 * once; only its digest is kept, replacing the previous token's (so an older e-mail's link stops
 * working). Server code only (service_role): send-proposal-email calls it right before sending,
 * and it must never run for a signed-in user, who would then hold the customer's credential.
 * Refuses an unknown proposal (P0002) and one that cannot be answered any more (P0001).
 */
create function public.issue_approval_token(_proposal_id uuid)
returns text
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  proposal public.proposals;
  token text := public.generate_approval_token();
begin
  -- Locked so an answer arriving meanwhile cannot slip between the check and the new digest.
  select * into proposal from public.proposals where id = _proposal_id for update;
  if not found then
    raise exception 'No proposal %', _proposal_id using errcode = 'no_data_found';
  end if;
  if proposal.status <> 'pending' then
    raise exception 'Proposal % is %: only pending proposals get an approval link', proposal.code, proposal.status
      using errcode = 'P0001';
  end if;
  if proposal.approval_token_expires_at <= now() then
    raise exception 'The approval link of proposal % has expired', proposal.code
      using errcode = 'P0001', hint = 'Make a new proposal.';
  end if;

  insert into portal_private.proposal_approval_tokens (proposal_id, token_digest, issued_at)
  values (proposal.id, portal_private.approval_token_digest(token), now())
  on conflict (proposal_id) do update set token_digest = excluded.token_digest, issued_at = excluded.issued_at;
  return token;
end;
$$;
comment on function public.issue_approval_token(uuid) is
  'Issues a new approval token for a pending, unexpired proposal and returns it in clear once (only its digest is stored; the previous token stops working). service_role only.';
revoke execute on function public.issue_approval_token(uuid) from public, anon, authenticated;
grant execute on function public.issue_approval_token(uuid) to service_role;
-- The approval functions look the token up by digest ------------------------------------------------

/**
 * What the approval page shows for a token: the proposal summary (never the customer's e-mail,
 * which the customer must type to confirm) and the token state. No row for an unknown token, nor
 * for one replaced by a newer e-mail.
 */
create function public.get_proposal_for_approval(_token text)
returns table (
  code text,
  status public.proposal_status,
  token_state text,
  company_name text,
  contact_name text,
  product_name text,
  product_description text,
  monthly_value numeric,
  contract_months integer,
  total_value numeric,
  technician_name text,
  expires_at timestamptz,
  responded_at timestamptz
)
language sql
stable
security definer
set search_path = ''
as $$
  select
    p.code, p.status, portal_private.approval_token_state(p),
    c.company_name, c.contact_name, pr.name, pr.description,
    p.monthly_value, p.contract_months, p.total_value,
    t.full_name, p.approval_token_expires_at, p.approval_token_used_at
  from portal_private.proposal_approval_tokens as k
  join public.proposals as p on p.id = k.proposal_id
  join public.customers as c on c.id = p.customer_id
  join public.products as pr on pr.id = p.product_id
  join public.profiles as t on t.user_id = p.technician_id
  where k.token_digest = portal_private.approval_token_digest(_token);
$$;
revoke execute on function public.get_proposal_for_approval(text), public.respond_to_proposal(text, text, text) from public;
-- The token is the credential, so anonymous callers may use these (Supabase's linter warns about
-- anon-executable security definer functions; this is the deliberate exception).
grant execute on function public.get_proposal_for_approval(text), public.respond_to_proposal(text, text, text)
  to anon, authenticated, service_role;
comment on function public.get_proposal_for_approval(text) is
  'Summary of the proposal behind an approval token (matched by digest), with the token state; empty for an unknown token. Callable without sign-in.';
-- Nothing in portal_private is callable by PUBLIC (see the foundation migration).
revoke execute on all functions in schema portal_private from public;
