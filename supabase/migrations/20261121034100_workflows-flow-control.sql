-- Workflow service, issue 32 item 2: flow control declared in the workflow (docs/flow-control.md).
--
-- A workflow's state may carry `settings.flowControl` ({concurrency?: {key, limit}, priority?}),
-- validated by state_issues (…030100), diffed by diff_states (…030300) and deployed with the
-- snapshot like the rest of the state. Every run is admitted by admit_workflow_run, whatever its
-- trigger (schedule runs by pg_cron, with no edge function in the way), so that is where the key
-- and the priority are resolved: they are references to the trigger's input (`<api.customerId>`,
-- `<webhook.account>`, `<input.tier>`), never code, so there is nothing to sandbox: resolving one is
-- walking a JSON path of a template of at most 200 characters over an input the endpoints already
-- cap. A run with a key needs a slot of one more scope, `key:<workflow id>:<key>`, with the
-- workflow's limit, in the same concurrency_slots / run_slots / run_waiters as the account's
-- (…034000): over it a sync run is refused (429 CONCURRENCY_KEY_LIMIT_EXCEEDED) and an async one
-- waits. Its priority is the rank's priority term.

-- What a run was admitted with, so a parked run that resumes needs the same scopes and rank.
alter table public.workflow_executions
  add column concurrency_key text,
  add column concurrency_key_limit integer check (concurrency_key_limit between 1 and 1000),
  add column priority smallint not null default 0 check (priority between 0 and 100);
comment on column public.workflow_executions.concurrency_key is 'The resolved concurrency key of the workflow''s flow control, or null when it declares none.';
comment on column public.workflow_executions.concurrency_key_limit is 'Runs of the same key allowed at once, as deployed when the run was admitted.';
comment on column public.workflow_executions.priority is 'The run''s resolved priority (0 to 100): a waiter one point higher starts ahead of ones that waited up to 60 s longer.';

-- Read at every admission: a column, so admission never detoasts a whole (up to 2 MB) state.
alter table public.workflow_deployments
  add column flow_control jsonb generated always as (state #> '{settings,flowControl}') stored;
comment on column public.workflow_deployments.flow_control is 'The snapshot''s settings.flowControl, read by admission.';

/**
 * A flow-control template resolved over a trigger input: each `<head.path>` reference replaced by
 * the input's value at the path (a string as is, anything else as JSON text, a missing value or
 * null as nothing); the head only says which trigger is meant, the path is read from the run's own
 * input. A result over 200 characters is replaced by its md5, so a scope stays small.
 */
create function workflows_private.resolve_flow_template(p_template text, p_input jsonb)
returns text
language plpgsql
immutable
set search_path = ''
as $$
declare
  v_pattern constant text := '<[A-Za-z0-9_-]+((?:\.[A-Za-z0-9_$-]+|\[[0-9]+\])+)>';
  v_texts text[] := regexp_split_to_array(p_template, v_pattern);
  v_out text := v_texts[1];
  v_match text[];
  v_index integer := 1;
  v_value jsonb;
begin
  for v_match in select m from regexp_matches(p_template, v_pattern, 'g') m loop
    v_index := v_index + 1;
    v_value := p_input #> array(select coalesce(s[1], s[2]) from regexp_matches(v_match[1], '\.([A-Za-z0-9_$-]+)|\[([0-9]+)\]', 'g') s);
    v_out := v_out || coalesce(case jsonb_typeof(v_value) when 'string' then v_value #>> '{}' when 'null' then '' else v_value::text end, '') || v_texts[v_index];
  end loop;
  return case when char_length(v_out) > 200 then 'md5:' || md5(v_out) else v_out end;
end;
$$;
comment on function workflows_private.resolve_flow_template(text, jsonb) is 'Resolves a flow-control template''s <trigger.path> references over the run''s input (over 200 characters: its md5).';

/**
 * A run's priority from the flow control's `priority`: a number as declared, or its one reference's
 * value when that is a number (or a numeric string), rounded and held to 0–100; anything else is 0,
 * so a bad input never refuses a run.
 */
create function workflows_private.resolve_flow_priority(p_priority jsonb, p_input jsonb)
returns smallint
language sql
immutable
set search_path = ''
as $$
  select case
    when n is null then 0
    else greatest(0, least(100, round(n)))
  end::smallint
  from (
    select case
      when jsonb_typeof(p_priority) = 'number' then (p_priority #>> '{}')::numeric
      when jsonb_typeof(p_priority) = 'string' then (
        select case
          when jsonb_typeof(v) = 'number' then (v #>> '{}')::numeric
          when jsonb_typeof(v) = 'string' and v #>> '{}' ~ '^\s*-?[0-9]{1,6}(\.[0-9]+)?\s*$' then (v #>> '{}')::numeric
        end
        from (select p_input #> array(select coalesce(s[1], s[2]) from regexp_matches(p_priority #>> '{}', '\.([A-Za-z0-9_$-]+)|\[([0-9]+)\]', 'g') s) as v) r)
    end as n
  ) p;
$$;
comment on function workflows_private.resolve_flow_priority(jsonb, jsonb) is 'A run''s priority (0 to 100) from the flow control''s number or reference; 0 when it resolves to no number.';

revoke execute on function
  workflows_private.resolve_flow_template(text, jsonb),
  workflows_private.resolve_flow_priority(jsonb, jsonb)
  from public, anon, authenticated, service_role;
