-- Workflow service: deleting a workspace deletes everything it owns (issue 29, finding 6).
--
-- An owner deletes a workspace with DELETE on public.workspaces (the data API); its folders,
-- workflows, deployments, runs, keys, environment, triggers and chats go with it by ON DELETE
-- CASCADE, in that one statement's transaction. Two things need more than the cascade:
-- - the environment version: each cascaded variable's trigger skips bumping the version of a
--   workspace being deleted (workflows_private.bump_environment_version), which would insert a
--   row whose foreign key has no parent any more (409 23503);
-- - run files in the `workflow-files` bucket. Rows in storage.objects are not enough to
--   delete (the Storage service keeps the bytes elsewhere: on disk locally, in S3 hosted), so the
--   files must be removed through the Storage API. The deletion queues a sweep in the same
--   transaction (pgmq `workspace_file_sweeps`); the `workspace-file-sweeper` function drains it and
--   removes the files with the service-role client, page by page, deleting the message only once
--   no file is left, so a worker that dies mid-sweep is retried.
-- The usage ledger keeps its rows (it has no foreign key on purpose: charges outlive runs).

-- Environment versions ---------------------------------------------------------------------------

-- The file sweep queue -----------------------------------------------------------------------------
-- Each message is {workspaceId}. A sweep is idempotent (it removes whatever is left), so pgmq's
-- at-least-once delivery is what it needs.

select pgmq.create('workspace_file_sweeps');
insert into platform.queue_workers (queue_name, function_name, batch_size, visibility_timeout, enabled)
values ('workspace_file_sweeps', 'workspace-file-sweeper', 10, 120, true)
on conflict (queue_name) do nothing;

/**
 * Trigger: a deleted workspace's run files are swept from Storage once the deletion commits. The
 * message is sent in the deleting transaction, so a rolled-back deletion queues nothing. Security
 * definer because the owner deleting the workspace has no rights on pgmq.
 */
create function workflows_private.queue_workspace_file_sweep()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform pgmq.send('workspace_file_sweeps', jsonb_build_object('workspaceId', old.id));
  return null;
end;
$$;
comment on function workflows_private.queue_workspace_file_sweep() is 'Trigger: queues the Storage sweep of a deleted workspace''s run files.';

create trigger workspaces_queue_file_sweep after delete on public.workspaces
  for each row execute function workflows_private.queue_workspace_file_sweep();

/**
 * The sweeper takes up to `p_batch_size` sweeps, each hidden for `p_visibility_seconds` (the
 * message comes back if the sweeper dies first). Answers `[{messageId, workspaceId, executionIds?}]`
 * (executionIds: a sweep of runs that expired, queued by expire_workflow_history, rather than of a
 * deleted workspace): one value, as the functions' direct RPC reads one row and column.
 */
create function public.claim_workspace_file_sweeps(p_batch_size integer, p_visibility_seconds integer)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
begin
  if p_batch_size is null or p_batch_size not between 1 and 100 or p_visibility_seconds is null or p_visibility_seconds not between 1 and 43200 then
    raise exception 'claim_workspace_file_sweeps: batch size 1 to 100, visibility 1 to 43200 s' using errcode = '22023';
  end if;
  return coalesce(
    (select jsonb_agg(jsonb_build_object('messageId', m.msg_id, 'workspaceId', m.message ->> 'workspaceId')
       || case when m.message ? 'executionIds' then jsonb_build_object('executionIds', m.message -> 'executionIds') else '{}'::jsonb end
       order by m.msg_id)
     from pgmq.read('workspace_file_sweeps', p_visibility_seconds, p_batch_size) m),
    '[]'::jsonb);
end;
$$;
comment on function public.claim_workspace_file_sweeps(integer, integer) is 'Service role: claims queued file sweeps of deleted workspaces or expired runs, as [{messageId, workspaceId, executionIds?}].';

/**
 * Up to `p_limit` (at most 1,000) names of run files left in `workflow-files` under a deleted
 * workspace's folder. A workspace that still exists answers none, so the sweeper can never be
 * pointed at live files. An array rather than a set, for the same reason as above.
 */
create function public.deleted_workspace_file_names(p_workspace_id uuid, p_limit integer default 1000)
returns text[]
language sql
stable
security definer
set search_path = ''
as $$
  select coalesce(array_agg(f.name order by f.name), '{}')
  from (
    select o.name
    from storage.objects o
    where o.bucket_id = 'workflow-files'
      and o.name like p_workspace_id::text || '/%'
      and not exists (select 1 from public.workspaces w where w.id = p_workspace_id)
    order by o.name
    limit least(greatest(coalesce(p_limit, 1000), 1), 1000)
  ) f;
$$;
comment on function public.deleted_workspace_file_names(uuid, integer) is 'Service role: names of run files still stored for a deleted workspace (none while it exists), at most 1,000.';

/** The sweep of a message is done: its workspace has no file left, so the message goes. */
create function public.finish_workspace_file_sweep(p_message_id bigint)
returns boolean
language sql
security definer
set search_path = ''
as $$
  select pgmq.delete('workspace_file_sweeps', p_message_id);
$$;
comment on function public.finish_workspace_file_sweep(bigint) is 'Service role: deletes a finished file sweep from its queue; false when it was already gone.';

-- Access -------------------------------------------------------------------------------------------

revoke execute on function workflows_private.queue_workspace_file_sweep() from public, anon, authenticated, service_role;
revoke execute on function
  public.claim_workspace_file_sweeps(integer, integer),
  public.deleted_workspace_file_names(uuid, integer),
  public.finish_workspace_file_sweep(bigint)
from public, anon, authenticated;
grant execute on function
  public.claim_workspace_file_sweeps(integer, integer),
  public.deleted_workspace_file_names(uuid, integer),
  public.finish_workspace_file_sweep(bigint)
to service_role;
