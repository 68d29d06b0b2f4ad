-- Workflow service, issue 31 part 3: re-running a run (POST /api/v2/runs/{runId}/rerun,
-- docs/workflow-runs.md "Re-running runs").
--
-- A re-run is a new run, admitted by admit_workflow_run like any other (key, access, usage, the sync
-- rate-limit bucket, the base charge, the record, webhooks at its end), linked to the run it re-runs
-- (workflow_executions.rerun_of) and pinned to the deployment that run executed. What it needs of the
-- original is kept with the original and goes when it goes:
--
-- - its input: every run now records its trigger input (admit_workflow_run), sync ones included
--   (the execute endpoint leaves out a sync input sent in a body over 1 MiB);
-- - its block outcomes: an async run's checkpoints are no longer deleted when it ends, and a sync
--   run's, collected in memory as it ran, are written in one batch by finish_workflow_run
--   (store_run_checkpoints, below); either way, what outlives the run is masked as its trace is.
--   A fromBlock re-run replays those of the blocks that do not depend on the named block, and runs
--   that block and what depends on it again.
--
-- This file holds what only re-runs use; the changed admit, finish and read functions are in their
-- home migrations (…031200_workflows-run-lifecycle.sql, …032400_workflows-runs-api.sql).

/**
 * Why run `p_original` cannot be re-run, as admit_workflow_run's refusal, or null when it can:
 * 409 RERUN_NOT_SUPPORTED for a manual run (it ran a draft, not a deployment); 409 RUN_IN_PROGRESS
 * for a run still queued or running (paused included); 410 RUN_DATA_EXPIRED when what the re-run
 * needs is not kept: the input (unless `p_new_input`: the caller sends one) or, for a fromBlock
 * re-run (`p_from_block`), the run's recorded block outcomes. The caller has already checked that
 * the run exists and that it may run its workflow.
 */
create function workflows_private.rerun_refusal(p_original public.workflow_executions, p_new_input boolean, p_from_block boolean)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if p_original.trigger = 'manual' then
    return workflows_private.refusal(409, 'RERUN_NOT_SUPPORTED',
      format('Run %s was a manual run of the draft; only runs of a deployment can be re-run', p_original.id));
  end if;
  if p_original.ended_at is null then
    return workflows_private.refusal(409, 'RUN_IN_PROGRESS',
      format('Run %s has not ended; re-run it once it has', p_original.id));
  end if;
  if p_from_block and not exists (
    select 1 from workflows_private.run_checkpoints c where c.execution_id = p_original.id and c.kind = 'completed') then
    return workflows_private.refusal(410, 'RUN_DATA_EXPIRED',
      format('The block outcomes of run %s are no longer kept, so it cannot be re-run from a block; re-run it whole', p_original.id));
  end if;
  if not p_new_input and p_original.input is null then
    return workflows_private.refusal(410, 'RUN_DATA_EXPIRED',
      format('The input of run %s is not kept (a sync run does not keep an input sent in a body over 1 MiB); re-run it with an input', p_original.id));
  end if;
  return null;
end;
$$;
comment on function workflows_private.rerun_refusal(public.workflow_executions, boolean, boolean) is 'Why a run cannot be re-run (manual, in progress, its input or block outcomes no longer kept), or null.';

/**
 * The completed block instances a run recorded (executor/replay.ts's CompletedCheckpoint), in the
 * order they completed: what a fromBlock re-run of it may replay. Timers are left out: a re-run
 * replays finished blocks, never a Wait's remaining time.
 */
create function workflows_private.completed_checkpoints(p_execution_id uuid)
returns jsonb
language sql
stable
security definer
set search_path = ''
as $$
  select coalesce(jsonb_agg(c.checkpoint order by c.seq), '[]'::jsonb)
  from workflows_private.run_checkpoints c
  where c.execution_id = p_execution_id and c.kind = 'completed';
$$;
comment on function workflows_private.completed_checkpoints(uuid) is 'A run''s completed block instances in completion order, for a fromBlock re-run to replay.';

/**
 * Stores many checkpoints of one run in one statement: `p_checkpoints` is a JSON array of what
 * record_workflow_checkpoint takes one at a time, in the order they were recorded (the history's
 * order). A key already stored takes the checkpoint given, keeping its place in the order: an async
 * run's finish stores its whole history masked over the unmasked records its attempts resumed from.
 * finish_workflow_run calls it with a run's kept outcomes; a sync run that stops before its end (an
 * approval's pause) stores what it collected so far the same way. Malformed entries raise 22023.
 */
create function workflows_private.store_run_checkpoints(p_execution_id uuid, p_attempt integer, p_checkpoints jsonb)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  if jsonb_typeof(p_checkpoints) is distinct from 'array' or exists (
    select 1 from jsonb_array_elements(p_checkpoints) x(checkpoint)
    where jsonb_typeof(x.checkpoint) is distinct from 'object' or (x.checkpoint ->> 'kind') is null
      or (x.checkpoint ->> 'kind') not in ('completed', 'timer') or jsonb_typeof(x.checkpoint -> 'key') is distinct from 'string') then
    raise exception 'store_run_checkpoints: checkpoints are an array of {kind: completed | timer, key, …}' using errcode = '22023';
  end if;
  insert into workflows_private.run_checkpoints (execution_id, kind, key, attempt, checkpoint)
  select p_execution_id, x.checkpoint ->> 'kind', x.checkpoint ->> 'key', p_attempt, x.checkpoint
  from jsonb_array_elements(p_checkpoints) with ordinality x(checkpoint, position)
  order by x.position
  on conflict (execution_id, kind, key) do update set checkpoint = excluded.checkpoint;
end;
$$;
comment on function workflows_private.store_run_checkpoints(uuid, integer, jsonb) is 'Stores a batch of a run''s checkpoints in one statement (a sync run''s collected outcomes at its finish).';

revoke execute on function
  workflows_private.rerun_refusal(public.workflow_executions, boolean, boolean),
  workflows_private.completed_checkpoints(uuid),
  workflows_private.store_run_checkpoints(uuid, integer, jsonb)
  from public, anon, authenticated, service_role;
