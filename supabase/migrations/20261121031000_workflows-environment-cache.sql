-- Workflow service, part 2: the environment a run needs, at a cost admission can afford.
--
-- Every admitted run needs its workspace's decrypted environment. Two things keep that cheap:
--
-- 1. pgp_sym_encrypt's default string-to-key mode iterates SHA-1 over the passphrase tens of
--    thousands of times (a defence for human passwords), ~0.7 ms of CPU per decryption. The
--    passphrase here is 32 random bytes (workflows_private.environment_key()), which stretching
--    cannot strengthen, so values are encrypted with salted, non-iterated S2K (s2k-mode=1, still
--    AES-256, encrypt_environment_value): ~10 µs a decryption.
-- 2. A function instance runs many runs of the same workspace. Each workspace has an environment
--    version, bumped by any change to its variables; admission returns the decrypted environment
--    only when the caller does not already hold that version.

create table workflows_private.environment_versions (
  workspace_id uuid primary key references public.workspaces (id) on delete cascade,
  version bigint not null default 1
);
comment on table workflows_private.environment_versions is 'A counter per workspace, bumped whenever one of its environment variables is created, changed or deleted; runtimes cache the decrypted environment by it. No row means version 0.';
comment on column workflows_private.environment_versions.version is 'Increases with every change to the workspace''s variables.';
comment on column workflows_private.environment_versions.workspace_id is 'The workspace.';

/**
 * Trigger: a variable of the workspace changed, so its environment version moves on. When the
 * variable goes because its whole workspace is being deleted there is nothing left to version
 * (the version row cascades away too), so nothing is written.
 */
create function workflows_private.bump_environment_version()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'DELETE' and not exists (select 1 from public.workspaces w where w.id = old.workspace_id) then
    return null;
  end if;
  insert into workflows_private.environment_versions as v (workspace_id)
  values (case when tg_op = 'DELETE' then old.workspace_id else new.workspace_id end)
  on conflict (workspace_id) do update set version = v.version + 1;
  return null;
end;
$$;
comment on function workflows_private.bump_environment_version() is 'Trigger: bumps the environment version of the workspace whose variable changed (not while the workspace itself is being deleted).';

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

-- Access -----------------------------------------------------------------------------------------

revoke all on workflows_private.environment_versions from public, anon, authenticated, service_role;
alter table workflows_private.environment_versions enable row level security;
revoke execute on function
  workflows_private.bump_environment_version(),
  workflows_private.environment_payload(uuid, bigint, bigint),
  workflows_private.encrypt_environment_value(text, text),
  workflows_private.rotate_environment_key()
  from public, anon, authenticated, service_role;
