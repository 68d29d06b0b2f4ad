-- Workflow service, part 5: the webhook trigger's paths.
--
-- `POST /api/webhooks/trigger/{path}` starts the workflow whose ACTIVE deployment has an enabled
-- generic_webhook block with that `path` in its config. public.workflow_webhooks is that index,
-- kept by a trigger on workflow_deployments: activating a snapshot (deploy, promote, roll back)
-- registers its webhook blocks, deactivating one (a newer deploy, undeploy) removes them. A path
-- is unique among active deployments: a deploy whose path another workflow already serves is
-- refused (23505, HTTP 409), naming that workflow when the deployer may see it. The secret itself
-- stays in the snapshot's block config; webhook_trigger_target reads it for the edge function.

create table public.workflow_webhooks (
  path text primary key,
  workflow_id uuid not null,
  workspace_id uuid not null,
  deployment_id uuid not null references public.workflow_deployments (id) on delete cascade,
  block_id text not null,
  require_auth boolean not null,
  secret_header_name text,
  created_at timestamptz not null default now(),
  unique (workflow_id, block_id),
  foreign key (workspace_id, workflow_id) references public.workflows (workspace_id, id) on delete cascade
);
comment on table public.workflow_webhooks is 'The webhook URLs active deployments serve: POST /api/webhooks/trigger/{path} runs workflow_id from block_id. Kept by deploys, activations and undeploys; members read them.';
comment on column public.workflow_webhooks.path is 'The URL''s last segment, unique among active deployments (letters, digits, _ . ~ -).';
comment on column public.workflow_webhooks.workflow_id is 'The workflow the path starts.';
comment on column public.workflow_webhooks.workspace_id is 'Its workspace (row-level security reads it).';
comment on column public.workflow_webhooks.deployment_id is 'The active snapshot whose block registered the path.';
comment on column public.workflow_webhooks.block_id is 'The generic_webhook block runs start from.';
comment on column public.workflow_webhooks.require_auth is 'Whether a request must carry the block''s token.';
comment on column public.workflow_webhooks.secret_header_name is 'The header carrying the token (e.g. X-Service-Secret); null: Authorization: Bearer <token>.';
comment on column public.workflow_webhooks.created_at is 'When the path was registered (its deployment activated).';
create index workflow_webhooks_workspace_id_idx on public.workflow_webhooks (workspace_id);
create index workflow_webhooks_deployment_id_idx on public.workflow_webhooks (deployment_id);

/**
 * Keeps workflow_webhooks in step with a workflow's active snapshot (see the migration's comment).
 * A clash refuses the activation: 23505 naming the workflow that serves the path (or "another
 * workspace" when the caller may not see it), or naming both blocks when one snapshot uses a path
 * twice.
 */
create function workflows_private.sync_webhook_paths()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_block record;
  v_path text;
  v_other record;
begin
  if tg_op = 'UPDATE' and old.is_active and not new.is_active then
    delete from public.workflow_webhooks w where w.deployment_id = new.id;
  end if;
  if not new.is_active or (tg_op = 'UPDATE' and old.is_active) then
    return null;
  end if;
  delete from public.workflow_webhooks w where w.workflow_id = new.workflow_id;
  for v_block in
    select b.key as id, b.value as block from jsonb_each(coalesce(new.state -> 'blocks', '{}'::jsonb)) b
    where b.value ->> 'type' = 'generic_webhook' and coalesce(b.value ->> 'enabled', 'true') <> 'false'
      and nullif(btrim(b.value -> 'config' ->> 'path'), '') is not null
    order by b.key collate "C"
  loop
    v_path := btrim(v_block.block -> 'config' ->> 'path');
    select w.workflow_id, w.workspace_id, w.block_id, wf.name into v_other
    from public.workflow_webhooks w join public.workflows wf on wf.id = w.workflow_id
    where w.path = v_path;
    if found and v_other.workflow_id = new.workflow_id then
      raise exception 'Webhook path "%" is used by two blocks of this workflow ("%" and "%"): give each its own path',
        v_path, (new.state -> 'blocks' -> v_other.block_id ->> 'name'), v_block.block ->> 'name'
        using errcode = '23505', detail = jsonb_build_object('path', v_path, 'blockIds', jsonb_build_array(v_other.block_id, v_block.id))::text;
    elsif found then
      if auth.role() = 'service_role' or workflows_private.has_workspace_role(v_other.workspace_id, 'viewer') then
        raise exception 'Webhook path "%" is already used by workflow "%": choose another path or undeploy that workflow', v_path, v_other.name
          using errcode = '23505', detail = jsonb_build_object('path', v_path, 'workflowId', v_other.workflow_id)::text;
      end if;
      raise exception 'Webhook path "%" is already used by a workflow of another workspace: choose another path', v_path
        using errcode = '23505', detail = jsonb_build_object('path', v_path)::text;
    end if;
    insert into public.workflow_webhooks (path, workflow_id, workspace_id, deployment_id, block_id, require_auth, secret_header_name)
    values (v_path, new.workflow_id, new.workspace_id, new.id, v_block.id,
      coalesce((v_block.block -> 'config' ->> 'requireAuth')::boolean, false),
      nullif(btrim(v_block.block -> 'config' ->> 'secretHeaderName'), ''));
  end loop;
  return null;
end;
$$;
comment on function workflows_private.sync_webhook_paths() is 'Trigger: registers the webhook paths of a snapshot becoming active, removes those of one becoming inactive; refuses a path another workflow serves (23505).';

create trigger workflow_deployments_sync_webhook_paths
  after insert or update of is_active on public.workflow_deployments
  for each row execute function workflows_private.sync_webhook_paths();

/**
 * What the webhook endpoint needs to serve `p_path`: {status: 200, workflowId, workspaceId, blockId,
 * blockName, requireAuth, secretHeaderName, token, inputFormat}, or a 404 refusal for a path no
 * active deployment serves. `token` is the block's token with a `{{NAME}}` reference resolved from
 * the workspace's environment (null when the variable is not set). Service role only: the answer
 * holds the secret.
 */
create function public.webhook_trigger_target(p_path text)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  v_hook public.workflow_webhooks;
  v_block jsonb;
  v_token text;
  v_variable text;
begin
  select * into v_hook from public.workflow_webhooks w where w.path = p_path;
  if not found then
    return workflows_private.refusal(404, 'NOT_FOUND', format('No deployed workflow listens on webhook path "%s"', p_path));
  end if;
  select d.state -> 'blocks' -> v_hook.block_id into v_block from public.workflow_deployments d where d.id = v_hook.deployment_id;
  v_token := v_block -> 'config' ->> 'token';
  v_variable := substring(v_token from '^\s*\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*$');
  if v_variable is not null then
    v_token := public.workspace_environment(v_hook.workspace_id) ->> v_variable;
  end if;
  return jsonb_build_object('status', 200, 'workflowId', v_hook.workflow_id, 'workspaceId', v_hook.workspace_id,
    'blockId', v_hook.block_id, 'blockName', v_block ->> 'name', 'requireAuth', v_hook.require_auth,
    'secretHeaderName', v_hook.secret_header_name, 'token', v_token, 'tokenVariable', v_variable,
    'inputFormat', coalesce(v_block -> 'config' -> 'inputFormat', '[]'::jsonb));
end;
$$;
comment on function public.webhook_trigger_target(text) is 'The workflow, trigger block, authentication and Input Format behind a webhook path (404 refusal when none). Service role only: the answer holds the token.';

-- Access -------------------------------------------------------------------------------------------

revoke all on public.workflow_webhooks from public, anon, authenticated;
grant select on public.workflow_webhooks to authenticated, service_role;
alter table public.workflow_webhooks enable row level security;
create policy "Members can read their workspaces' webhook paths" on public.workflow_webhooks
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));

revoke execute on function workflows_private.sync_webhook_paths() from public, anon, authenticated, service_role;
revoke execute on function public.webhook_trigger_target(text) from public, anon, authenticated;
grant execute on function public.webhook_trigger_target(text) to service_role;
