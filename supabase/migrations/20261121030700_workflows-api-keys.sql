-- Workflow service, part 2: API keys. `X-API-Key` authenticates the execute, job-status and
-- usage-limits endpoints (spec, "Authentication"). A key is personal (it acts for its user in every
-- workspace where that user is an editor or above) or belongs to one workspace (created by that
-- workspace's admins, it runs only that workspace's workflows).
--
-- Keys are 192 random bits shown once, at creation. Only their SHA-256 digest is kept, in a private
-- table keyed by the digest, so authenticating a request is one index probe on the digest (Sim
-- loaded and decrypted every key of a workspace per request: pitfalls §12.4), and a leaked table
-- yields no usable key. The visible prefix (`orb_` and 8 more characters) lets people tell their
-- keys apart.

create table public.api_keys (
  id uuid primary key default gen_random_uuid(),
  name text not null check (char_length(btrim(name)) between 1 and 100),
  prefix text not null,
  user_id uuid references auth.users (id) on delete cascade,
  workspace_id uuid references public.workspaces (id) on delete cascade,
  created_by uuid references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  constraint api_keys_personal_or_workspace check (num_nonnulls(user_id, workspace_id) = 1)
);
comment on table public.api_keys is 'API keys for X-API-Key. Personal keys (user_id set) act for their user; workspace keys (workspace_id set) run only that workspace''s workflows. Created with create_api_key(), revoked with revoke_api_key(); the key itself is never stored.';
comment on column public.api_keys.name is 'What the key is for, in its creator''s words.';
comment on column public.api_keys.id is 'The keys id (not the key: that is shown once and never stored).';
comment on column public.api_keys.created_at is 'When the key was created.';
comment on column public.api_keys.prefix is 'The first 12 characters of the key (orb_ and 8 more), shown so people can tell keys apart.';
comment on column public.api_keys.user_id is 'Owner of a personal key; null for workspace keys.';
comment on column public.api_keys.workspace_id is 'The workspace a workspace key belongs to; null for personal keys.';
comment on column public.api_keys.created_by is 'Who created the key (for workspace keys, the admin who did).';
comment on column public.api_keys.last_used_at is 'When the key last authenticated a request, to the minute (updated at most once a minute).';
comment on column public.api_keys.revoked_at is 'When the key was revoked; a revoked key authenticates nothing.';
create index api_keys_user_id_idx on public.api_keys (user_id);
create index api_keys_workspace_id_idx on public.api_keys (workspace_id);
create index api_keys_created_by_idx on public.api_keys (created_by);

create table workflows_private.api_key_hashes (
  key_hash bytea primary key,
  api_key_id uuid not null unique references public.api_keys (id) on delete cascade
);
comment on table workflows_private.api_key_hashes is 'SHA-256 digest of each API key, the only trace of the key itself. No API role may read it.';
comment on column workflows_private.api_key_hashes.key_hash is 'sha256 of the key''s UTF-8 text.';
comment on column workflows_private.api_key_hashes.api_key_id is 'The key this digest authenticates.';

/**
 * The stored digest of an API key. PL/pgSQL rather than SQL: a SQL function with a SET clause is
 * planned anew on every call, and this one runs for every authenticated request.
 */
create function workflows_private.api_key_digest(p_key text)
returns bytea
language plpgsql
immutable
set search_path = ''
as $$
begin
  return pg_catalog.sha256(pg_catalog.convert_to(p_key, 'UTF8'));
end;
$$;
comment on function workflows_private.api_key_digest(text) is 'SHA-256 of an API key''s text: what api_key_hashes stores and lookups compare.';

/**
 * The live (not revoked) key whose text is `p_key`, or null. One probe of the digest's primary key.
 * Marks the key used, at most once a minute and never waiting for another request doing the same,
 * so a busy key is not a hot row.
 */
create function workflows_private.authenticate_api_key(p_key text)
returns public.api_keys
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_key public.api_keys;
begin
  if p_key is null or p_key !~ '^orb_[A-Za-z0-9_]{20,200}$' then
    return null;
  end if;
  select k.* into v_key
  from workflows_private.api_key_hashes h
  join public.api_keys k on k.id = h.api_key_id
  where h.key_hash = workflows_private.api_key_digest(p_key) and k.revoked_at is null;
  if not found then
    return null;
  end if;
  if v_key.last_used_at is null or v_key.last_used_at < now() - interval '1 minute' then
    update public.api_keys k set last_used_at = now()
    where k.id = (select l.id from public.api_keys l where l.id = v_key.id for update skip locked);
  end if;
  return v_key;
end;
$$;
comment on function workflows_private.authenticate_api_key(text) is 'Looks an API key up by its digest: the live key row, or null. Touches last_used_at at most once a minute.';

/**
 * What a principal may do in a workspace where its user's role is `p_role` (null: not a member):
 * 'allowed', 'forbidden' (it sees the workspace but ranks below `p_min_role`) or 'not_found' (it does
 * not see the workspace at all, so the caller answers 404 and leaks nothing). A workspace key is
 * worth an editor of its own workspace and nothing elsewhere; a personal key (or a signed-in user,
 * `p_key` null) is worth its user's role. Pure, so callers that already read the role in the same
 * query pay no extra lookup.
 */
create function workflows_private.access_verdict(p_key public.api_keys, p_role text, p_workspace_id uuid, p_min_role text)
returns text
language plpgsql
immutable
set search_path = ''
as $$
declare
  v_role text := case when p_key.workspace_id is not null then case when p_key.workspace_id = p_workspace_id then 'editor' end else p_role end;
begin
  if v_role is null then
    return 'not_found';
  end if;
  return case when workflows_private.role_rank(v_role) >= workflows_private.role_rank(p_min_role) then 'allowed' else 'forbidden' end;
end;
$$;
comment on function workflows_private.access_verdict(public.api_keys, text, uuid, text) is 'allowed / forbidden / not_found for an API key (or a user) whose role in the workspace is known.';

/** access_verdict for a principal whose role is still to be read: an API key, or the user `p_user_id`. */
create function workflows_private.principal_access(p_key public.api_keys, p_user_id uuid, p_workspace_id uuid, p_min_role text)
returns text
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  v_role text;
begin
  if p_key.workspace_id is null then
    select m.role into v_role
    from public.workspace_members m
    where m.workspace_id = p_workspace_id and m.user_id = coalesce(p_key.user_id, p_user_id);
  end if;
  return workflows_private.access_verdict(p_key, v_role, p_workspace_id, p_min_role);
end;
$$;
comment on function workflows_private.principal_access(public.api_keys, uuid, uuid, text) is 'allowed / forbidden / not_found: what an API key (or a user) may do in a workspace at the given role.';

/**
 * Revokes a key at once and for good (idempotent: revoking a revoked key keeps its first
 * revocation time). Its owner may revoke a personal key; the workspace's admins a workspace key. A
 * key the caller may not see is not found (PT404).
 */
create function public.revoke_api_key(p_id uuid)
returns public.api_keys
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_key public.api_keys;
begin
  select * into v_key from public.api_keys k where k.id = p_id for update;
  -- Spelled out so a null never slips through: a workspace key has no user_id.
  if not found or not (
    (v_key.user_id is not null and v_key.user_id = (select auth.uid()))
    or (v_key.workspace_id is not null and workflows_private.has_workspace_role(v_key.workspace_id, 'admin'))
  ) then
    raise exception 'API key % not found', p_id using errcode = 'PT404';
  end if;
  update public.api_keys k set revoked_at = coalesce(k.revoked_at, now()) where k.id = p_id returning * into v_key;
  return v_key;
end;
$$;
comment on function public.revoke_api_key(uuid) is 'Revokes an API key (its owner, or the workspace''s admins for a workspace key); idempotent.';

-- Access -----------------------------------------------------------------------------------------

revoke all on public.api_keys from public, anon, authenticated;
grant select on public.api_keys to authenticated;
grant all on public.api_keys to service_role;
revoke all on workflows_private.api_key_hashes from public, anon, authenticated, service_role;

alter table public.api_keys enable row level security;
alter table workflows_private.api_key_hashes enable row level security;

create policy "Users see their personal keys and admins their workspaces' keys" on public.api_keys
  for select to authenticated
  using (
    user_id = (select auth.uid())
    or workspace_id in (select workflows_private.member_workspace_ids('admin'))
  );
/** The answer of create_api_key: the new key's id, the key itself (shown this once) and its prefix. */
create type public.created_api_key as (id uuid, key text, prefix text);
comment on type public.created_api_key is 'What create_api_key returns: {id, key, prefix}; the key is shown only this once.';
/**
 * Creates an API key and returns it once as {id, key, prefix}: `key` is never shown again. Without
 * `p_workspace_id` the key is the caller's personal key; with it, a key of that workspace, which
 * only its admins (or above) may create.
 */
create function public.create_api_key(p_name text, p_workspace_id uuid default null)
returns public.created_api_key
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_user uuid := (select auth.uid());
  v_key text := 'orb_' || encode(extensions.gen_random_bytes(24), 'hex');
  v_id uuid;
begin
  if v_user is null then
    raise exception 'Sign in to create API keys' using errcode = '42501';
  end if;
  if p_workspace_id is not null then
    if not workflows_private.has_workspace_role(p_workspace_id, 'viewer') then
      raise exception 'Workspace % not found', p_workspace_id using errcode = 'PT404';
    end if;
    perform workflows_private.require_workspace_role(p_workspace_id, 'admin', 'create workspace API keys');
  end if;
  insert into public.api_keys (name, prefix, user_id, workspace_id, created_by)
  values (btrim(p_name), left(v_key, 12), case when p_workspace_id is null then v_user end, p_workspace_id, v_user)
  returning api_keys.id into v_id;
  insert into workflows_private.api_key_hashes (key_hash, api_key_id) values (workflows_private.api_key_digest(v_key), v_id);
  return (v_id, v_key, left(v_key, 12))::public.created_api_key;
end;
$$;
revoke execute on function
  public.create_api_key(text, uuid),
  public.revoke_api_key(uuid),
  workflows_private.api_key_digest(text),
  workflows_private.authenticate_api_key(text),
  workflows_private.access_verdict(public.api_keys, text, uuid, text),
  workflows_private.principal_access(public.api_keys, uuid, uuid, text)
  from public, anon, authenticated, service_role;
grant execute on function public.create_api_key(text, uuid), public.revoke_api_key(uuid) to authenticated, service_role;
comment on function public.create_api_key(text, uuid) is 'Creates a personal API key, or a workspace key (admins); returns one {id, key, prefix} with the key shown this once.';
revoke execute on function public.create_api_key(text, uuid) from public, anon, authenticated, service_role;
grant execute on function public.create_api_key(text, uuid) to authenticated, service_role;
