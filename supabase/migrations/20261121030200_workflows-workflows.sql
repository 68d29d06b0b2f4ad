-- Workflow service: folders and workflows. A workflow's `state` is its draft, edited by the editor
-- and saved straight through the data API; every save is validated by the database (see
-- ..._workflows-validation.sql), so an invalid draft is refused with the block and field named.
-- Triggers never run the draft: they run the active deployment snapshot (..._workflows-deployments.sql).

create table public.folders (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  parent_id uuid,
  name text not null check (char_length(btrim(name)) between 1 and 100),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, id),
  -- A folder nests only inside a folder of the same workspace.
  foreign key (workspace_id, parent_id) references public.folders (workspace_id, id) on delete cascade,
  constraint folders_name_no_control_characters check (shared_private.is_plain_text(name))
);
comment on table public.folders is 'Folders organising a workspace''s workflows; they nest.';
comment on column public.folders.parent_id is 'The enclosing folder (same workspace), or null at the top.';
create index folders_workspace_id_idx on public.folders (workspace_id);
create index folders_parent_id_idx on public.folders (parent_id);

/** Refuses a folder move that would put a folder inside itself. */
create function workflows_private.refuse_folder_cycle()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if new.parent_id is not null and exists (
    with recursive ancestors(id) as (
      select new.parent_id
      union
      select f.parent_id from public.folders f join ancestors a on f.id = a.id where f.parent_id is not null
    )
    select 1 from ancestors where id = new.id
  ) then
    raise exception 'Folder "%" cannot be moved inside itself', new.name using errcode = '23514';
  end if;
  return new;
end;
$$;
comment on function workflows_private.refuse_folder_cycle() is 'Trigger: refuses folder parents that would form a cycle.';

create trigger folders_refuse_cycle before insert or update of parent_id on public.folders
  for each row execute function workflows_private.refuse_folder_cycle();
create trigger folders_touch_updated_at before update on public.folders
  for each row execute function workflows_private.touch_updated_at();

create table public.workflows (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  folder_id uuid,
  name text not null check (char_length(btrim(name)) between 1 and 200),
  description text not null default '',
  state jsonb not null default '{"blocks": {}, "edges": [], "loops": {}, "parallels": {}}'::jsonb,
  created_by uuid default auth.uid() references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, id),
  -- Deleting a folder moves its workflows to the top level rather than deleting them.
  foreign key (workspace_id, folder_id) references public.folders (workspace_id, id) on delete set null (folder_id),
  constraint workflows_name_no_control_characters check (shared_private.is_plain_text(name)),
  constraint workflows_description_no_control_characters check (shared_private.is_plain_text(description, true))
);
comment on table public.workflows is 'A workflow and its draft. Edit the draft by updating `state`; publish it with deploy_workflow().';
comment on column public.workflows.state is 'The draft: {blocks, edges, loops, parallels} as docs/workflows.md describes. Validated on every save; an invalid state is refused (SQLSTATE 23514) with every issue in the error details.';
comment on column public.workflows.folder_id is 'Folder of the same workspace, or null at the top level.';
comment on column public.workflows.created_by is 'The user who created the workflow (set from the session).';
create index workflows_workspace_id_idx on public.workflows (workspace_id);
create index workflows_folder_id_idx on public.workflows (folder_id);

/** Validates a draft before it is stored (mode `save`: work in progress without a trigger is fine). */
create function workflows_private.check_workflow_state()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  perform workflows_private.assert_valid_state(new.state, 'save');
  return new;
end;
$$;
comment on function workflows_private.check_workflow_state() is 'Trigger: refuses an invalid workflow draft with every issue in the error details.';

create trigger workflows_check_state before insert or update of state on public.workflows
  for each row execute function workflows_private.check_workflow_state();
create trigger workflows_touch_updated_at before update on public.workflows
  for each row execute function workflows_private.touch_updated_at();

-- Access -----------------------------------------------------------------------------------------

revoke all on public.folders, public.workflows from public, anon, authenticated;
grant select, delete on public.folders, public.workflows to authenticated;
grant insert (id, workspace_id, parent_id, name), update (parent_id, name) on public.folders to authenticated;
grant insert (id, workspace_id, folder_id, name, description, state), update (folder_id, name, description, state) on public.workflows to authenticated;
grant all on public.folders, public.workflows to service_role;

alter table public.folders enable row level security;
alter table public.workflows enable row level security;

create policy "Members can read their workspaces' folders" on public.folders
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));
create policy "Editors can create folders" on public.folders
  for insert to authenticated
  with check (workspace_id in (select workflows_private.member_workspace_ids('editor')));
create policy "Editors can rename and move folders" on public.folders
  for update to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('editor')))
  with check (workspace_id in (select workflows_private.member_workspace_ids('editor')));
create policy "Editors can delete folders" on public.folders
  for delete to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('editor')));

create policy "Members can read their workspaces' workflows" on public.workflows
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));
create policy "Editors can create workflows" on public.workflows
  for insert to authenticated
  with check (workspace_id in (select workflows_private.member_workspace_ids('editor')));
create policy "Editors can edit workflows" on public.workflows
  for update to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('editor')))
  with check (workspace_id in (select workflows_private.member_workspace_ids('editor')));
create policy "Editors can delete workflows" on public.workflows
  for delete to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('editor')));
