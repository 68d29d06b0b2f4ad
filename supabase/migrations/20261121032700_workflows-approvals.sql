-- Workflow service: approval blocks, steps that wait for people (issue 31 part 3; docs/workflow-runs.md
-- "Approvals", docs/workflow-blocks.md "Approval").
--
-- - workflows_private.run_approvals: one row per approval block instance of an async run: what it
--   asks (message, form fields), of how many (quorum), until when, and the decision once made.
-- - workflows_private.run_approval_answers: one row per approver (their e-mail, the digest of their
--   current link's token) and per programmatic answer, with what each answered.
-- - open_workflow_approval: the worker's call when an approval block runs (idempotent per block
--   instance); the run then parks until the timeout (park_workflow_run), holding nothing.
-- - respond_workflow_approval (the page), resume_workflow_run (POST /api/v2/runs/{id}/resume) and
--   expire_workflow_approvals (pg_cron, and open at the timeout) decide; deciding wakes the parked
--   run at once (its delayed queue message made visible), and the block replays with the decision.
-- - e-mails go through the pgmq queue workflow_approval_mail (first request and reminders), drained
--   by the workflow-approval-mail function: each e-mail issues fresh 256-bit tokens, kept here only as
--   SHA-256 digests (the portal's digest function), so the newest e-mail holds the working link.

create table workflows_private.run_approvals (
  id uuid primary key default gen_random_uuid(),
  execution_id uuid not null references public.workflow_executions (id) on delete cascade,
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  block_key text not null,
  block_id text not null,
  block_name text not null,
  message text not null,
  fields jsonb not null default '[]'::jsonb,
  quorum integer not null check (quorum >= 1),
  default_outcome text not null check (default_outcome in ('approve', 'reject', 'fail')),
  reminder_minutes integer[] not null default '{}',
  next_reminder_at timestamptz,
  requested_at timestamptz not null,
  expires_at timestamptz not null,
  decision text check (decision in ('approved', 'rejected', 'failed')),
  decided_by text check (decided_by in ('quorum', 'rejection', 'timeout', 'api')),
  decided_at timestamptz,
  unique (execution_id, block_key)
);
comment on table workflows_private.run_approvals is 'An approval block instance of an async run: what it asks, of how many, until when, and its decision. Only the approval functions touch it.';
comment on column workflows_private.run_approvals.block_key is 'The block instance (block id plus iteration path), as checkpoints name it; the resume API''s contextId.';
comment on column workflows_private.run_approvals.message is 'The message the approvers read, references already resolved.';
comment on column workflows_private.run_approvals.fields is 'The form fields asked for: [{name, label, type: text | number | boolean, required}].';
comment on column workflows_private.run_approvals.quorum is 'How many approvals approve (n of m).';
comment on column workflows_private.run_approvals.default_outcome is 'What the timeout decides: approve, reject or fail.';
comment on column workflows_private.run_approvals.reminder_minutes is 'Minutes before the timeout at which reminders go out, largest first.';
comment on column workflows_private.run_approvals.next_reminder_at is 'When the next reminder is due; null when none is left.';
comment on column workflows_private.run_approvals.expires_at is 'The timeout: links expire and the default outcome applies then.';
comment on column workflows_private.run_approvals.decision is 'approved, rejected, or failed (a timeout whose default outcome is fail); null while waiting.';
comment on column workflows_private.run_approvals.decided_by is 'quorum (enough approvals), rejection (quorum out of reach), timeout, or api (a program answered).';
create index run_approvals_waiting on workflows_private.run_approvals (expires_at) where decision is null;
create index run_approvals_reminders on workflows_private.run_approvals (next_reminder_at) where decision is null and next_reminder_at is not null;
alter table workflows_private.run_approvals enable row level security;

create table workflows_private.run_approval_answers (
  id bigint generated always as identity primary key,
  approval_id uuid not null references workflows_private.run_approvals (id) on delete cascade,
  email text,
  token_digest bytea constraint run_approval_answers_token_digest_key unique,
  via text,
  answer text check (answer in ('approve', 'reject')),
  comment text,
  fields jsonb,
  answered_at timestamptz,
  unique (approval_id, email)
);
comment on table workflows_private.run_approval_answers is 'The approvers of an approval (one row per e-mail, with its current link''s token digest) and the answers given, through a link or the API (email null).';
comment on column workflows_private.run_approval_answers.token_digest is 'sha256 of the approver''s current token; each e-mail replaces it. The only trace of the token.';
comment on column workflows_private.run_approval_answers.via is 'link or api; null until answered.';
comment on column workflows_private.run_approval_answers.answer is 'approve or reject; null until answered (a link answers once).';
alter table workflows_private.run_approval_answers enable row level security;
revoke all on workflows_private.run_approvals, workflows_private.run_approval_answers from public, anon, authenticated, service_role;

select pgmq.create('workflow_approval_mail');
insert into platform.queue_workers (queue_name, function_name, batch_size, visibility_timeout)
values ('workflow_approval_mail', 'workflow-approval-mail', 10, 60)
on conflict (queue_name) do nothing;

-- Deciding ---------------------------------------------------------------------------------------

/**
 * An approval's output, as the block returns it: {decision, decidedBy, decidedAt, approvals[]}, each
 * answer {email (null for a program), via, decision: approve | reject, answeredAt, comment, fields}.
 */
create function workflows_private.approval_output(p_approval workflows_private.run_approvals)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select jsonb_build_object(
    'decision', p_approval.decision,
    'decidedBy', p_approval.decided_by,
    'decidedAt', p_approval.decided_at,
    'approvals', coalesce((select jsonb_agg(jsonb_build_object(
        'email', a.email, 'via', a.via, 'decision', a.answer, 'answeredAt', a.answered_at,
        'comment', a.comment, 'fields', coalesce(a.fields, '{}'::jsonb)) order by a.answered_at, a.id)
      from workflows_private.run_approval_answers a where a.approval_id = p_approval.id and a.answer is not null), '[]'::jsonb));
$$;
comment on function workflows_private.approval_output(workflows_private.run_approvals) is 'The approval block''s output: decision, decidedBy, decidedAt and every answer.';

/**
 * Records the decision of a waiting approval and wakes its run: a parked run's lease ends now and its
 * delayed queue message becomes visible, so the next claim resumes it at once (the poller sees it
 * within a second). A run not parked yet (its worker between open and park) is woken by
 * park_workflow_run, which parks a run with a decided approval for no time at all.
 */
create function workflows_private.decide_approval(p_approval_id uuid, p_decision text, p_decided_by text, p_now timestamptz)
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_run public.workflow_executions;
begin
  update workflows_private.run_approvals a set decision = p_decision, decided_by = p_decided_by, decided_at = p_now, next_reminder_at = null
  where a.id = p_approval_id and a.decision is null;
  select e.* into v_run from public.workflow_executions e
  join workflows_private.run_approvals a on a.execution_id = e.id where a.id = p_approval_id for update of e;
  if v_run.status = 'running' and v_run.parked_until is not null then
    -- The real now, not p_now: a claim compares the lease with its own clock.
    update public.workflow_executions e set parked_until = null, lease_expires_at = now() where e.id = v_run.id;
    if v_run.queue_message_id is not null then
      perform pgmq.set_vt('workflow_runs', v_run.queue_message_id, 0);
    end if;
  end if;
end;
$$;
comment on function workflows_private.decide_approval(uuid, text, text, timestamptz) is 'Decides a waiting approval and wakes its parked run at once.';

/** The decision a timeout makes: the block''s default outcome. */
create function workflows_private.timeout_decision(p_default_outcome text)
returns text
language sql
immutable
set search_path = ''
as $$
  select case p_default_outcome when 'approve' then 'approved' when 'reject' then 'rejected' else 'failed' end;
$$;
comment on function workflows_private.timeout_decision(text) is 'approved, rejected or failed: what an approval''s timeout decides.';

/**
 * Decides the approval when its answers settle it: approved once `quorum` approvals are in, rejected
 * once so many rejected that the quorum is out of reach (more than m - n). Else nothing.
 */
create function workflows_private.settle_approval(p_approval workflows_private.run_approvals, p_now timestamptz)
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_approvers integer;
  v_approved integer;
  v_rejected integer;
begin
  select count(*) filter (where a.email is not null), count(*) filter (where a.answer = 'approve'), count(*) filter (where a.answer = 'reject')
  into v_approvers, v_approved, v_rejected
  from workflows_private.run_approval_answers a where a.approval_id = p_approval.id;
  if v_approved >= p_approval.quorum then
    perform workflows_private.decide_approval(p_approval.id, 'approved', 'quorum', p_now);
  elsif v_rejected > v_approvers - p_approval.quorum then
    perform workflows_private.decide_approval(p_approval.id, 'rejected', 'rejection', p_now);
  end if;
end;
$$;
comment on function workflows_private.settle_approval(workflows_private.run_approvals, timestamptz) is 'Approves at the quorum, rejects once the quorum is out of reach.';

/**
 * Why an answer's form values do not fit the approval's fields, or null: every name is a field,
 * values have the field's type (text at most 2,000 characters), required fields are present.
 */
create function workflows_private.approval_fields_problem(p_fields jsonb, p_values jsonb)
returns text
language plpgsql
immutable
set search_path = ''
as $$
declare
  v_field jsonb;
  v_name text;
  v_value jsonb;
begin
  if p_values is null then
    p_values := '{}'::jsonb;
  end if;
  if jsonb_typeof(p_values) <> 'object' then
    return 'fields must be an object of the form''s values';
  end if;
  for v_name in select jsonb_object_keys(p_values) loop
    if not exists (select 1 from jsonb_array_elements(p_fields) f where f ->> 'name' = v_name) then
      return format('the form has no field "%s"', v_name);
    end if;
  end loop;
  for v_field in select * from jsonb_array_elements(p_fields) loop
    v_value := p_values -> (v_field ->> 'name');
    if v_value is null or v_value = 'null'::jsonb or v_value = '""'::jsonb then
      if coalesce((v_field ->> 'required')::boolean, false) then
        return format('field "%s" is required', v_field ->> 'name');
      end if;
    elsif (v_field ->> 'type') = 'text' and (jsonb_typeof(v_value) <> 'string' or length(v_value #>> '{}') > 2000) then
      return format('field "%s" takes text of at most 2000 characters', v_field ->> 'name');
    elsif (v_field ->> 'type') = 'number' and jsonb_typeof(v_value) <> 'number' then
      return format('field "%s" takes a number', v_field ->> 'name');
    elsif (v_field ->> 'type') = 'boolean' and jsonb_typeof(v_value) <> 'boolean' then
      return format('field "%s" takes true or false', v_field ->> 'name');
    end if;
  end loop;
  return null;
end;
$$;
comment on function workflows_private.approval_fields_problem(jsonb, jsonb) is 'Checks an answer''s form values against the approval''s fields; null when they fit.';

-- The worker ------------------------------------------------------------------------------------

/**
 * The runtime's call when an approval block instance runs (`p_attempt` holds the run): an async run's
 * worker, or a sync or streamed request, whose run is then handed to the async path.
 * The first call opens the approval: approvers are `p_request.approvers` (e-mail addresses) or the
 * members of the run's workspace with `approverRole` or above; quorum at most their number; the
 * e-mail goes out through workflow_approval_mail. Later calls (the run resumed) find it: decided,
 * or past its timeout (decided now, by the default outcome), or still waiting. Answers
 * {decided: true, output}, {decided: false, expiresAt}, {refused: <why>} for a request that cannot be
 * asked (no approver, quorum above their number), or {alive: false} for a stale attempt.
 */
create function public.open_workflow_approval(p_execution_id uuid, p_attempt integer, p_key text, p_block jsonb, p_request jsonb, p_now timestamptz default now())
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_run public.workflow_executions;
  v_approval workflows_private.run_approvals;
  v_emails text[];
  v_quorum integer := coalesce((p_request ->> 'quorum')::integer, 1);
  v_timeout integer := coalesce((p_request ->> 'timeoutMinutes')::integer, 1440);
  v_reminders integer[];
begin
  select * into v_run from public.workflow_executions e where e.id = p_execution_id;
  -- A sync run opens its approval too, and is then handed to the async path (pause_sync_workflow_run).
  if not found or v_run.status <> 'running' or v_run.attempt <> p_attempt then
    return jsonb_build_object('alive', false);
  end if;
  select * into v_approval from workflows_private.run_approvals a where a.execution_id = p_execution_id and a.block_key = p_key for update;
  if found then
    if v_approval.decision is null and p_now >= v_approval.expires_at then
      perform workflows_private.decide_approval(v_approval.id, workflows_private.timeout_decision(v_approval.default_outcome), 'timeout', p_now);
      select * into v_approval from workflows_private.run_approvals a where a.id = v_approval.id;
    end if;
    if v_approval.decision is not null then
      return jsonb_build_object('decided', true, 'output', workflows_private.approval_output(v_approval));
    end if;
    return jsonb_build_object('decided', false, 'expiresAt', v_approval.expires_at);
  end if;

  if v_timeout not between 1 and 43200 or v_quorum not between 1 and 20 then
    return jsonb_build_object('refused', 'timeoutMinutes is 1 to 43200 and quorum 1 to 20');
  end if;
  if p_request ? 'approverRole' then
    select coalesce(array_agg(distinct lower(u.email::text)), '{}') into v_emails
    from public.workspace_members m join auth.users u on u.id = m.user_id
    where m.workspace_id = v_run.workspace_id and u.email is not null
      and workflows_private.role_rank(m.role) >= workflows_private.role_rank(p_request ->> 'approverRole');
  else
    select coalesce(array_agg(distinct lower(trim(v.value))), '{}') into v_emails from jsonb_array_elements_text(coalesce(p_request -> 'approvers', '[]'::jsonb)) v;
    if exists (select 1 from unnest(v_emails) e where e !~ '^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$' or length(e) > 254) then
      return jsonb_build_object('refused', 'every approver must be an e-mail address (at most 254 characters)');
    end if;
  end if;
  if cardinality(v_emails) = 0 then
    return jsonb_build_object('refused', 'the approval has no approver (no e-mail address, or nobody in the workspace with that role)');
  end if;
  if cardinality(v_emails) > 20 then
    return jsonb_build_object('refused', format('the approval has %s approvers; at most 20', cardinality(v_emails)));
  end if;
  if v_quorum > cardinality(v_emails) then
    return jsonb_build_object('refused', format('quorum %s is more than the %s approvers', v_quorum, cardinality(v_emails)));
  end if;
  select coalesce(array_agg(r order by r desc), '{}') into v_reminders
  from (select distinct r::integer as r from jsonb_array_elements_text(coalesce(p_request -> 'reminderMinutesBefore', '[]'::jsonb)) v(r)) x
  where r between 1 and v_timeout - 1;

  insert into workflows_private.run_approvals (execution_id, workspace_id, block_key, block_id, block_name, message, fields, quorum,
    default_outcome, reminder_minutes, next_reminder_at, requested_at, expires_at)
  values (p_execution_id, v_run.workspace_id, p_key, p_block ->> 'id', p_block ->> 'name', p_request ->> 'message', coalesce(p_request -> 'fields', '[]'::jsonb),
    v_quorum, coalesce(p_request ->> 'defaultOutcome', 'reject'), v_reminders,
    case when cardinality(v_reminders) > 0 then p_now + make_interval(mins => v_timeout - v_reminders[1]) end,
    p_now, p_now + make_interval(mins => v_timeout))
  returning * into v_approval;
  insert into workflows_private.run_approval_answers (approval_id, email) select v_approval.id, e from unnest(v_emails) e;
  perform pgmq.send('workflow_approval_mail', jsonb_build_object('approvalId', v_approval.id, 'kind', 'request'));
  return jsonb_build_object('decided', false, 'expiresAt', v_approval.expires_at);
end;
$$;
comment on function public.open_workflow_approval(uuid, integer, text, jsonb, jsonb, timestamptz) is 'Opens (or finds) the approval of an approval block instance: its decision, or when it expires. Service role only.';

-- E-mails ---------------------------------------------------------------------------------------

/**
 * Claims up to `p_batch_size` approval e-mails (the first request, or a reminder) and issues each
 * waiting approver a fresh 256-bit token, returned in clear this once: only its digest is kept,
 * replacing the previous one, so the newest e-mail holds the working link. Approvers who answered
 * get nothing; a message whose approval is decided or whose run ended is dropped. Answers
 * [{messageId, kind, approvalId, workflowName, blockName, message, expiresAt, recipients: [{email, token}]}].
 */
create function public.claim_workflow_approval_mail(p_batch_size integer, p_visibility_seconds integer)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_message record;
  v_approval workflows_private.run_approvals;
  v_workflow_name text;
  v_recipients jsonb;
  v_result jsonb := '[]'::jsonb;
begin
  for v_message in select * from pgmq.read('workflow_approval_mail', p_visibility_seconds, least(greatest(p_batch_size, 1), 100)) loop
    select a.* into v_approval from workflows_private.run_approvals a
    join public.workflow_executions e on e.id = a.execution_id
    where a.id = (v_message.message ->> 'approvalId')::uuid and a.decision is null and e.status = 'running'
    for update of a;
    if not found then
      perform pgmq.delete('workflow_approval_mail', v_message.msg_id);
      continue;
    end if;
    with issued as (
      select a.id, public.generate_approval_token() as token from workflows_private.run_approval_answers a
      where a.approval_id = v_approval.id and a.email is not null and a.answer is null
    ), stored as (
      update workflows_private.run_approval_answers a set token_digest = portal_private.approval_token_digest(i.token)
      from issued i where a.id = i.id returning a.email, i.token
    )
    select coalesce(jsonb_agg(jsonb_build_object('email', s.email, 'token', s.token) order by s.email), '[]'::jsonb) into v_recipients from stored s;
    select w.name into v_workflow_name from public.workflow_executions e join public.workflows w on w.id = e.workflow_id where e.id = v_approval.execution_id;
    v_result := v_result || jsonb_build_array(jsonb_build_object(
      'messageId', v_message.msg_id, 'kind', v_message.message ->> 'kind', 'approvalId', v_approval.id,
      'workflowName', v_workflow_name, 'blockName', v_approval.block_name, 'message', v_approval.message,
      'expiresAt', v_approval.expires_at, 'recipients', v_recipients));
  end loop;
  return v_result;
end;
$$;
comment on function public.claim_workflow_approval_mail(integer, integer) is 'Claims approval e-mails to send, with fresh tokens for the approvers who have not answered (only digests are kept). Service role only.';

/** Deletes approval e-mail messages once sent; an unsent one comes back after its visibility timeout. */
create function public.ack_workflow_approval_mail(p_message_ids bigint[])
returns void
language sql
security definer
set search_path = ''
as $$
  select pgmq.delete('workflow_approval_mail', p_message_ids);
$$;
comment on function public.ack_workflow_approval_mail(bigint[]) is 'Deletes sent approval e-mail messages. Service role only.';

-- The page --------------------------------------------------------------------------------------

/**
 * The answer row of a token (by digest) and its approval, both locked, and whether the link can
 * answer: open, used (this link answered), expired (past the timeout), closed (decided, or the run
 * ended). No row when no approver holds the token (unknown, or replaced by a newer e-mail).
 */
create function workflows_private.approval_token_state(p_token text, p_now timestamptz, out answer_id bigint, out approval_id uuid, out state text)
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_answer workflows_private.run_approval_answers;
  v_approval workflows_private.run_approvals;
  v_status public.workflow_run_status;
begin
  select a.* into v_answer from workflows_private.run_approval_answers a where a.token_digest = portal_private.approval_token_digest(p_token) for update;
  if not found then
    return;
  end if;
  select p.* into v_approval from workflows_private.run_approvals p where p.id = v_answer.approval_id for update;
  select e.status into v_status from public.workflow_executions e where e.id = v_approval.execution_id;
  answer_id := v_answer.id;
  approval_id := v_approval.id;
  state := case
    when v_answer.answer is not null then 'used'
    when v_approval.decision is not null or v_status <> 'running' then 'closed'
    when p_now >= v_approval.expires_at then 'expired'
    else 'open' end;
end;
$$;
comment on function workflows_private.approval_token_state(text, timestamptz) is 'An approval link''s answer row, approval and state (open, used, expired, closed).';

/**
 * What the approval page shows for a token: {state, workflowName, blockName, message, fields,
 * quorum, approvers, expiresAt} (never the approver's e-mail, which they must type), or null for a
 * token no approver holds.
 */
create function public.workflow_approval_for_token(p_token text, p_now timestamptz default now())
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_found record;
  v_approval workflows_private.run_approvals;
begin
  select * into v_found from workflows_private.approval_token_state(p_token, p_now);
  if v_found.state is null then
    return null;
  end if;
  select * into v_approval from workflows_private.run_approvals a where a.id = v_found.approval_id;
  return jsonb_build_object('state', v_found.state,
    'workflowName', (select w.name from public.workflow_executions e join public.workflows w on w.id = e.workflow_id where e.id = v_approval.execution_id),
    'blockName', v_approval.block_name, 'message', v_approval.message, 'fields', v_approval.fields,
    'quorum', v_approval.quorum, 'expiresAt', v_approval.expires_at,
    'approvers', (select count(*) from workflows_private.run_approval_answers a where a.approval_id = v_approval.id and a.email is not null));
end;
$$;
comment on function public.workflow_approval_for_token(text, timestamptz) is 'The approval page''s view of a link: its state and what it asks. Service role only.';

/**
 * An approver's answer through their link: `p_email` must be the approver's (case and spaces
 * ignored), `p_decision` approve or reject, `p_fields` fit the form. Answers {outcome}: recorded
 * (with `decision` when this answer decided the approval), or unknown_token, used, expired, closed,
 * email_mismatch, invalid_decision, invalid_fields (with `problem`).
 */
create function public.respond_workflow_approval(p_token text, p_email text, p_decision text, p_comment text default null, p_fields jsonb default '{}'::jsonb, p_now timestamptz default now())
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_found record;
  v_approval workflows_private.run_approvals;
  v_problem text;
  v_decision text;
begin
  select * into v_found from workflows_private.approval_token_state(p_token, p_now);
  if v_found.state is null then
    return jsonb_build_object('outcome', 'unknown_token');
  elsif v_found.state <> 'open' then
    return jsonb_build_object('outcome', v_found.state);
  elsif lower(trim(coalesce(p_email, ''))) <> (select a.email from workflows_private.run_approval_answers a where a.id = v_found.answer_id) then
    return jsonb_build_object('outcome', 'email_mismatch');
  elsif p_decision is null or p_decision not in ('approve', 'reject') then
    return jsonb_build_object('outcome', 'invalid_decision');
  elsif length(coalesce(p_comment, '')) > 2000 then
    return jsonb_build_object('outcome', 'invalid_fields', 'problem', 'a comment is at most 2000 characters');
  end if;
  select * into v_approval from workflows_private.run_approvals a where a.id = v_found.approval_id;
  v_problem := workflows_private.approval_fields_problem(v_approval.fields, p_fields);
  if v_problem is not null then
    return jsonb_build_object('outcome', 'invalid_fields', 'problem', v_problem);
  end if;
  update workflows_private.run_approval_answers a set via = 'link', answer = p_decision, comment = nullif(p_comment, ''),
    fields = coalesce(p_fields, '{}'::jsonb), answered_at = p_now
  where a.id = v_found.answer_id;
  perform workflows_private.settle_approval(v_approval, p_now);
  select a.decision into v_decision from workflows_private.run_approvals a where a.id = v_approval.id;
  return jsonb_build_object('outcome', 'recorded', 'decision', v_decision);
end;
$$;
comment on function public.respond_workflow_approval(text, text, text, text, jsonb, timestamptz) is 'Records an approver''s answer through their link and decides the approval when it settles it. Service role only.';

-- The API ---------------------------------------------------------------------------------------

/**
 * POST /api/v2/runs/{runId}/resume (and Sim's /api/v2/workflows/{id}/runs/{runId}/resume): a program
 * with an API key that may read the run answers its waiting approval, deciding it at once
 * (`p_input` {decision: approve | reject, comment?, fields?}); `p_context_id` names the approval
 * block instance when several wait. Spends a logs API token. 404 for a run the key may not read
 * (or another workflow's), 409 NOT_PAUSED for a run with no waiting approval, 400 for bad input.
 * Answers {status: 200, body: {data: {runId, decision}}, rateLimit}.
 */
create function public.resume_workflow_run(p_api_key text, p_run_id uuid, p_workflow_id uuid, p_context_id text, p_input jsonb, p_now timestamptz default now())
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_caller workflows_private.logs_caller;
  v_run public.workflow_executions;
  v_approval workflows_private.run_approvals;
  v_waiting integer;
  v_decision text := p_input ->> 'decision';
  v_problem text;
begin
  v_caller := workflows_private.admit_logs_request(p_api_key, now());
  if v_caller.refusal is not null then
    return v_caller.refusal;
  end if;
  v_run := workflows_private.readable_run(v_caller, p_run_id);
  if v_run.id is null or v_run.workflow_id <> coalesce(p_workflow_id, v_run.workflow_id) then
    return workflows_private.missing_run_refusal(v_caller.key, null, p_run_id, p_workflow_id,
      workflows_private.refusal(404, 'NOT_FOUND', format('Run %s not found', p_run_id), jsonb_build_object('rateLimit', v_caller.rate)));
  end if;
  select count(*) into v_waiting from workflows_private.run_approvals a
  join public.workflow_executions e on e.id = a.execution_id
  where a.execution_id = v_run.id and a.decision is null and e.status = 'running' and (p_context_id is null or a.block_key = p_context_id);
  if v_waiting = 0 then
    return workflows_private.refusal(409, 'NOT_PAUSED', format('Run %s is not waiting for an approval%s', p_run_id,
      case when p_context_id is not null then format(' at %s', p_context_id) else '' end), jsonb_build_object('rateLimit', v_caller.rate));
  elsif v_waiting > 1 then
    return workflows_private.refusal(400, 'INVALID_BODY', 'several approvals wait: name one with contextId', jsonb_build_object('rateLimit', v_caller.rate));
  end if;
  select a.* into v_approval from workflows_private.run_approvals a
  where a.execution_id = v_run.id and a.decision is null and (p_context_id is null or a.block_key = p_context_id) for update;
  if v_decision is null or v_decision not in ('approve', 'reject') then
    return workflows_private.refusal(400, 'INVALID_BODY', 'input.decision must be approve or reject', jsonb_build_object('rateLimit', v_caller.rate));
  end if;
  if jsonb_typeof(p_input -> 'comment') not in ('string', 'null') or length(coalesce(p_input ->> 'comment', '')) > 2000 then
    return workflows_private.refusal(400, 'INVALID_BODY', 'input.comment is text of at most 2000 characters', jsonb_build_object('rateLimit', v_caller.rate));
  end if;
  v_problem := workflows_private.approval_fields_problem(v_approval.fields, p_input -> 'fields');
  if v_problem is not null then
    return workflows_private.refusal(400, 'INVALID_BODY', 'input.' || v_problem, jsonb_build_object('rateLimit', v_caller.rate));
  end if;
  insert into workflows_private.run_approval_answers (approval_id, email, via, answer, comment, fields, answered_at)
  values (v_approval.id, null, 'api', v_decision, nullif(p_input ->> 'comment', ''), coalesce(p_input -> 'fields', '{}'::jsonb), p_now);
  perform workflows_private.decide_approval(v_approval.id, case v_decision when 'approve' then 'approved' else 'rejected' end, 'api', p_now);
  return jsonb_build_object('status', 200, 'rateLimit', v_caller.rate,
    'body', jsonb_build_object('data', jsonb_build_object('runId', v_run.id, 'contextId', v_approval.block_key,
      'decision', case v_decision when 'approve' then 'approved' else 'rejected' end)));
end;
$$;
comment on function public.resume_workflow_run(text, uuid, uuid, text, jsonb, timestamptz) is 'POST /api/v2/runs/{runId}/resume: a program answers a run''s waiting approval, deciding it; spends a logs API token. Service role only.';

-- The clock -------------------------------------------------------------------------------------

/**
 * Decides every waiting approval whose timeout has come by its default outcome, waking its run
 * (pg_cron, every minute; the run's delayed message also comes at the timeout, and open decides
 * then too). Takes the time, so tests move the clock. Answers how many it decided.
 */
create function public.expire_workflow_approvals(p_now timestamptz default now())
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_approval workflows_private.run_approvals;
  v_count integer := 0;
begin
  for v_approval in select * from workflows_private.run_approvals a where a.decision is null and a.expires_at <= p_now for update skip locked loop
    perform workflows_private.decide_approval(v_approval.id, workflows_private.timeout_decision(v_approval.default_outcome), 'timeout', p_now);
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$;
comment on function public.expire_workflow_approvals(timestamptz) is 'Decides timed-out approvals by their default outcome and wakes their runs (pg_cron every minute).';

/**
 * Queues the reminders that are due (an e-mail to each approver who has not answered, with a fresh
 * link) and moves each approval to its next reminder (pg_cron, every minute). Answers how many.
 */
create function public.remind_workflow_approvals(p_now timestamptz default now())
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_approval workflows_private.run_approvals;
  v_count integer := 0;
begin
  for v_approval in select * from workflows_private.run_approvals a
    where a.decision is null and a.next_reminder_at <= p_now and a.expires_at > p_now for update skip locked loop
    perform pgmq.send('workflow_approval_mail', jsonb_build_object('approvalId', v_approval.id, 'kind', 'reminder'));
    update workflows_private.run_approvals a set next_reminder_at = (
      select min(a.expires_at - make_interval(mins => r)) from unnest(a.reminder_minutes) r where a.expires_at - make_interval(mins => r) > p_now)
    where a.id = v_approval.id;
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$;
comment on function public.remind_workflow_approvals(timestamptz) is 'Queues due approval reminders and schedules the next (pg_cron every minute).';

select cron.schedule('workflows-expire-approvals', '* * * * *', $$select public.expire_workflow_approvals()$$);
select cron.schedule('workflows-remind-approvals', '* * * * *', $$select public.remind_workflow_approvals()$$);

-- The dashboard ---------------------------------------------------------------------------------

/** The approvals waiting for people, oldest first: for the local dashboard. */
create function public.waiting_workflow_approvals(p_limit integer default 100)
returns jsonb
language sql
stable
security definer
set search_path = ''
as $$
  select coalesce(jsonb_agg(x.item order by x.requested_at), '[]'::jsonb) from (
    select a.requested_at, jsonb_build_object('workflowId', e.workflow_id, 'workflowName', w.name, 'runId', a.execution_id,
      'blockId', a.block_id, 'blockName', a.block_name, 'waitingSince', a.requested_at, 'expiresAt', a.expires_at, 'quorum', a.quorum,
      'approvers', (select count(*) from workflows_private.run_approval_answers r where r.approval_id = a.id and r.email is not null),
      'approvals', (select count(*) from workflows_private.run_approval_answers r where r.approval_id = a.id and r.answer = 'approve')) as item
    from workflows_private.run_approvals a
    join public.workflow_executions e on e.id = a.execution_id and e.status = 'running'
    join public.workflows w on w.id = e.workflow_id
    where a.decision is null
    order by a.requested_at
    limit least(greatest(coalesce(p_limit, 100), 1), 1000)) x;
$$;
comment on function public.waiting_workflow_approvals(integer) is 'The approvals waiting for people (workflow, run, block, since, expires), for the local dashboard. Service role only.';

-- Access ----------------------------------------------------------------------------------------

revoke execute on function
  workflows_private.approval_output(workflows_private.run_approvals),
  workflows_private.decide_approval(uuid, text, text, timestamptz),
  workflows_private.timeout_decision(text),
  workflows_private.settle_approval(workflows_private.run_approvals, timestamptz),
  workflows_private.approval_fields_problem(jsonb, jsonb),
  workflows_private.approval_token_state(text, timestamptz),
  public.open_workflow_approval(uuid, integer, text, jsonb, jsonb, timestamptz),
  public.claim_workflow_approval_mail(integer, integer),
  public.ack_workflow_approval_mail(bigint[]),
  public.workflow_approval_for_token(text, timestamptz),
  public.respond_workflow_approval(text, text, text, text, jsonb, timestamptz),
  public.resume_workflow_run(text, uuid, uuid, text, jsonb, timestamptz),
  public.expire_workflow_approvals(timestamptz),
  public.remind_workflow_approvals(timestamptz),
  public.waiting_workflow_approvals(integer)
  from public, anon, authenticated, service_role;
grant execute on function
  public.open_workflow_approval(uuid, integer, text, jsonb, jsonb, timestamptz),
  public.claim_workflow_approval_mail(integer, integer),
  public.ack_workflow_approval_mail(bigint[]),
  public.workflow_approval_for_token(text, timestamptz),
  public.respond_workflow_approval(text, text, text, text, jsonb, timestamptz),
  public.resume_workflow_run(text, uuid, uuid, text, jsonb, timestamptz),
  public.expire_workflow_approvals(timestamptz),
  public.remind_workflow_approvals(timestamptz),
  public.waiting_workflow_approvals(integer)
  to service_role;
