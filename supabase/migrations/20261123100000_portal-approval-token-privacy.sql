-- Proposals portal: the approval token never reaches a signed-in user through the data API.
--
-- Signed-in users used to hold SELECT on every column of proposals, so a technician could create
-- a proposal with `Prefer: return=representation` (or simply read it back), take approval_token,
-- open the approval link and confirm with the customer's e-mail, which they know: approving their
-- own proposal. The token is the customer's credential; the customer gets it only in the e-mail
-- and PDF that send-proposal-email and generate-proposal-pdf build with the service role.
--
-- Column privileges are what Postgres checks for every way a query can touch a column, so one
-- revoke closes them all: the select list, RETURNING (what PostgREST's return=representation
-- reads), WHERE and ORDER BY (guessing the token through filters), whole-row references
-- (`select p`, to_jsonb) and embeddings (`customers?select=*,proposals(*)`). It holds for every
-- signed-in user, admins and super admins included; only service_role (server code) reads it.
--
-- Consequence for clients: `select=*` on proposals, and `proposals(*)` inside an embedding, now
-- answer 42501 (HTTP 403) instead of silently including the token; list the columns wanted, as
-- docs/proposals-portal.md shows. A column added to proposals later is not readable by
-- authenticated until it is granted here-style, by name.

revoke select on public.proposals from authenticated;
grant select (
  id, code, customer_id, technician_id, product_id, monthly_value, contract_months, total_value,
  status, notes, approval_token_expires_at, approval_token_used_at, activated_at, cancelled_at,
  created_at, updated_at
) on public.proposals to authenticated;

comment on column public.proposals.approval_token is
  'Secret for the customer''s approval link (256 random bits, base64url), set on insert. Not readable through the data API by any signed-in user; the PDF and e-mail functions read it with the service role.';
