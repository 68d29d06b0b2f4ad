-- Workflow service, part 5: runs started by the webhook, schedule and chat triggers.
--
-- These callers have no API key and no signed-in user: the edge function (webhook secret, chat
-- session) or the database itself (the schedule ticker) vouches for them. They are admitted by
-- the same admit_workflow_run as every run (usage limit, rate limit, base charge, record), through
-- one more entry point, admit_trigger_run, which also records which trigger block the run starts
-- from: a workflow may have several webhook or schedule triggers, and an async run is started by a
-- worker that only has the record to go by (workflow_executions.trigger_block_id).

/**
 * Admits a run of a trigger that has no caller to authenticate: `webhook` (the edge function checked
 * the webhook's secret), `schedule` (the ticker) or `chat` (the edge function checked the chat
 * session). Everything else is admit_workflow_run's, with its answers: the active deployment,
 * idempotency, the usage limit, the sync or async bucket (schedule runs have none), the record and
 * the base charge. An admitted run also records `p_trigger_block_id`, the trigger block it starts
 * from, and a sync answer carries it as `triggerBlockId` (claim_workflow_runs hands it to the
 * worker of an async run). `p_trace` is the caller's trace context, as admit_workflow_run takes it.
 * Service role only.
 */
create function public.admit_trigger_run(
  p_trigger text,
  p_workflow_id uuid,
  p_trigger_block_id text,
  p_mode text default 'async',
  p_input jsonb default null,
  p_idempotency_key text default null,
  p_request_hash text default null,
  p_cached_deployment_ids uuid[] default null,
  p_environment_version bigint default null,
  p_lease_seconds integer default 360,
  p_trace jsonb default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_answer jsonb;
begin
  if p_trigger is null or p_trigger not in ('webhook', 'schedule', 'chat') then
    raise exception 'admit_trigger_run: trigger must be webhook, schedule or chat (API and manual runs use admit_workflow_run)' using errcode = '22023';
  end if;
  if p_trigger_block_id is null or btrim(p_trigger_block_id) = '' then
    raise exception 'admit_trigger_run: the trigger block is required' using errcode = '22023';
  end if;
  v_answer := public.admit_workflow_run(p_workflow_id, p_trigger, p_mode, null, null, p_input, p_idempotency_key, p_request_hash,
    p_cached_deployment_ids, p_environment_version, p_lease_seconds, null, null, p_trace);
  if v_answer ->> 'outcome' = 'admitted' then
    update public.workflow_executions e set trigger_block_id = p_trigger_block_id where e.id = (v_answer ->> 'executionId')::uuid;
    if v_answer ? 'deployment' then
      v_answer := v_answer || jsonb_build_object('triggerBlockId', p_trigger_block_id);
    end if;
  end if;
  return v_answer;
end;
$$;
comment on function public.admit_trigger_run(text, uuid, text, text, jsonb, text, text, uuid[], bigint, integer, jsonb) is 'Admits a webhook, schedule or chat run (no key: the caller vouches) through admit_workflow_run and records its trigger block. Service role only.';

revoke execute on function public.admit_trigger_run(text, uuid, text, text, jsonb, text, text, uuid[], bigint, integer, jsonb) from public, anon, authenticated;
grant execute on function public.admit_trigger_run(text, uuid, text, text, jsonb, text, text, uuid[], bigint, integer, jsonb) to service_role;
revoke execute on function workflows_private.run_payload(public.workflow_executions, text, jsonb, jsonb, jsonb) from public, anon, authenticated, service_role;
