-- Portal: the permission checks the edge functions make, as one call each, built on has_role.
-- The functions used to read roles and proposals with the service role and decide in TypeScript,
-- a second copy of rules the policies already state; the rules now live here, beside the policies.

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
    and (p.technician_id = (select auth.uid())
      or public.has_role((select auth.uid()), 'admin')
      or public.has_role((select auth.uid()), 'super_admin'));
$$;
comment on function public.proposal_document(uuid) is
  'A proposal with its customer, product and technician for the PDF and e-mail, or null unless the caller is its technician or an admin.';

revoke execute on function public.proposal_document(uuid) from public, anon;
grant execute on function public.proposal_document(uuid) to authenticated;

/**
 * Why the caller may not reset `p_target`'s password, or null when they may: 'not_an_admin' for a
 * caller who is neither admin nor super admin (whoever the target, so it tells nothing about
 * which ids exist), 'target_is_super_admin' when an admin aims at a super admin, so an admin
 * cannot take over the one account above theirs.
 */
create function public.password_reset_refusal(p_target uuid)
returns text
language sql
stable
security definer
set search_path = ''
as $$
  select case
    when not (public.has_role((select auth.uid()), 'admin') or public.has_role((select auth.uid()), 'super_admin')) then 'not_an_admin'
    when public.has_role(p_target, 'super_admin') and not public.has_role((select auth.uid()), 'super_admin') then 'target_is_super_admin'
  end;
$$;
comment on function public.password_reset_refusal(uuid) is
  'Null when the caller may reset the user''s password; otherwise not_an_admin or target_is_super_admin.';

revoke execute on function public.password_reset_refusal(uuid) from public, anon;
grant execute on function public.password_reset_refusal(uuid) to authenticated;
