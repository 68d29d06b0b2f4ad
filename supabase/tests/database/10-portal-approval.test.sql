-- The approval link: get_proposal_for_approval and respond_to_proposal are the only way to reach a
-- proposal without signing in. Open, expired, used, closed and unknown tokens; e-mail
-- confirmation; single use.
begin;
select plan(26);

select portal_tests.create_user('tech_a', '{technician}');

create temporary table ids (name text primary key, id uuid) on commit drop;
insert into ids values
  ('product', portal_tests.create_product('Approval Product', 100, 0.1)),
  ('customer', portal_tests.create_customer('tech_a', 'Alfa Approval', '11222333000181', 'compras@alfa.test'));
insert into ids values
  ('to_approve', portal_tests.create_proposal('tech_a', (select id from ids where name = 'customer'), (select id from ids where name = 'product'), 250, 12)),
  ('to_reject', portal_tests.create_proposal('tech_a', (select id from ids where name = 'customer'), (select id from ids where name = 'product'))),
  ('to_expire', portal_tests.create_proposal('tech_a', (select id from ids where name = 'customer'), (select id from ids where name = 'product'))),
  ('to_cancel', portal_tests.create_proposal('tech_a', (select id from ids where name = 'customer'), (select id from ids where name = 'product')));

-- Tokens are issued (and shown in clear) once, as send-proposal-email issues them; only digests are stored.
create temporary table tokens on commit drop as
select ids.name, public.issue_approval_token(p.id) as token, p.code from ids join public.proposals p on p.id = ids.id;
grant select on tokens to anon, authenticated;
update public.proposals set approval_token_expires_at = now() - interval '1 second' where id = (select id from ids where name = 'to_expire');
select portal_tests.set_status((select id from ids where name = 'to_cancel'), 'cancelled');

select portal_tests.act_as_anon();

-- Looking a proposal up ------------------------------------------------------------------------------

select results_eq($$
  select code, status::text, token_state, company_name, contact_name, product_name, monthly_value, contract_months, total_value, technician_name
  from public.get_proposal_for_approval((select token from tokens where name = 'to_approve'))
$$, $$ values (
  (select code from tokens where name = 'to_approve'), 'pending', 'open', 'Alfa Approval', 'Contact of Alfa Approval',
  'Approval Product', 250.00::numeric, 12, 3000.00::numeric, 'Tech A'
) $$, 'An anonymous caller with the token gets the proposal summary and an open token');
select is_empty($$ select * from public.get_proposal_for_approval('no-such-token') $$, 'An unknown token finds nothing');
select is_empty($$ select * from public.get_proposal_for_approval('') $$, 'An empty token finds nothing');
select is_empty($$ select * from public.get_proposal_for_approval(null) $$, 'A null token finds nothing');
select ok(
  not exists (select 1 from jsonb_object_keys(to_jsonb((select g from public.get_proposal_for_approval((select token from tokens where name = 'to_approve')) g))) as k where k ilike '%email%'),
  'The summary never reveals the customer''s e-mail (the customer must type it)'
);
select is((select token_state from public.get_proposal_for_approval((select token from tokens where name = 'to_expire'))), 'expired',
  'A token past its 30 days is expired');
select is((select token_state from public.get_proposal_for_approval((select token from tokens where name = 'to_cancel'))), 'closed',
  'A token of a proposal cancelled before the answer is closed');

-- Answering --------------------------------------------------------------------------------------

select results_eq($$ select outcome, proposal_status::text from public.respond_to_proposal((select token from tokens where name = 'to_approve'), 'someone@else.test', 'approve') $$,
  $$ values ('email_mismatch', 'pending') $$, 'A wrong e-mail changes nothing');
select results_eq($$ select outcome from public.respond_to_proposal((select token from tokens where name = 'to_approve'), 'compras@alfa.test', 'accept') $$,
  $$ values ('invalid_action') $$, 'An unknown action changes nothing');
select results_eq($$ select outcome from public.respond_to_proposal((select token from tokens where name = 'to_approve'), 'compras@alfa.test', null) $$,
  $$ values ('invalid_action') $$, 'A missing action changes nothing');
select results_eq($$ select outcome, proposal_code from public.respond_to_proposal('no-such-token', 'compras@alfa.test', 'approve') $$,
  $$ values ('unknown_token', null::text) $$, 'An unknown token changes nothing');
select results_eq($$ select outcome, proposal_status::text from public.respond_to_proposal((select token from tokens where name = 'to_expire'), 'compras@alfa.test', 'approve') $$,
  $$ values ('expired', 'pending') $$, 'An expired token cannot approve');
select results_eq($$ select outcome from public.respond_to_proposal((select token from tokens where name = 'to_cancel'), 'compras@alfa.test', 'approve') $$,
  $$ values ('closed') $$, 'A closed token cannot approve');
select results_eq($$ select outcome, proposal_code, proposal_status::text from public.respond_to_proposal((select token from tokens where name = 'to_approve'), '  Compras@Alfa.TEST ', 'approve') $$,
  $$ values ('approved', (select code from tokens where name = 'to_approve'), 'approved') $$,
  'The customer''s e-mail (any case, surrounding spaces) approves the proposal');
select results_eq($$ select outcome, proposal_status::text from public.respond_to_proposal((select token from tokens where name = 'to_approve'), 'compras@alfa.test', 'reject') $$,
  $$ values ('used', 'approved') $$, 'The link works once: a second answer is refused');
select is((select token_state from public.get_proposal_for_approval((select token from tokens where name = 'to_approve'))), 'used',
  'After the answer the token is used');
select isnt((select responded_at from public.get_proposal_for_approval((select token from tokens where name = 'to_approve'))), null,
  'The summary says when the customer answered');
select results_eq($$ select outcome, proposal_status::text from public.respond_to_proposal((select token from tokens where name = 'to_reject'), 'compras@alfa.test', 'reject') $$,
  $$ values ('rejected', 'rejected') $$, 'The customer can reject');
reset role;

-- What the answers left behind -------------------------------------------------------------------

select results_eq($$ select status::text, approval_token_used_at from public.proposals where id = (select id from ids where name = 'to_approve') $$,
  $$ values ('approved', now()) $$, 'The approved proposal is approved and its token used');
select results_eq($$ select status::text from public.proposals where id in (select id from ids where name in ('to_expire', 'to_cancel')) order by status $$,
  $$ values ('cancelled'), ('pending') $$, 'Refused answers left their proposals as they were');
select results_eq($$ select action, actor_id from public.audit_log where entity_id = (select id::text from ids where name = 'to_approve') order by id $$,
  $$ values ('proposal.created', null::uuid), ('proposal.approved', null::uuid) $$,
  'The customer''s approval is audited without a signed-in actor');
select results_eq($$ select action from public.audit_log where entity_id = (select id::text from ids where name = 'to_reject') order by id $$,
  $$ values ('proposal.created'), ('proposal.rejected') $$, 'The rejection is audited');
select portal_tests.set_status((select id from ids where name = 'to_approve'), 'active');
select portal_tests.act_as_anon();
select results_eq($$ select status::text, token_state from public.get_proposal_for_approval((select token from tokens where name = 'to_approve')) $$,
  $$ values ('active', 'used') $$, 'An activated proposal still shows as answered');

-- Signed-in callers use the same door --------------------------------------------------------------

reset role;
select portal_tests.act_as('tech_a');
select is((select token_state from public.get_proposal_for_approval((select token from tokens where name = 'to_reject'))), 'used',
  'A signed-in caller may open an approval link too');
reset role;
select portal_tests.act_as_anon();
select throws_ok($$ select count(*) from public.customers $$, '42501', null, 'The approval functions open no other door: customers stay closed to anon');
reset role;
select is(
  (select prosecdef from pg_proc where oid = 'public.respond_to_proposal(text, text, text)'::regprocedure), true,
  'respond_to_proposal is security definer (it changes a row anon cannot see)'
);

select * from finish();
rollback;
