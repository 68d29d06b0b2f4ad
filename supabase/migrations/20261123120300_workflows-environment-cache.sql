-- Workflow service, part 2: the environment a run needs, at a cost admission can afford.
--
-- Every admitted run needs its workspace's decrypted environment. Two things made that the most
-- expensive part of admitting a run:
--
-- 1. pgp_sym_encrypt's default string-to-key mode iterates SHA-1 over the passphrase tens of
--    thousands of times (a defence for human passwords), so every decryption cost ~0.7 ms of CPU
--    per variable. The passphrase here is 32 random bytes (workflows_private.environment_key()),
--    which stretching cannot strengthen, so values are now encrypted with salted, non-iterated S2K
--    (s2k-mode=1, still AES-256): ~10 µs a decryption. Existing values are re-encrypted below.
-- 2. A function instance runs many runs of the same workspace. Each workspace now has an
--    environment version, bumped by any change to its variables; admission returns the decrypted
--    environment only when the caller does not already hold that version.

create table workflows_private.environment_versions (
  workspace_id uuid primary key references public.workspaces (id) on delete cascade,
  version bigint not null default 1
);
comment on table workflows_private.environment_versions is 'A counter per workspace, bumped whenever one of its environment variables is created, changed or deleted; runtimes cache the decrypted environment by it. No row means version 0.';
comment on column workflows_private.environment_versions.version is 'Increases with every change to the workspace''s variables.';
comment on column workflows_private.environment_versions.workspace_id is 'The workspace.';

/** Trigger: a variable of the workspace changed, so its environment version moves on. */
create function workflows_private.bump_environment_version()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into workflows_private.environment_versions as v (workspace_id)
  values (case when tg_op = 'DELETE' then old.workspace_id else new.workspace_id end)
  on conflict (workspace_id) do update set version = v.version + 1;
  return null;
end;
$$;
comment on function workflows_private.bump_environment_version() is 'Trigger: bumps the environment version of the workspace whose variable changed.';

create trigger environment_variables_bump_version after insert or update or delete on public.environment_variables
  for each row execute function workflows_private.bump_environment_version();

/**
 * The environment part of a run's payload: {version} alone when `p_cached_version` (what the caller
 * already holds) is the current `p_version`, else {version, variables} with the decrypted values.
 */
create function workflows_private.environment_payload(p_workspace_id uuid, p_version bigint, p_cached_version bigint)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if p_version = p_cached_version then
    return jsonb_build_object('version', p_version);
  end if;
  return jsonb_build_object('version', p_version, 'variables', public.workspace_environment(p_workspace_id));
end;
$$;
comment on function workflows_private.environment_payload(uuid, bigint, bigint) is 'The environment a run gets: its version, and the decrypted variables unless the caller holds that version.';

/** Encrypts a variable's value with the environment key: AES-256, salted S2K without iteration. */
create function workflows_private.encrypt_environment_value(p_value text, p_key text)
returns bytea
language sql
volatile
set search_path = ''
as $$
  select extensions.pgp_sym_encrypt(p_value, p_key, 'cipher-algo=aes256, s2k-mode=1');
$$;
comment on function workflows_private.encrypt_environment_value(text, text) is 'pgp_sym_encrypt with AES-256 and salted, non-iterated S2K: the key is random, so stretching it only costs CPU.';

/** As before (admins; the value is stored encrypted), now through encrypt_environment_value. */
create or replace function public.set_environment_variable(p_workspace_id uuid, p_name text, p_value text)
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

/** As before (re-encrypts every value under a new key), now through encrypt_environment_value. Values do not change, so no environment version moves. */
create or replace function workflows_private.rotate_environment_key()
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
  update workflows_private.secrets set value = v_new where name = 'environment_key';
  return v_count;
end;
$$;

-- Values stored before this migration move to the cheaper S2K mode.
update workflows_private.environment_values
set value_encrypted = workflows_private.encrypt_environment_value(
  extensions.pgp_sym_decrypt(value_encrypted, workflows_private.environment_key()), workflows_private.environment_key());

insert into workflows_private.environment_versions (workspace_id)
select distinct v.workspace_id from public.environment_variables v
on conflict do nothing;

-- Access -----------------------------------------------------------------------------------------

revoke all on workflows_private.environment_versions from public, anon, authenticated, service_role;
alter table workflows_private.environment_versions enable row level security;
revoke execute on function
  workflows_private.bump_environment_version(),
  workflows_private.environment_payload(uuid, bigint, bigint),
  workflows_private.encrypt_environment_value(text, text),
  workflows_private.rotate_environment_key()
  from public, anon, authenticated, service_role;
