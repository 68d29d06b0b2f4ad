-- Workflow service: deployment snapshots. Deploying copies the draft into a new, numbered, immutable
-- snapshot and makes it the active one; every trigger (API, webhook, schedule, chat) runs the active
-- snapshot, never the draft. Any snapshot can be compared with the draft or another snapshot, and
-- promoted or rolled back to. A partial unique index guarantees at most one active snapshot per
-- workflow, whatever happens concurrently (Sim had no such constraint: pitfalls §12.13).

create table public.workflow_deployments (
  id uuid primary key default gen_random_uuid(),
  workflow_id uuid not null,
  workspace_id uuid not null,
  version integer not null check (version > 0),
  state jsonb not null,
  note text check (note is null or char_length(note) <= 500),
  is_active boolean not null default false,
  created_by uuid references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  activated_at timestamptz,
  unique (workflow_id, version),
  foreign key (workspace_id, workflow_id) references public.workflows (workspace_id, id) on delete cascade,
  constraint workflow_deployments_note_no_control_characters check (shared_private.is_plain_text(note, true))
);
comment on table public.workflow_deployments is 'Published snapshots of a workflow, numbered from 1. Immutable except for which one is active; written only through deploy_workflow, activate_deployment and undeploy_workflow.';
comment on column public.workflow_deployments.state is 'The workflow state as it was deployed; triggers run the active one.';
comment on column public.workflow_deployments.note is 'What changed, in the deployer''s words.';
comment on column public.workflow_deployments.is_active is 'True for the one snapshot triggers run (at most one per workflow).';
comment on column public.workflow_deployments.workspace_id is 'Copied from the workflow so row-level security needs no join.';
comment on column public.workflow_deployments.activated_at is 'When this snapshot last became the active one.';
create unique index workflow_deployments_one_active_idx on public.workflow_deployments (workflow_id) where is_active;
create index workflow_deployments_workspace_id_idx on public.workflow_deployments (workspace_id);

/**
 * Locks a workflow for a deployment change after checking the caller may make it. A workflow the
 * caller cannot see is reported as not found (PT404, HTTP 404) rather than forbidden, so its
 * existence does not leak; a viewer gets 42501 (HTTP 403). The row lock serialises concurrent
 * deploys and activations of the same workflow.
 */
create function workflows_private.lock_workflow_for_deployment(p_workflow_id uuid, p_action text)
returns public.workflows
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_workflow public.workflows;
begin
  select * into v_workflow from public.workflows w where w.id = p_workflow_id for update;
  if not found or (auth.role() is distinct from 'service_role' and not workflows_private.has_workspace_role(v_workflow.workspace_id, 'viewer')) then
    raise exception 'Workflow % not found', p_workflow_id using errcode = 'PT404';
  end if;
  if auth.role() is distinct from 'service_role' then
    perform workflows_private.require_workspace_role(v_workflow.workspace_id, 'editor', p_action);
  end if;
  return v_workflow;
end;
$$;
comment on function workflows_private.lock_workflow_for_deployment(uuid, text) is 'Checks the caller may change a workflow''s deployments and locks the workflow row.';

/**
 * Publishes the draft as a new snapshot (the next version) and makes it the active one. The draft
 * must pass validation in deploy mode (it needs an enabled trigger); otherwise 23514 with every
 * issue in the details. Security definer because snapshots accept no direct writes.
 */
create function public.deploy_workflow(p_workflow_id uuid, p_note text default null)
returns public.workflow_deployments
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_workflow public.workflows := workflows_private.lock_workflow_for_deployment(p_workflow_id, 'deploy workflows');
  v_deployment public.workflow_deployments;
begin
  perform workflows_private.assert_valid_state(v_workflow.state, 'deploy');
  update public.workflow_deployments d set is_active = false where d.workflow_id = p_workflow_id and d.is_active;
  insert into public.workflow_deployments (workflow_id, workspace_id, version, state, note, is_active, created_by, activated_at)
  values (
    p_workflow_id,
    v_workflow.workspace_id,
    coalesce((select max(d.version) from public.workflow_deployments d where d.workflow_id = p_workflow_id), 0) + 1,
    v_workflow.state,
    nullif(btrim(p_note), ''),
    true,
    (select auth.uid()),
    now()
  )
  returning * into v_deployment;
  return v_deployment;
end;
$$;
comment on function public.deploy_workflow(uuid, text) is 'Publishes the workflow''s draft as a new deployment snapshot and makes it active. Returns the snapshot.';

/**
 * Makes a snapshot the active one: promote a newer one or roll back to an older one. Idempotent:
 * activating the active snapshot changes nothing. An unknown version is PT404 (HTTP 404) naming
 * the versions that exist.
 */
create function public.activate_deployment(p_workflow_id uuid, p_version integer)
returns public.workflow_deployments
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_workflow public.workflows := workflows_private.lock_workflow_for_deployment(p_workflow_id, 'activate deployments');
  v_target public.workflow_deployments;
  v_latest integer;
begin
  select * into v_target from public.workflow_deployments d where d.workflow_id = v_workflow.id and d.version = p_version;
  if not found then
    select max(d.version) into v_latest from public.workflow_deployments d where d.workflow_id = v_workflow.id;
    raise exception 'Workflow "%" has no deployment version %', v_workflow.name, p_version
      using errcode = 'PT404',
        hint = case when v_latest is null then 'It has never been deployed.' else format('Versions run from 1 to %s.', v_latest) end;
  end if;
  if v_target.is_active then
    return v_target;
  end if;
  update public.workflow_deployments d set is_active = false where d.workflow_id = v_workflow.id and d.is_active;
  update public.workflow_deployments d set is_active = true, activated_at = now() where d.id = v_target.id returning * into v_target;
  return v_target;
end;
$$;
comment on function public.activate_deployment(uuid, integer) is 'Promotes or rolls back to a deployment snapshot by version (idempotent). Unknown versions raise PT404.';

/** Takes a workflow offline: no snapshot stays active, so triggers refuse to run it (403). Idempotent. */
create function public.undeploy_workflow(p_workflow_id uuid)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform workflows_private.lock_workflow_for_deployment(p_workflow_id, 'undeploy workflows');
  update public.workflow_deployments d set is_active = false where d.workflow_id = p_workflow_id and d.is_active;
end;
$$;
comment on function public.undeploy_workflow(uuid) is 'Deactivates the active snapshot of a workflow, if any.';

/** A block as a diff lists it. */
create function workflows_private.diff_block(p_id text, p_block jsonb)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  select jsonb_build_object('id', p_id, 'name', p_block ->> 'name', 'type', p_block ->> 'type');
$$;
comment on function workflows_private.diff_block(text, jsonb) is 'The id, name and type of a block, for diffs.';

/**
 * Structural difference between two workflow states, `p_from` → `p_to`: blocks added, removed and
 * changed (which of type, name and enabled changed, and which config keys), edges added and
 * removed (an edge is its source, target and handle; ids and layout are ignored), and loops and
 * parallels added, removed or changed (which settings), and which parts of the flow control
 * (`settings.changed`, e.g. ["flowControl.concurrency"]). `identical` when nothing differs.
 */
create function workflows_private.diff_states(p_from jsonb, p_to jsonb)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  with
  a as (select coalesce(p_from -> 'blocks', '{}'::jsonb) as blocks, coalesce(p_from -> 'edges', '[]'::jsonb) as edges),
  b as (select coalesce(p_to -> 'blocks', '{}'::jsonb) as blocks, coalesce(p_to -> 'edges', '[]'::jsonb) as edges),
  blocks_added as (
    select coalesce(jsonb_agg(workflows_private.diff_block(k.key, k.value) order by k.key collate "C"), '[]'::jsonb) as list
    from b, jsonb_each(b.blocks) as k(key, value) where not (select a.blocks from a) ? k.key
  ),
  blocks_removed as (
    select coalesce(jsonb_agg(workflows_private.diff_block(k.key, k.value) order by k.key collate "C"), '[]'::jsonb) as list
    from a, jsonb_each(a.blocks) as k(key, value) where not (select b.blocks from b) ? k.key
  ),
  pairs as (
    select k.key as id, k.value as old, (select b.blocks from b) -> k.key as new
    from a, jsonb_each(a.blocks) as k(key, value) where (select b.blocks from b) ? k.key
  ),
  changes as (
    select p.id, p.new,
      array(
        select f from unnest(array['type', 'name']) as f where p.old -> f is distinct from p.new -> f
        union all
        select 'enabled' where coalesce(p.old -> 'enabled', 'true') is distinct from coalesce(p.new -> 'enabled', 'true')
      ) as fields,
      array(
        select key from (
          select jsonb_object_keys(coalesce(p.old -> 'config', '{}'::jsonb)) as key
          union
          select jsonb_object_keys(coalesce(p.new -> 'config', '{}'::jsonb))
        ) keys
        where p.old -> 'config' -> key is distinct from p.new -> 'config' -> key
        order by key collate "C"
      ) as config_keys
    from pairs p
  ),
  blocks_changed as (
    select coalesce(jsonb_agg(workflows_private.diff_block(c.id, c.new) || jsonb_build_object('fields', to_jsonb(c.fields), 'configKeys', to_jsonb(c.config_keys)) order by c.id collate "C"), '[]'::jsonb) as list
    from changes c where cardinality(c.fields) > 0 or cardinality(c.config_keys) > 0
  ),
  edges_a as (
    select distinct on (e.value ->> 'source', e.value ->> 'target', coalesce(e.value ->> 'sourceHandle', ''))
      e.value ->> 'source' as source, e.value ->> 'target' as target, coalesce(e.value ->> 'sourceHandle', '') as handle, e.value as edge
    from a, jsonb_array_elements(a.edges) as e(value)
  ),
  edges_b as (
    select distinct on (e.value ->> 'source', e.value ->> 'target', coalesce(e.value ->> 'sourceHandle', ''))
      e.value ->> 'source' as source, e.value ->> 'target' as target, coalesce(e.value ->> 'sourceHandle', '') as handle, e.value as edge
    from b, jsonb_array_elements(b.edges) as e(value)
  ),
  edges_added as (
    select coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object('id', n.edge ->> 'id', 'source', n.source, 'target', n.target, 'sourceHandle', nullif(n.handle, ''))) order by n.source collate "C", n.target collate "C", n.handle collate "C"), '[]'::jsonb) as list
    from edges_b n where not exists (select 1 from edges_a o where o.source = n.source and o.target = n.target and o.handle = n.handle)
  ),
  edges_removed as (
    select coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object('id', o.edge ->> 'id', 'source', o.source, 'target', o.target, 'sourceHandle', nullif(o.handle, ''))) order by o.source collate "C", o.target collate "C", o.handle collate "C"), '[]'::jsonb) as list
    from edges_a o where not exists (select 1 from edges_b n where o.source = n.source and o.target = n.target and o.handle = n.handle)
  ),
  subflows as (
    select kind.name as kind, ids.id, p_from -> kind.field -> ids.id as old, p_to -> kind.field -> ids.id as new
    from (values ('loop', 'loops'), ('parallel', 'parallels')) as kind(name, field)
    cross join lateral (
      select jsonb_object_keys(coalesce(p_from -> kind.field, '{}'::jsonb)) as id
      union
      select jsonb_object_keys(coalesce(p_to -> kind.field, '{}'::jsonb))
    ) ids
  ),
  subflow_changes as (
    select coalesce(jsonb_agg(jsonb_build_object('id', s.id, 'kind', s.kind) order by s.id collate "C") filter (where s.old is null), '[]'::jsonb) as added,
      coalesce(jsonb_agg(jsonb_build_object('id', s.id, 'kind', s.kind) order by s.id collate "C") filter (where s.new is null), '[]'::jsonb) as removed,
      coalesce(jsonb_agg(jsonb_build_object('id', s.id, 'kind', s.kind, 'keys', to_jsonb(array(
        select key from (select jsonb_object_keys(s.old) as key union select jsonb_object_keys(s.new)) keys
        where s.old -> key is distinct from s.new -> key order by key collate "C"
      )))) filter (where s.old is not null and s.new is not null and s.old <> s.new), '[]'::jsonb) as changed
    from subflows s
  ),
  settings_changed as (
    -- Flow control (settings.flowControl): which of its parts differ, as "flowControl.<part>".
    select coalesce(jsonb_agg('flowControl.' || k.key order by k.key collate "C"), '[]'::jsonb) as list
    from (
      select jsonb_object_keys(coalesce(p_from #> '{settings,flowControl}', '{}'::jsonb)) as key
      union
      select jsonb_object_keys(coalesce(p_to #> '{settings,flowControl}', '{}'::jsonb))
    ) k
    where p_from #> array['settings', 'flowControl', k.key] is distinct from p_to #> array['settings', 'flowControl', k.key]
  )
  select jsonb_build_object(
    'blocks', jsonb_build_object('added', blocks_added.list, 'removed', blocks_removed.list, 'changed', blocks_changed.list),
    'edges', jsonb_build_object('added', edges_added.list, 'removed', edges_removed.list),
    'subflows', jsonb_build_object('added', subflow_changes.added, 'removed', subflow_changes.removed, 'changed', subflow_changes.changed),
    'settings', jsonb_build_object('changed', settings_changed.list),
    'identical', blocks_added.list = '[]' and blocks_removed.list = '[]' and blocks_changed.list = '[]'
      and edges_added.list = '[]' and edges_removed.list = '[]'
      and subflow_changes.added = '[]' and subflow_changes.removed = '[]' and subflow_changes.changed = '[]'
      and settings_changed.list = '[]'
  )
  from blocks_added, blocks_removed, blocks_changed, edges_added, edges_removed, subflow_changes, settings_changed;
$$;
comment on function workflows_private.diff_states(jsonb, jsonb) is 'Structural diff of two workflow states: blocks, edges, loops and parallels added, removed and changed, and flow-control parts changed.';

/**
 * Compares a snapshot with the draft, or with another snapshot: `p_version` (default: the active
 * one) is the base, `p_compare_to` (default: the draft) the other side, so "added" means added
 * since that snapshot. Reads through row-level security: a workflow the caller cannot see is
 * not found (PT404), as is an unknown version.
 */
create function public.diff_workflow_deployment(p_workflow_id uuid, p_version integer default null, p_compare_to integer default null)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  v_workflow public.workflows;
  v_from public.workflow_deployments;
  v_to_state jsonb;
begin
  select * into v_workflow from public.workflows w where w.id = p_workflow_id;
  if not found then
    raise exception 'Workflow % not found', p_workflow_id using errcode = 'PT404';
  end if;
  if p_version is null then
    select * into v_from from public.workflow_deployments d where d.workflow_id = p_workflow_id and d.is_active;
    if not found then
      raise exception 'Workflow "%" has no active deployment to compare with', v_workflow.name using errcode = 'PT404', hint = 'Name a version, or deploy first.';
    end if;
  else
    select * into v_from from public.workflow_deployments d where d.workflow_id = p_workflow_id and d.version = p_version;
    if not found then
      raise exception 'Workflow "%" has no deployment version %', v_workflow.name, p_version using errcode = 'PT404';
    end if;
  end if;
  if p_compare_to is null then
    v_to_state := v_workflow.state;
  else
    select d.state into v_to_state from public.workflow_deployments d where d.workflow_id = p_workflow_id and d.version = p_compare_to;
    if not found then
      raise exception 'Workflow "%" has no deployment version %', v_workflow.name, p_compare_to using errcode = 'PT404';
    end if;
  end if;
  return jsonb_build_object(
    'workflowId', p_workflow_id,
    'from', jsonb_build_object('version', v_from.version, 'active', v_from.is_active),
    'to', case when p_compare_to is null then jsonb_build_object('draft', true) else jsonb_build_object('version', p_compare_to) end
  ) || workflows_private.diff_states(v_from.state, v_to_state);
end;
$$;
comment on function public.diff_workflow_deployment(uuid, integer, integer) is 'Structural diff of a deployment snapshot (default: the active one) against the draft or another snapshot.';

-- Access -----------------------------------------------------------------------------------------

revoke all on public.workflow_deployments from public, anon, authenticated;
grant select on public.workflow_deployments to authenticated;
grant all on public.workflow_deployments to service_role;

alter table public.workflow_deployments enable row level security;
create policy "Members can read their workspaces' deployments" on public.workflow_deployments
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));

revoke execute on function
  public.deploy_workflow(uuid, text),
  public.activate_deployment(uuid, integer),
  public.undeploy_workflow(uuid),
  public.diff_workflow_deployment(uuid, integer, integer)
  from public, anon;
grant execute on function
  public.deploy_workflow(uuid, text),
  public.activate_deployment(uuid, integer),
  public.undeploy_workflow(uuid),
  public.diff_workflow_deployment(uuid, integer, integer)
  to authenticated, service_role;
grant execute on function workflows_private.diff_states(jsonb, jsonb), workflows_private.diff_block(text, jsonb) to authenticated, service_role;
