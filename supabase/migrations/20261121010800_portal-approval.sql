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
 * What the approval page shows for a token: the proposal summary (never the customer's e-mail,
 * which the customer must type to confirm) and the token state. No row for an unknown token.
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
  from public.proposals as p
  join public.customers as c on c.id = p.customer_id
  join public.products as pr on pr.id = p.product_id
  join public.profiles as t on t.user_id = p.technician_id
  where p.approval_token = _token;
$$;
comment on function public.get_proposal_for_approval(text) is
  'Summary of the proposal behind an approval token, with the token state; empty for an unknown token. Callable without sign-in.';

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
  select * into proposal from public.proposals where approval_token = _token for update;
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
  'Approves or rejects the proposal behind an approval token when the e-mail matches the customer''s. Callable without sign-in; returns outcome, proposal_code, proposal_status.';

revoke execute on function public.get_proposal_for_approval(text), public.respond_to_proposal(text, text, text) from public;
-- The token is the credential, so anonymous callers may use these (Supabase's linter warns about
-- anon-executable security definer functions; this is the deliberate exception).
grant execute on function public.get_proposal_for_approval(text), public.respond_to_proposal(text, text, text)
  to anon, authenticated, service_role;

-- Nothing in portal_private is callable by PUBLIC (see the foundation migration).
revoke execute on all functions in schema portal_private from public;
