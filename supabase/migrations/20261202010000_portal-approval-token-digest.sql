-- Proposals portal: the approval token is kept only as a SHA-256 digest, in a private table, the
-- way workflow API keys are (workflows_private.api_key_hashes).
--
-- The clear token used to live in proposals.approval_token, hidden from signed-in users by a
-- column privilege (20261123100000_portal-approval-token-privacy.sql). Postgres checks column
-- privileges for every column a query names, and `select *` names them all, so the commonest
-- supabase-js idioms (`.select()`, `.insert(...).select()`, `.update(...).select()`,
-- `customers?select=*,proposals(*)`) answered 42501 for everyone, admins included. Moving the
-- secret out of the table fixes that for good: proposals holds nothing secret, authenticated gets
-- SELECT on the whole table again, and `*` works on every portal table.
--
-- Only the digest is stored, so the clear token exists only in what the customer receives (the
-- e-mail and its PDF): a leaked table or backup opens no proposal. The consequence is that a token
-- can be shown once only: send-proposal-email asks issue_approval_token() for a fresh one each time
-- it sends, which replaces the previous one (the newest e-mail holds the only working link). The
-- expiry stays on the proposal (30 days from creation), so re-sending never extends it.
--
-- Existing tokens keep working: their digests are moved over before the clear column is dropped.

-- The table ------------------------------------------------------------------------------------

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

-- Existing tokens move over, then the clear column goes ---------------------------------------------

insert into portal_private.proposal_approval_tokens (proposal_id, token_digest, issued_at)
select id, portal_private.approval_token_digest(approval_token), created_at
from public.proposals;

alter table public.proposals drop column approval_token;

-- Nothing in proposals is secret any more: the whole table is readable (RLS still picks the rows),
-- so `select *`, RETURNING and embeddings work, and columns added later need no grant by name.
grant select on public.proposals to authenticated;

comment on column public.proposals.approval_token_expires_at is
  'The approval link stops working at this instant (30 days after creation); re-sending the e-mail does not extend it.';

-- New proposals no longer draw a token on insert ----------------------------------------------------

/**
 * Trigger function: what every new proposal starts with. It must be pending; it gets the next
 * code of the month and its approval link's 30-day expiry. The token itself is issued when the
 * proposal is e-mailed (issue_approval_token), because only then can its clear text go anywhere.
 * Security definer for the private code counters.
 */
create or replace function portal_private.prepare_new_proposal()
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
create or replace function public.get_proposal_for_approval(_token text)
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
comment on function public.get_proposal_for_approval(text) is
  'Summary of the proposal behind an approval token (matched by digest), with the token state; empty for an unknown token. Callable without sign-in.';

/**
 * The customer's answer through the approval link. Approves or rejects when the token is open and
 * the e-mail matches the customer's (case-insensitive); otherwise changes nothing and says why.
 * outcome: approved, rejected, unknown_token, expired, used, closed, email_mismatch or
 * invalid_action. The row is locked so two answers cannot both win.
 */
create or replace function public.respond_to_proposal(
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
