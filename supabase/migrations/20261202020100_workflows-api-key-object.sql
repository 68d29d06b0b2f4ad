-- Workflow service: create_api_key returns one object.
--
-- It was `returns table (id, key, prefix)`, a set of one row, so supabase-js's
-- `.rpc('create_api_key', …)` got an array where docs/workflow-runs.md promises `{id, key, prefix}`.
-- It now returns a composite: one object over the data API (`.single()` still works), and SQL
-- callers keep `select key from public.create_api_key(…)`. The body is unchanged.

/** The answer of create_api_key: the new key's id, the key itself (shown this once) and its prefix. */
create type public.created_api_key as (id uuid, key text, prefix text);
comment on type public.created_api_key is 'What create_api_key returns: {id, key, prefix}; the key is shown only this once.';

drop function public.create_api_key(text, uuid);

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
comment on function public.create_api_key(text, uuid) is 'Creates a personal API key, or a workspace key (admins); returns one {id, key, prefix} with the key shown this once.';

revoke execute on function public.create_api_key(text, uuid) from public, anon, authenticated, service_role;
grant execute on function public.create_api_key(text, uuid) to authenticated, service_role;
