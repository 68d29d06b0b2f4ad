-- Workflow service demo data for local development: a user who can sign in
-- (builder@workflows.orbita.test, password Orbita#2026), their workspace on a Free billing account,
-- three workflows from examples/workflows (Order triage and Hello API, each deployed as version 1;
-- Batch pricing, a draft only), the TAX_RATE environment variable Batch pricing reads, stored
-- encrypted, and the builder's LOCAL demo API key (below), so the execute endpoint can be tried
-- with curl right after `npm start`.
-- Idempotent: fixed ids and `on conflict do nothing`. Local use only.

insert into auth.users (
  instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
  raw_app_meta_data, raw_user_meta_data, created_at, updated_at,
  confirmation_token, recovery_token, email_change_token_new, email_change
)
values (
  '00000000-0000-0000-0000-000000000000', 'f1000000-0000-4000-8000-000000000001', 'authenticated', 'authenticated',
  'builder@workflows.orbita.test', extensions.crypt('Orbita#2026', extensions.gen_salt('bf')), now(),
  '{"provider": "email", "providers": ["email"]}', '{"full_name": "Workflow Builder"}', now(), now(), '', '', '', ''
)
on conflict (id) do nothing;

insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
select u.id::text, u.id, jsonb_build_object('sub', u.id::text, 'email', u.email, 'email_verified', true, 'phone_verified', false), 'email', now(), now(), now()
from auth.users u
where u.id = 'f1000000-0000-4000-8000-000000000001'
  and not exists (select 1 from auth.identities i where i.user_id = u.id and i.provider = 'email');

insert into public.billing_accounts (id, owner_id, name, plan)
values ('f2000000-0000-4000-8000-000000000001', 'f1000000-0000-4000-8000-000000000001', 'Personal', 'free')
on conflict (id) do nothing;

insert into public.workspaces (id, name, billing_account_id, created_by)
values ('f3000000-0000-4000-8000-000000000001', 'Demo workspace', 'f2000000-0000-4000-8000-000000000001', 'f1000000-0000-4000-8000-000000000001')
on conflict (id) do nothing;

insert into public.workspace_members (workspace_id, user_id, role)
values ('f3000000-0000-4000-8000-000000000001', 'f1000000-0000-4000-8000-000000000001', 'owner')
on conflict do nothing;

insert into public.folders (id, workspace_id, name)
values ('f4000000-0000-4000-8000-000000000001', 'f3000000-0000-4000-8000-000000000001', 'Examples')
on conflict (id) do nothing;

insert into public.workflows (id, workspace_id, folder_id, name, description, state, created_by) values
  ('f5000000-0000-4000-8000-000000000001', 'f3000000-0000-4000-8000-000000000001', 'f4000000-0000-4000-8000-000000000001',
   'Order triage', 'Sends each order down one branch by size and country.', '{"blocks": {"api": {"id": "api", "type": "api_trigger", "name": "API", "config": {"inputFormat": [{"name": "total", "type": "number", "value": 120}, {"name": "country", "type": "string", "value": "BR"}]}, "enabled": true}, "size": {"id": "size", "type": "condition", "name": "Order Size", "config": {"conditions": [{"id": "large", "kind": "if", "expression": "<api.total> >= 1000"}, {"id": "abroad", "kind": "else if", "expression": "<api.country> !== ''BR''"}, {"id": "standard", "kind": "else"}]}, "enabled": true}, "review": {"id": "review", "type": "response", "name": "Manual Review", "config": {"status": 202, "body": {"queue": "manual-review", "total": "<api.total>"}}, "enabled": true}, "export": {"id": "export", "type": "response", "name": "Export", "config": {"status": 202, "body": {"queue": "export", "country": "<api.country>"}}, "enabled": true}, "auto": {"id": "auto", "type": "response", "name": "Automatic", "config": {"status": 200, "body": {"queue": "automatic"}}, "enabled": true}}, "edges": [{"id": "api->size", "source": "api", "target": "size"}, {"id": "size->review:condition-large", "source": "size", "target": "review", "sourceHandle": "condition-large"}, {"id": "size->export:condition-abroad", "source": "size", "target": "export", "sourceHandle": "condition-abroad"}, {"id": "size->auto:condition-standard", "source": "size", "target": "auto", "sourceHandle": "condition-standard"}], "loops": {}, "parallels": {}}'::jsonb, 'f1000000-0000-4000-8000-000000000001'),
  ('f5000000-0000-4000-8000-000000000002', 'f3000000-0000-4000-8000-000000000001', 'f4000000-0000-4000-8000-000000000001',
   'Batch pricing', 'Prices a list of items with the workspace''s TAX_RATE.', '{"blocks": {"api": {"id": "api", "type": "api_trigger", "name": "API", "config": {"inputFormat": [{"name": "items", "type": "json", "value": [{"sku": "A-1", "price": 10, "exempt": false}, {"sku": "B-2", "price": 20, "exempt": true}]}]}, "enabled": true}, "each": {"id": "each", "type": "loop", "name": "Each Item", "config": {}, "enabled": true}, "exempt": {"id": "exempt", "type": "condition", "name": "Exempt", "config": {"conditions": [{"id": "yes", "kind": "if", "expression": "<loop.item>.exempt === true"}, {"id": "no", "kind": "else"}]}, "enabled": true}, "untaxed": {"id": "untaxed", "type": "function", "name": "Untaxed", "config": {"code": "return { sku: <loop.item>.sku, price: <loop.item>.price };"}, "enabled": true}, "taxed": {"id": "taxed", "type": "function", "name": "Taxed", "config": {"code": "const rate = Number({{TAX_RATE}});\nreturn { sku: <loop.item>.sku, price: Math.round(<loop.item>.price * (1 + rate) * 100) / 100 };"}, "enabled": true}, "total": {"id": "total", "type": "function", "name": "Total", "config": {"code": "const lines = <eachitem.results>.map((r) => r.result);\nreturn { lines, total: lines.reduce((sum, line) => sum + line.price, 0) };"}, "enabled": true}}, "edges": [{"id": "api->each", "source": "api", "target": "each"}, {"id": "each->exempt:loop-start", "source": "each", "target": "exempt", "sourceHandle": "loop-start"}, {"id": "exempt->untaxed:condition-yes", "source": "exempt", "target": "untaxed", "sourceHandle": "condition-yes"}, {"id": "exempt->taxed:condition-no", "source": "exempt", "target": "taxed", "sourceHandle": "condition-no"}, {"id": "each->total", "source": "each", "target": "total"}], "loops": {"each": {"nodes": ["exempt", "taxed", "untaxed"], "loopType": "forEach", "forEachItems": "<api.items>"}}, "parallels": {}}'::jsonb, 'f1000000-0000-4000-8000-000000000001')
on conflict (id) do nothing;

insert into public.workflow_deployments (id, workflow_id, workspace_id, version, state, note, is_active, created_by, activated_at)
select 'f6000000-0000-4000-8000-000000000001', w.id, w.workspace_id, 1, w.state, 'Seeded release', true, w.created_by, now()
from public.workflows w
where w.id = 'f5000000-0000-4000-8000-000000000001'
on conflict do nothing;

insert into public.environment_variables (id, workspace_id, name, created_by)
values ('f7000000-0000-4000-8000-000000000001', 'f3000000-0000-4000-8000-000000000001', 'TAX_RATE', 'f1000000-0000-4000-8000-000000000001')
on conflict do nothing;

insert into workflows_private.environment_values (variable_id, value_encrypted)
values ('f7000000-0000-4000-8000-000000000001', workflows_private.encrypt_environment_value('0.18', workflows_private.environment_key()))
on conflict (variable_id) do nothing;

insert into public.workflows (id, workspace_id, folder_id, name, description, state, created_by) values
  ('f5000000-0000-4000-8000-000000000003', 'f3000000-0000-4000-8000-000000000001', 'f4000000-0000-4000-8000-000000000001',
   'Hello API', 'The smallest useful API workflow: typed input, a Function, a Response.', '{"blocks": {"api": {"id": "api", "type": "api_trigger", "name": "API", "config": {"inputFormat": [{"name": "name", "type": "string", "value": "Ana", "description": "Who to greet"}, {"name": "excited", "type": "boolean", "value": false}]}, "enabled": true}, "greet": {"id": "greet", "type": "function", "name": "Greet", "config": {"code": "const base = `Hello, ${<api.name>}`;\nreturn <api.excited> ? base + ''!'' : base + ''.'';"}, "enabled": true}, "reply": {"id": "reply", "type": "response", "name": "Reply", "config": {"status": 200, "headers": {"Cache-Control": "no-store"}, "body": {"message": "<greet.result>"}}, "enabled": true}}, "edges": [{"id": "api->greet", "source": "api", "target": "greet"}, {"id": "greet->reply", "source": "greet", "target": "reply"}], "loops": {}, "parallels": {}}'::jsonb, 'f1000000-0000-4000-8000-000000000001')
on conflict (id) do nothing;

insert into public.workflow_deployments (id, workflow_id, workspace_id, version, state, note, is_active, created_by, activated_at)
select 'f6000000-0000-4000-8000-000000000002', w.id, w.workspace_id, 1, w.state, 'Seeded release', true, w.created_by, now()
from public.workflows w
where w.id = 'f5000000-0000-4000-8000-000000000003'
on conflict do nothing;

-- The builder's personal API key, for local use only: its text is in this public file and in the
-- README, so it must never exist on a hosted project (seeds are only pushed there with
-- --include-seed, for throwaway demos). Only its SHA-256 digest is stored, as for any key.
insert into public.api_keys (id, name, prefix, user_id, created_by)
values ('f8000000-0000-4000-8000-000000000001', 'Local demo key (npm start only)', 'orb_local_on',
  'f1000000-0000-4000-8000-000000000001', 'f1000000-0000-4000-8000-000000000001')
on conflict (id) do nothing;

insert into workflows_private.api_key_hashes (key_hash, api_key_id)
values (workflows_private.api_key_digest('orb_local_only_demo_key_000000000000000000000000'), 'f8000000-0000-4000-8000-000000000001')
on conflict do nothing;
