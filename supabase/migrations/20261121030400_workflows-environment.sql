-- Workflow service: environment variables per workspace, read by workflows as {{NAME}}. Values are
-- encrypted at rest with pgcrypto (pgp_sym_encrypt, AES-256). The key is not stored with them: it
-- lives in workflows_private.secrets, a table no API role can read, and only the security-definer
-- functions below use it. Clients see variable names; they set values but never read them back
-- (write-only, like CI secrets). Runs get the decrypted values through
-- workspace_environment(), which only the service role may call.
--
-- On hosted Supabase, keep the key in Vault instead: `select vault.create_secret(<key>,
-- 'workflow_environment_key')` and make workflows_private.environment_key() read
-- `vault.decrypted_secrets`. The local platform has no Vault, hence the private table here.

create table workflows_private.secrets (
  name text primary key,
  value text not null
);
comment on table workflows_private.secrets is 'Server-side secrets (the environment variable encryption key). No API role has any privilege on it.';
alter table workflows_private.secrets enable row level security;
revoke all on workflows_private.secrets from public, anon, authenticated, service_role;

-- A fresh random key per database, made when the migration runs.
insert into workflows_private.secrets (name, value)
values ('environment_key', encode(extensions.gen_random_bytes(32), 'hex'))
on conflict (name) do nothing;

/** The key environment variable values are encrypted with. Callable only by definer functions' owner. */
create function workflows_private.environment_key()
returns text
language sql
stable
set search_path = ''
as $$
  select s.value from workflows_private.secrets s where s.name = 'environment_key';
$$;
comment on function workflows_private.environment_key() is 'Reads the environment variable encryption key (no API role may execute it).';

create table public.environment_variables (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  name text not null check (name ~ '^[A-Za-z_][A-Za-z0-9_]*$' and char_length(name) <= 128),
  created_by uuid references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, name)
);
comment on table public.environment_variables is 'Names of a workspace''s environment variables ({{NAME}} in workflows). Set values with set_environment_variable(); delete rows to remove variables. Values are never readable by clients.';
comment on column public.environment_variables.name is 'Letters, digits and _, not starting with a digit: what {{NAME}} matches.';
create index environment_variables_workspace_id_idx on public.environment_variables (workspace_id);

create trigger environment_variables_touch_updated_at before update on public.environment_variables
  for each row execute function workflows_private.touch_updated_at();

create table workflows_private.environment_values (
  variable_id uuid primary key references public.environment_variables (id) on delete cascade,
  value_encrypted bytea not null
);
comment on table workflows_private.environment_values is 'Encrypted values of environment variables (pgp_sym_encrypt with environment_key()).';
alter table workflows_private.environment_values enable row level security;
revoke all on workflows_private.environment_values from public, anon, authenticated, service_role;

/** Creates or updates a workspace environment variable (admins); the value is stored encrypted, through encrypt_environment_value. */
create function public.set_environment_variable(p_workspace_id uuid, p_name text, p_value text)
returns public.environment_variables
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_variable public.environment_variables;
begin
  if auth.role() is distinct from 'service_role' then
    perform workflows_private.require_workspace_role(p_workspace_id, 'admin', 'set environment variables');
  end if;
  if p_value is null then
    raise exception 'Environment variable % needs a value', p_name using errcode = '22004';
  end if;
  insert into public.environment_variables (workspace_id, name, created_by)
  values (p_workspace_id, p_name, (select auth.uid()))
  on conflict (workspace_id, name) do update set updated_at = now()
  returning * into v_variable;
  insert into workflows_private.environment_values (variable_id, value_encrypted)
  values (v_variable.id, workflows_private.encrypt_environment_value(p_value, workflows_private.environment_key()))
  on conflict (variable_id) do update set value_encrypted = excluded.value_encrypted;
  return v_variable;
end;
$$;
comment on function public.set_environment_variable(uuid, text, text) is 'Creates or updates a workspace environment variable; the value is stored encrypted and cannot be read back by clients.';

/** The decrypted environment of a workspace, {NAME: value}, for a run. Service role only. */
create function public.workspace_environment(p_workspace_id uuid)
returns jsonb
language sql
stable
security definer
set search_path = ''
as $$
  select coalesce(jsonb_object_agg(v.name, extensions.pgp_sym_decrypt(e.value_encrypted, workflows_private.environment_key())), '{}'::jsonb)
  from public.environment_variables v
  join workflows_private.environment_values e on e.variable_id = v.id
  where v.workspace_id = p_workspace_id;
$$;
comment on function public.workspace_environment(uuid) is 'Decrypted environment variables of a workspace as a JSON object. Only the service role (the workflow runtime) may call it.';

/**
 * Re-encrypts every environment value under a new key and returns how many; the webhook signing
 * secrets too, which share the key.
 */
create function workflows_private.rotate_environment_key()
returns integer
language plpgsql
set search_path = ''
as $$
declare
  v_old text := workflows_private.environment_key();
  v_new text := encode(extensions.gen_random_bytes(32), 'hex');
  v_count integer;
begin
  update workflows_private.environment_values
  set value_encrypted = workflows_private.encrypt_environment_value(extensions.pgp_sym_decrypt(value_encrypted, v_old), v_new);
  get diagnostics v_count = row_count;
  update workflows_private.webhook_secrets
  set secret_encrypted = workflows_private.encrypt_environment_value(extensions.pgp_sym_decrypt(secret_encrypted, v_old), v_new);
  update workflows_private.secrets set value = v_new where name = 'environment_key';
  return v_count;
end;
$$;
comment on function workflows_private.rotate_environment_key() is 'Replaces the environment variable key, re-encrypting every value; returns how many values were re-encrypted.';

-- Access -----------------------------------------------------------------------------------------

revoke execute on function workflows_private.environment_key(), workflows_private.rotate_environment_key() from public, anon, authenticated, service_role;

revoke all on public.environment_variables from public, anon, authenticated;
grant select, delete on public.environment_variables to authenticated;
grant all on public.environment_variables to service_role;

revoke execute on function public.set_environment_variable(uuid, text, text), public.workspace_environment(uuid) from public, anon, authenticated;
grant execute on function public.set_environment_variable(uuid, text, text) to authenticated, service_role;
grant execute on function public.workspace_environment(uuid) to service_role;

alter table public.environment_variables enable row level security;
create policy "Members can see which environment variables exist" on public.environment_variables
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));
create policy "Admins can delete environment variables" on public.environment_variables
  for delete to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('admin')));
