-- Proposals portal seed for local development: four users who can sign in (a super admin, an
-- admin and two technicians, all with the password Orbita#2026), a product catalogue, customers of
-- each technician and proposals in every state. Idempotent: rerunning it adds nothing twice.
--
-- Users are written the way GoTrue stores them (bcrypt password, identity row, token columns set
-- to '' because GoTrue reads them as non-null strings), so the real Auth API signs them in. Their
-- profiles come from the trigger on auth.users. The two pending proposals get fixed approval
-- tokens so the approval page can be opened from the docs; every other token is issued when its
-- proposal is e-mailed.
-- Local use only: never push this seed to a shared project.

insert into auth.users (
  instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
  raw_app_meta_data, raw_user_meta_data, created_at, updated_at,
  confirmation_token, recovery_token, email_change_token_new, email_change
)
select
  '00000000-0000-0000-0000-000000000000', seed.id, 'authenticated', 'authenticated', seed.email,
  extensions.crypt('Orbita#2026', extensions.gen_salt('bf')), now(),
  '{"provider": "email", "providers": ["email"]}', jsonb_build_object('full_name', seed.full_name), now(), now(),
  '', '', '', ''
from (values
  ('5e3d0000-0000-4000-8000-000000000001'::uuid, 'superadmin@orbita.local', 'Diego Rocha'),
  ('5e3d0000-0000-4000-8000-000000000002'::uuid, 'admin@orbita.local', 'Carla Mendes'),
  ('5e3d0000-0000-4000-8000-000000000003'::uuid, 'ana.souza@orbita.local', 'Ana Souza'),
  ('5e3d0000-0000-4000-8000-000000000004'::uuid, 'bruno.lima@orbita.local', 'Bruno Lima')
) as seed (id, email, full_name)
on conflict (id) do nothing;

insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
select id::text, id,
  jsonb_build_object('sub', id::text, 'email', email, 'email_verified', true, 'phone_verified', false),
  'email', now(), now(), now()
from auth.users
where id in (
  '5e3d0000-0000-4000-8000-000000000001', '5e3d0000-0000-4000-8000-000000000002',
  '5e3d0000-0000-4000-8000-000000000003', '5e3d0000-0000-4000-8000-000000000004'
)
on conflict (provider_id, provider) do nothing;

insert into public.user_roles (user_id, role) values
  ('5e3d0000-0000-4000-8000-000000000001', 'super_admin'),
  ('5e3d0000-0000-4000-8000-000000000002', 'admin'),
  ('5e3d0000-0000-4000-8000-000000000003', 'technician'),
  ('5e3d0000-0000-4000-8000-000000000004', 'technician')
on conflict (user_id, role) do nothing;

insert into public.products (id, name, description, price, monthly_price, product_type, commission_percentage, is_active) values
  ('5e3d1000-0000-4000-8000-000000000001', 'Google Workspace Business Starter', 'E-mail profissional, 30 GB por usuário, Meet com 100 participantes.', 0, 35.00, 'google_workspace', 0.1000, true),
  ('5e3d1000-0000-4000-8000-000000000002', 'Google Workspace Business Standard', 'E-mail profissional, 2 TB por usuário, gravação de reuniões.', 0, 70.00, 'google_workspace', 0.1000, true),
  ('5e3d1000-0000-4000-8000-000000000003', 'Microsoft 365 Business Premium', 'Office, Teams, Intune e Defender para empresas de até 300 usuários.', 0, 130.00, 'microsoft_365', 0.1200, true),
  ('5e3d1000-0000-4000-8000-000000000004', 'Vivo Fibra Empresas 500 Mega', 'Internet fibra com IP fixo e suporte 24 horas.', 150.00, 199.90, 'internet', 0.0800, true),
  ('5e3d1000-0000-4000-8000-000000000005', 'Microsoft 365 E5 (descontinuado)', 'Plano fora de linha; mantido para o histórico.', 0, 320.00, 'microsoft_365', 0.1200, false)
on conflict (id) do nothing;

insert into public.customers (id, technician_id, company_name, contact_name, email, phone, cnpj, postal_code, street, city, state) values
  ('5e3d2000-0000-4000-8000-000000000001', '5e3d0000-0000-4000-8000-000000000003', 'Padaria Pão Dourado Ltda', 'Marcos Pereira', 'marcos@paodourado.com.br', '(11) 98765-4321', '98.765.432/0001-98', '01001-000', 'Praça da Sé, 100', 'São Paulo', 'SP'),
  ('5e3d2000-0000-4000-8000-000000000002', '5e3d0000-0000-4000-8000-000000000003', 'Clínica Sorriso Pleno S.A.', 'Juliana Costa', 'juliana@sorrisopleno.com.br', '(11) 3344-5566', '24.681.357/0001-40', null, null, 'São Paulo', 'SP'),
  ('5e3d2000-0000-4000-8000-000000000003', '5e3d0000-0000-4000-8000-000000000004', 'Nova Era Tecnologia Ltda', 'Rafael Nunes', 'rafael@novaera.tec.br', '(21) 99876-5432', 'N0.VAE.RA2/026T-27', null, null, 'Rio de Janeiro', 'RJ'),
  ('5e3d2000-0000-4000-8000-000000000004', '5e3d0000-0000-4000-8000-000000000004', 'Transportes Rápido Sul Ltda', 'Fernanda Alves', 'fernanda@rapidosul.com.br', '(51) 3222-1100', '13.579.246/0001-01', null, null, 'Porto Alegre', 'RS')
on conflict (id) do nothing;

-- Proposals are inserted only when missing (not with ON CONFLICT), so a rerun does not consume
-- proposal codes through the insert trigger.
insert into public.proposals (id, customer_id, technician_id, product_id, monthly_value, contract_months, notes)
select seed.id, seed.customer_id, seed.technician_id, seed.product_id, seed.monthly_value, seed.contract_months, seed.notes
from (values
  ('5e3d3000-0000-4000-8000-000000000001'::uuid, '5e3d2000-0000-4000-8000-000000000001'::uuid, '5e3d0000-0000-4000-8000-000000000003'::uuid, '5e3d1000-0000-4000-8000-000000000001'::uuid, 350.00, 12, '10 usuários'),
  ('5e3d3000-0000-4000-8000-000000000002', '5e3d2000-0000-4000-8000-000000000001', '5e3d0000-0000-4000-8000-000000000003', '5e3d1000-0000-4000-8000-000000000004', 199.90, 24, null),
  ('5e3d3000-0000-4000-8000-000000000003', '5e3d2000-0000-4000-8000-000000000002', '5e3d0000-0000-4000-8000-000000000003', '5e3d1000-0000-4000-8000-000000000003', 1300.00, 12, '10 licenças Business Premium'),
  ('5e3d3000-0000-4000-8000-000000000004', '5e3d2000-0000-4000-8000-000000000002', '5e3d0000-0000-4000-8000-000000000003', '5e3d1000-0000-4000-8000-000000000002', 700.00, 12, null),
  ('5e3d3000-0000-4000-8000-000000000005', '5e3d2000-0000-4000-8000-000000000003', '5e3d0000-0000-4000-8000-000000000004', '5e3d1000-0000-4000-8000-000000000003', 650.00, 36, '5 licenças'),
  ('5e3d3000-0000-4000-8000-000000000006', '5e3d2000-0000-4000-8000-000000000003', '5e3d0000-0000-4000-8000-000000000004', '5e3d1000-0000-4000-8000-000000000001', 175.00, 12, null),
  ('5e3d3000-0000-4000-8000-000000000007', '5e3d2000-0000-4000-8000-000000000004', '5e3d0000-0000-4000-8000-000000000004', '5e3d1000-0000-4000-8000-000000000004', 199.90, 12, 'Cliente desistiu')
) as seed (id, customer_id, technician_id, product_id, monthly_value, contract_months, notes)
where not exists (select 1 from public.proposals where proposals.id = seed.id);

-- Only a token's digest is stored (as issue_approval_token stores it), so the fixed links of the
-- docs are seeded as the digests of their tokens. Sending either proposal by e-mail issues a new
-- token, and the fixed link stops working until the seed runs again on a fresh database.
insert into portal_private.proposal_approval_tokens (proposal_id, token_digest)
select seed.proposal_id, portal_private.approval_token_digest(seed.token)
from (values
  ('5e3d3000-0000-4000-8000-000000000001'::uuid, 'seed-ana-pending-approval-token-000000000001'),
  ('5e3d3000-0000-4000-8000-000000000005', 'seed-bruno-pending-approval-token-00000000005')
) as seed (proposal_id, token)
join public.proposals on proposals.id = seed.proposal_id and proposals.status = 'pending'
on conflict (proposal_id) do nothing;

-- Customers' answers (approved, rejected), then an admin's activations (which create the orders
-- and commissions) and a cancellation; each guarded by the current status so reruns do nothing.
update public.proposals set status = 'approved'
where id in ('5e3d3000-0000-4000-8000-000000000002', '5e3d3000-0000-4000-8000-000000000003', '5e3d3000-0000-4000-8000-000000000006')
  and status = 'pending';
update public.proposals set status = 'rejected'
where id = '5e3d3000-0000-4000-8000-000000000004' and status = 'pending';
update public.proposals set status = 'active'
where id in ('5e3d3000-0000-4000-8000-000000000003', '5e3d3000-0000-4000-8000-000000000006') and status = 'approved';
update public.proposals set status = 'cancelled'
where id = '5e3d3000-0000-4000-8000-000000000007' and status = 'pending';
