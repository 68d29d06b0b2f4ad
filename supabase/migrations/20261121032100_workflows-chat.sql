-- Workflow service, part 5: chat deployments.
--
-- deploy_chat gives a deployed workflow (one with a chat trigger) an identifier and a URL; the
-- `chat` edge function serves its page and its endpoint, where a message and a conversation id
-- start a run of the active deployment (`<chat.message>`, `<chat.conversationId>`, `<chat.history>`)
-- whose chosen output streams back as Server-Sent Events. Who may talk to it:
-- - public: anyone with the URL;
-- - password: the password (stored as a bcrypt hash, never readable) opens a session; 5 wrong
--   passwords from one client address within 15 minutes lock that address out for 15 minutes;
-- - email: an allowed address (listed, or its domain as `@domain`) receives a 6-digit code, valid
--   15 minutes, at most 5 attempts; the 5th wrong attempt voids it and locks the address out for 15
--   minutes; an address gets at most 3 codes in 15 minutes.
-- Sessions are signed cookies made by the edge function (HMAC with a server secret); they carry
-- the chat's auth_version, which every change of its access settings bumps, so a changed password
-- or allow-list ends the sessions made under the old one.
--
-- Everything the edge function calls is security definer, in public and executable by the service
-- role only; editors manage chats with deploy_chat / undeploy_chat and read them (never the
-- password hash) through the data API.

create type public.chat_auth_type as enum ('public', 'password', 'email');
comment on type public.chat_auth_type is 'Who may use a chat deployment: anyone, the holders of its password, or allowed e-mail addresses (one-time codes).';

create table workflows_private.settings (
  name text primary key,
  value text not null
);
comment on table workflows_private.settings is 'Operator settings of the workflow service (not secret): chat_url_template.';
comment on column workflows_private.settings.name is 'The setting.';
comment on column workflows_private.settings.value is 'Its value.';
insert into workflows_private.settings (name, value) values ('chat_url_template', 'http://127.0.0.1:54321/chat/{identifier}');

create table public.chat_deployments (
  id uuid primary key default gen_random_uuid(),
  workflow_id uuid not null unique,
  workspace_id uuid not null,
  identifier text not null unique check (identifier ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
  title text not null check (char_length(title) between 1 and 200 and shared_private.is_plain_text(title)),
  description text check (char_length(description) <= 2000 and shared_private.is_plain_text(description, true)),
  welcome_message text check (char_length(welcome_message) <= 2000 and shared_private.is_plain_text(welcome_message, true)),
  auth_type public.chat_auth_type not null default 'public',
  password_hash text,
  allowed_emails text[] not null default '{}',
  outputs text[] not null default '{}',
  auth_version integer not null default 1,
  created_by uuid references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (workspace_id, workflow_id) references public.workflows (workspace_id, id) on delete cascade
);
comment on table public.chat_deployments is 'A workflow''s chat: its identifier and URL, title, who may use it and which outputs it shows. Written by deploy_chat / undeploy_chat; members read it (never the password hash).';
comment on column public.chat_deployments.workflow_id is 'The workflow (one chat each); its active deployment answers.';
comment on column public.chat_deployments.workspace_id is 'Its workspace (row-level security reads it).';
comment on column public.chat_deployments.identifier is 'The chat''s name in its URL: lower-case letters, digits and hyphens, 1 to 63, unique.';
comment on column public.chat_deployments.title is 'Shown at the top of the chat page.';
comment on column public.chat_deployments.description is 'Shown under the title.';
comment on column public.chat_deployments.welcome_message is 'The first message the page shows.';
comment on column public.chat_deployments.auth_type is 'public, password or email.';
comment on column public.chat_deployments.password_hash is 'bcrypt hash of the password (password chats); no API role can read it.';
comment on column public.chat_deployments.allowed_emails is 'E-mail chats: the addresses (lower case) and @domains that may ask for a code.';
comment on column public.chat_deployments.outputs is 'The outputs the chat shows, as blockName.attribute (as execute''s selectedOutputs); empty: the run''s output.';
comment on column public.chat_deployments.auth_version is 'Bumped by every change of the access settings; sessions made under another version are refused.';
comment on column public.chat_deployments.created_by is 'Who deployed the chat.';
comment on column public.chat_deployments.created_at is 'When it was deployed.';
comment on column public.chat_deployments.updated_at is 'Last change.';
create index chat_deployments_workspace_id_idx on public.chat_deployments (workspace_id);

create trigger chat_deployments_touch_updated_at before update on public.chat_deployments
  for each row execute function workflows_private.touch_updated_at();

create table workflows_private.chat_lockouts (
  chat_id uuid not null references public.chat_deployments (id) on delete cascade,
  subject text not null,
  failures integer not null default 0,
  window_started_at timestamptz not null,
  locked_until timestamptz,
  primary key (chat_id, subject)
);
comment on table workflows_private.chat_lockouts is 'Failed sign-ins per chat and subject (ip:<client address>, or chat for the whole chat), and lock-outs.';
comment on column workflows_private.chat_lockouts.subject is 'ip:<client address> (5 failures lock it out), or chat (25 failures from any addresses close the chat''s sign-ins).';
comment on column workflows_private.chat_lockouts.failures is 'Wrong passwords or codes in the current 15-minute window.';
comment on column workflows_private.chat_lockouts.window_started_at is 'When the window of failures began.';
comment on column workflows_private.chat_lockouts.locked_until is 'Until when the subject is locked out.';

create table workflows_private.chat_codes (
  chat_id uuid not null references public.chat_deployments (id) on delete cascade,
  email text not null,
  code_hash bytea not null,
  expires_at timestamptz not null,
  attempts integer not null default 0,
  created_at timestamptz not null,
  primary key (chat_id, email)
);
comment on table workflows_private.chat_codes is 'The live one-time code of an address for an e-mail chat (a new code replaces it), hashed.';
comment on column workflows_private.chat_codes.code_hash is 'sha256 of chat id, address and code.';
comment on column workflows_private.chat_codes.expires_at is '15 minutes after it was sent.';
comment on column workflows_private.chat_codes.attempts is 'Wrong attempts at this code so far (informational: the per-client and per-chat limits stop guessing, so another person''s wrong guesses never void it).';
comment on column workflows_private.chat_codes.email is 'The address, lower case.';
comment on column workflows_private.chat_codes.created_at is 'When it was sent.';

create table workflows_private.chat_code_sends (
  chat_id uuid not null references public.chat_deployments (id) on delete cascade,
  email text not null,
  sent_at timestamptz not null
);
comment on table workflows_private.chat_code_sends is 'Codes sent per allowed address, for the per-address send limit (3 in 15 minutes).';
comment on column workflows_private.chat_code_sends.email is 'The address, lower case.';
comment on column workflows_private.chat_code_sends.sent_at is 'When a code was sent.';
create index chat_code_sends_address_idx on workflows_private.chat_code_sends (chat_id, email, sent_at);

create table workflows_private.chat_turns (
  id bigint generated always as identity primary key,
  chat_id uuid not null references public.chat_deployments (id) on delete cascade,
  conversation_id text not null,
  subject text,
  message text not null,
  answer text not null,
  execution_id uuid,
  created_at timestamptz not null default now()
);
comment on table workflows_private.chat_turns is 'The turns of chat conversations (a message and the answer shown), read back as <chat.history>.';
comment on column workflows_private.chat_turns.conversation_id is 'The conversation id the page sends.';
comment on column workflows_private.chat_turns.subject is 'Who held the session: an e-mail address, "password", or null on public chats; a conversation stays with its subject.';
comment on column workflows_private.chat_turns.message is 'What the person wrote.';
comment on column workflows_private.chat_turns.answer is 'What the chat answered (the chosen output as text).';
comment on column workflows_private.chat_turns.execution_id is 'The run that answered.';
comment on column workflows_private.chat_turns.created_at is 'When.';
create index chat_turns_conversation_idx on workflows_private.chat_turns (chat_id, conversation_id, id);

-- Helpers ----------------------------------------------------------------------------------------

/** The public URL of a chat: the chat_url_template setting with its identifier filled in. */
create function workflows_private.chat_url(p_identifier text)
returns text
language sql
stable
security definer
set search_path = ''
as $$
  select replace(coalesce((select s.value from workflows_private.settings s where s.name = 'chat_url_template'),
    'http://127.0.0.1:54321/chat/{identifier}'), '{identifier}', p_identifier);
$$;
comment on function workflows_private.chat_url(text) is 'A chat''s URL from the chat_url_template setting.';

/** A chat deployment as the API shows it (never the password hash). */
create function workflows_private.chat_json(p_chat public.chat_deployments)
returns jsonb
language sql
stable
security definer
set search_path = ''
as $$
  select jsonb_build_object('id', p_chat.id, 'workflowId', p_chat.workflow_id, 'identifier', p_chat.identifier,
    'url', workflows_private.chat_url(p_chat.identifier), 'title', p_chat.title, 'description', p_chat.description,
    'welcomeMessage', p_chat.welcome_message, 'authType', p_chat.auth_type, 'allowedEmails', to_jsonb(p_chat.allowed_emails),
    'outputs', to_jsonb(p_chat.outputs), 'createdAt', p_chat.created_at, 'updatedAt', p_chat.updated_at);
$$;
comment on function workflows_private.chat_json(public.chat_deployments) is 'A chat deployment as JSON, with its URL and without its password hash.';

/** The chat trigger a state's runs start from: its first enabled chat_trigger block (by id), or null. */
create function workflows_private.chat_trigger_block(p_state jsonb)
returns text
language sql
immutable
set search_path = ''
as $$
  select b.key from jsonb_each(coalesce(p_state -> 'blocks', '{}'::jsonb)) b
  where b.value ->> 'type' = 'chat_trigger' and coalesce(b.value ->> 'enabled', 'true') <> 'false'
  order by b.key collate "C" limit 1;
$$;
comment on function workflows_private.chat_trigger_block(jsonb) is 'The id of a state''s first enabled chat_trigger block, or null.';

-- Managing chats ---------------------------------------------------------------------------------

/**
 * Creates or updates the chat of a deployed workflow (editors) and returns it with its URL. The
 * active deployment must have a chat trigger. `p_identifier`: lower-case letters, digits and
 * hyphens, unique (23505, HTTP 409, when taken). `p_auth_type` public, password (`p_password`, 8 to
 * 200 characters, required when the chat has none yet; null keeps the current one) or email
 * (`p_allowed_emails`: addresses or `@domain`s, at least one). `p_outputs`: blockName.attribute
 * entries naming blocks of the active deployment (empty: the run's output). Changing the access
 * settings ends existing sessions. Bad values raise 22023 (HTTP 400) saying which.
 */
create function public.deploy_chat(
  p_workflow_id uuid,
  p_identifier text,
  p_title text,
  p_auth_type text default 'public',
  p_password text default null,
  p_allowed_emails text[] default null,
  p_outputs text[] default null,
  p_description text default null,
  p_welcome_message text default null
)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_workflow public.workflows := workflows_private.lock_workflow_for_deployment(p_workflow_id, 'deploy chats');
  v_state jsonb;
  v_existing public.chat_deployments;
  v_chat public.chat_deployments;
  v_emails text[];
  v_entry text;
  v_hash text;
  v_names text[];
begin
  select d.state into v_state from public.workflow_deployments d where d.workflow_id = p_workflow_id and d.is_active;
  if v_state is null then
    raise exception 'Workflow "%" is not deployed: deploy it before giving it a chat', v_workflow.name using errcode = '22023';
  end if;
  if workflows_private.chat_trigger_block(v_state) is null then
    raise exception 'The active deployment of "%" has no enabled chat trigger (chat_trigger block): add one and deploy again', v_workflow.name using errcode = '22023';
  end if;
  if p_identifier is null or p_identifier !~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$' then
    raise exception 'identifier "%": use 1 to 63 lower-case letters, digits and hyphens, not starting or ending with a hyphen', coalesce(p_identifier, '') using errcode = '22023';
  end if;
  if p_auth_type is null or p_auth_type not in ('public', 'password', 'email') then
    raise exception 'auth type must be public, password or email' using errcode = '22023';
  end if;
  select * into v_existing from public.chat_deployments c where c.workflow_id = p_workflow_id for update;
  if exists (select 1 from public.chat_deployments c where c.identifier = p_identifier and c.workflow_id <> p_workflow_id) then
    raise exception 'The chat identifier "%" is taken: choose another', p_identifier using errcode = '23505';
  end if;

  v_hash := case when p_auth_type = 'password' then v_existing.password_hash end;
  if p_auth_type = 'password' and p_password is not null then
    if char_length(p_password) not between 8 and 200 then
      raise exception 'a chat password has 8 to 200 characters' using errcode = '22023';
    end if;
    v_hash := extensions.crypt(p_password, extensions.gen_salt('bf', 10));
  elsif p_auth_type = 'password' and v_hash is null then
    raise exception 'a password chat needs a password' using errcode = '22023';
  end if;

  v_emails := '{}'::text[];
  if p_auth_type = 'email' then
    foreach v_entry in array coalesce(p_allowed_emails, '{}') loop
      v_entry := lower(btrim(v_entry));
      if v_entry !~ '^([^@\s]+@|@)[^@\s]+\.[^@\s]+$' then
        raise exception 'allowed e-mail "%": give an address (ana@example.com) or a domain (@example.com)', v_entry using errcode = '22023';
      end if;
      v_emails := v_emails || v_entry;
    end loop;
    v_emails := array(select distinct e from unnest(v_emails) e order by e);
    if cardinality(v_emails) = 0 then
      raise exception 'an e-mail chat needs at least one allowed address or @domain' using errcode = '22023';
    end if;
  end if;

  v_names := array(select workflows_private.normalize_block_name(b.value ->> 'name') from jsonb_each(v_state -> 'blocks') b);
  foreach v_entry in array coalesce(p_outputs, '{}') loop
    if v_entry !~ '^[^.]+\.\S' or not (workflows_private.normalize_block_name(split_part(v_entry, '.', 1)) = any(v_names)) then
      raise exception 'output "%": name a block of the deployed workflow and one of its fields (blockName.attribute)', v_entry using errcode = '22023';
    end if;
  end loop;

  insert into public.chat_deployments as c (workflow_id, workspace_id, identifier, title, description, welcome_message, auth_type,
    password_hash, allowed_emails, outputs, created_by)
  values (p_workflow_id, v_workflow.workspace_id, p_identifier, btrim(p_title), nullif(btrim(p_description), ''), nullif(btrim(p_welcome_message), ''),
    p_auth_type::public.chat_auth_type, v_hash, v_emails, coalesce(p_outputs, '{}'), (select auth.uid()))
  on conflict (workflow_id) do update set
    identifier = excluded.identifier, title = excluded.title, description = excluded.description, welcome_message = excluded.welcome_message,
    auth_type = excluded.auth_type, password_hash = excluded.password_hash, allowed_emails = excluded.allowed_emails, outputs = excluded.outputs,
    auth_version = c.auth_version + case when (c.auth_type, c.password_hash, c.allowed_emails) is distinct from (excluded.auth_type, excluded.password_hash, excluded.allowed_emails) then 1 else 0 end
  returning * into v_chat;
  return workflows_private.chat_json(v_chat);
exception
  when check_violation then
    raise exception 'title (1 to 200 characters, one line), description and welcome message (up to 2,000 characters) must be plain text' using errcode = '22023';
end;
$$;
comment on function public.deploy_chat(uuid, text, text, text, text, text[], text[], text, text) is 'Gives a deployed workflow a chat (or changes it): identifier, URL, title, access (public, password, email) and outputs. Editors.';

/** Removes a workflow's chat (editors): its URL stops answering, its sessions and conversations go. Idempotent. */
create function public.undeploy_chat(p_workflow_id uuid)
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform workflows_private.lock_workflow_for_deployment(p_workflow_id, 'undeploy chats');
  delete from public.chat_deployments c where c.workflow_id = p_workflow_id;
end;
$$;
comment on function public.undeploy_chat(uuid) is 'Removes a workflow''s chat deployment. Editors.';

-- The chat endpoint's calls (service role) ---------------------------------------------------------

/**
 * A chat as its page and endpoint need it: {status: 200, chat: {id, identifier, title, description,
 * welcomeMessage, authType, authVersion, outputs, workflowId, workspaceId}}, or 404.
 */
create function public.chat_target(p_identifier text)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  v_chat public.chat_deployments;
begin
  select * into v_chat from public.chat_deployments c where c.identifier = p_identifier;
  if not found then
    return workflows_private.refusal(404, 'NOT_FOUND', format('No chat is deployed at "%s"', p_identifier));
  end if;
  return jsonb_build_object('status', 200, 'chat', jsonb_build_object('id', v_chat.id, 'identifier', v_chat.identifier,
    'title', v_chat.title, 'description', v_chat.description, 'welcomeMessage', v_chat.welcome_message,
    'authType', v_chat.auth_type, 'authVersion', v_chat.auth_version, 'outputs', to_jsonb(v_chat.outputs),
    'workflowId', v_chat.workflow_id, 'workspaceId', v_chat.workspace_id));
end;
$$;
comment on function public.chat_target(text) is 'A chat deployment by identifier, for the chat function (404 refusal when none). Service role only.';

/** The 429 answer of a locked-out subject: how long the lock-out lasts. */
create function workflows_private.chat_locked(p_lockout workflows_private.chat_lockouts, p_now timestamptz)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  v_seconds integer := greatest(1, ceil(extract(epoch from p_lockout.locked_until - p_now))::integer);
begin
  return workflows_private.refusal(429, 'TOO_MANY_ATTEMPTS',
    format('Too many failed attempts: locked out for %s minute%s', ceil(v_seconds / 60.0)::integer, case when ceil(v_seconds / 60.0) = 1 then '' else 's' end),
    jsonb_build_object('retryAfter', v_seconds, 'lockedUntil', p_lockout.locked_until));
end;
$$;
comment on function workflows_private.chat_locked(workflows_private.chat_lockouts, timestamptz) is 'The 429 refusal of a locked-out chat subject, with retryAfter and lockedUntil.';

/** The refusal for a chat whose access is another mode than the one tried. */
create function workflows_private.chat_wrong_mode(p_chat public.chat_deployments)
returns jsonb
language sql
immutable
set search_path = ''
as $$
  select workflows_private.refusal(400, 'WRONG_AUTH_MODE', format('This chat uses %s access', p_chat.auth_type), jsonb_build_object('authType', p_chat.auth_type));
$$;
comment on function workflows_private.chat_wrong_mode(public.chat_deployments) is 'The 400 refusal of a sign-in in a mode the chat does not use.';

/**
 * Checks a chat password from client `p_client`: {status: 200, chatId, subject: "password",
 * authVersion, sessionId}; 401 INVALID_PASSWORD with attemptsLeft; 429 TOO_MANY_ATTEMPTS while that
 * client (5 wrong passwords in 15 minutes) or the whole chat (25, from any addresses) is locked
 * out, for 15 minutes; 400 for a chat that is not a password chat; 404 for no chat.
 */
create function public.chat_password_login(p_identifier text, p_password text, p_client text, p_now timestamptz default now())
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_chat public.chat_deployments;
  v_locked jsonb;
begin
  select * into v_chat from public.chat_deployments c where c.identifier = p_identifier;
  if not found then
    return workflows_private.refusal(404, 'NOT_FOUND', format('No chat is deployed at "%s"', p_identifier));
  elsif v_chat.auth_type <> 'password' then
    return workflows_private.chat_wrong_mode(v_chat);
  end if;
  -- Serialises a chat's sign-ins, so concurrent guesses cannot all slip under the limits.
  perform pg_advisory_xact_lock(hashtextextended('chat-sign-in:' || v_chat.id::text, 0));
  v_locked := workflows_private.chat_sign_in_locked(v_chat.id, p_client, p_now);
  if v_locked is not null then
    return v_locked;
  end if;
  if p_password is null or v_chat.password_hash is distinct from extensions.crypt(p_password, v_chat.password_hash) then
    return workflows_private.chat_sign_in_failure(v_chat.id, p_client, 'INVALID_PASSWORD', 'Wrong password', p_now);
  end if;
  delete from workflows_private.chat_lockouts l where l.chat_id = v_chat.id and l.subject = 'ip:' || coalesce(p_client, 'unknown');
  return workflows_private.chat_open_session(v_chat, 'password', p_now);
end;
$$;
comment on function public.chat_password_login(text, text, text, timestamptz) is 'Checks a chat password, with attempts limited per client address and per chat, and opens a session. Service role only.';

/** Whether an address (lower case) is on a chat's allow-list, itself or by its @domain. */
create function workflows_private.chat_allows(p_chat public.chat_deployments, p_email text)
returns boolean
language sql
immutable
set search_path = ''
as $$
  select p_email = any(p_chat.allowed_emails) or ('@' || split_part(p_email, '@', 2)) = any(p_chat.allowed_emails);
$$;
comment on function workflows_private.chat_allows(public.chat_deployments, text) is 'Whether an e-mail chat allows an address, listed or by domain.';

/**
 * Asks for a one-time code for an e-mail chat. Every well-formed address gets the same 202
 * {status: 202, email, expiresAt}, so the answer tells no one who is on the allow-list; only when
 * the address is allowed and has had fewer than 3 codes in 15 minutes does it also hold `code` and
 * `title`, for the edge function to mail (the code is never stored in clear). Refusals: 400 for a
 * malformed address or a chat that is not an e-mail chat, 404.
 */
create function public.chat_request_code(p_identifier text, p_email text, p_now timestamptz default now())
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_chat public.chat_deployments;
  v_email text := lower(btrim(coalesce(p_email, '')));
  v_answer jsonb;
  v_code text;
begin
  select * into v_chat from public.chat_deployments c where c.identifier = p_identifier;
  if not found then
    return workflows_private.refusal(404, 'NOT_FOUND', format('No chat is deployed at "%s"', p_identifier));
  elsif v_chat.auth_type <> 'email' then
    return workflows_private.chat_wrong_mode(v_chat);
  elsif v_email !~ '^[^@\s]+@[^@\s]+\.[^@\s]+$' or char_length(v_email) > 320 then
    return workflows_private.refusal(400, 'INVALID_EMAIL', 'Give a valid e-mail address');
  end if;
  v_answer := jsonb_build_object('status', 202, 'email', v_email, 'expiresAt', p_now + interval '15 minutes');
  if not workflows_private.chat_allows(v_chat, v_email) then
    return v_answer;
  end if;
  -- The per-address limit: 3 codes in any 15 minutes. Past it nothing is sent, and the last code
  -- sent stays valid, so a stranger asking on someone's behalf cannot keep them out.
  perform pg_advisory_xact_lock(hashtextextended(v_chat.id::text || ':' || v_email, 0));
  if (select count(*) from workflows_private.chat_code_sends s
      where s.chat_id = v_chat.id and s.email = v_email and s.sent_at > p_now - interval '15 minutes') >= 3 then
    return v_answer;
  end if;
  -- Six digits, uniform: reject the few 32-bit values past the last whole million.
  loop
    v_code := ('x' || encode(extensions.gen_random_bytes(4), 'hex'))::bit(32)::bigint::text;
    exit when v_code::bigint < 4294000000;
  end loop;
  v_code := lpad((v_code::bigint % 1000000)::text, 6, '0');
  insert into workflows_private.chat_codes as k (chat_id, email, code_hash, expires_at, attempts, created_at)
  values (v_chat.id, v_email, extensions.digest(v_chat.id::text || ':' || v_email || ':' || v_code, 'sha256'), p_now + interval '15 minutes', 0, p_now)
  on conflict (chat_id, email) do update set code_hash = excluded.code_hash, expires_at = excluded.expires_at, attempts = 0, created_at = excluded.created_at;
  insert into workflows_private.chat_code_sends (chat_id, email, sent_at) values (v_chat.id, v_email, p_now);
  delete from workflows_private.chat_code_sends s where s.chat_id = v_chat.id and s.email = v_email and s.sent_at <= p_now - interval '15 minutes';
  return v_answer || jsonb_build_object('code', v_code, 'title', v_chat.title);
end;
$$;
comment on function public.chat_request_code(text, text, timestamptz) is 'Answers every well-formed address alike; issues a 6-digit code (15 minutes) only to an allowed address, at most 3 per address in 15 minutes. Service role only: the answer may hold the code.';

/**
 * Admits a chat message's run: the session the edge function verified (`p_session`: {chatId,
 * subject, authVersion, sessionId}, or null) must be this chat's current one and still open (not
 * logged out) unless the chat is public (401 AUTH_REQUIRED); the conversation must be the
 * session's (403 CONVERSATION_FORBIDDEN). Then admit_trigger_run (sync, from the active
 * deployment's chat trigger: 403 NOT_DEPLOYED, 402, 429 as for every run) with the input {message,
 * conversationId, history}, history being the conversation's last `p_history_turns` turns. Answers
 * admit's answer plus `chat` {id, outputs} and `subject`. `p_trace` is the caller's trace context
 * (admit_workflow_run).
 */
create function public.admit_chat_run(
  p_identifier text,
  p_session jsonb,
  p_message text,
  p_conversation_id text,
  p_history_turns integer default 20,
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
  v_chat public.chat_deployments;
  v_subject text;
  v_block text;
  v_history jsonb;
  v_answer jsonb;
begin
  select * into v_chat from public.chat_deployments c where c.identifier = p_identifier;
  if not found then
    return workflows_private.refusal(404, 'NOT_FOUND', format('No chat is deployed at "%s"', p_identifier));
  end if;
  if v_chat.auth_type <> 'public' then
    if p_session is null or p_session ->> 'chatId' is distinct from v_chat.id::text
      or (p_session ->> 'authVersion') is distinct from v_chat.auth_version::text
      or (v_chat.auth_type = 'password' and p_session ->> 'subject' is distinct from 'password')
      or (v_chat.auth_type = 'email' and not workflows_private.chat_allows(v_chat, coalesce(p_session ->> 'subject', '')))
      or not workflows_private.chat_session_open(v_chat.id, p_session ->> 'sessionId', now()) then
      return workflows_private.refusal(401, 'AUTH_REQUIRED', case v_chat.auth_type when 'password' then 'Sign in with the chat''s password first'
        else 'Sign in with a code sent to your e-mail address first' end, jsonb_build_object('authType', v_chat.auth_type));
    end if;
    v_subject := p_session ->> 'subject';
  end if;
  if exists (select 1 from workflows_private.chat_turns t where t.chat_id = v_chat.id and t.conversation_id = p_conversation_id
             and t.subject is distinct from v_subject) then
    return workflows_private.refusal(403, 'CONVERSATION_FORBIDDEN', 'This conversation belongs to someone else: start a new one');
  end if;
  select coalesce(jsonb_agg(x.turn order by t.id, x.position), '[]'::jsonb) into v_history
  from (
    select * from workflows_private.chat_turns t where t.chat_id = v_chat.id and t.conversation_id = p_conversation_id
    order by t.id desc limit greatest(0, p_history_turns)
  ) t
  cross join lateral (values (1, jsonb_build_object('role', 'user', 'content', t.message)), (2, jsonb_build_object('role', 'assistant', 'content', t.answer))) x(position, turn);
  select workflows_private.chat_trigger_block(d.state) into v_block from public.workflow_deployments d where d.workflow_id = v_chat.workflow_id and d.is_active;
  if v_block is null then
    return workflows_private.refusal(403, 'NOT_DEPLOYED', 'The workflow behind this chat is not deployed with a chat trigger');
  end if;
  -- The run keeps its input, history included, as every run does (re-runs need it).
  v_answer := public.admit_trigger_run('chat', v_chat.workflow_id, v_block, 'sync',
    jsonb_build_object('message', p_message, 'conversationId', p_conversation_id, 'history', v_history),
    null, null, p_cached_deployment_ids, p_environment_version, p_lease_seconds, p_trace);
  return v_answer || jsonb_build_object('chat', jsonb_build_object('id', v_chat.id, 'outputs', to_jsonb(v_chat.outputs)), 'subject', v_subject);
end;
$$;
comment on function public.admit_chat_run(text, jsonb, text, text, integer, uuid[], bigint, integer, jsonb) is 'Checks a chat session and conversation, then admits the message''s run with the conversation so far. Service role only.';

/** Records a conversation turn (the message and the answer shown) after its run. Service role only. */
create function public.record_chat_turn(p_chat_id uuid, p_conversation_id text, p_subject text, p_message text, p_answer text, p_execution_id uuid)
returns void
language sql
security definer
set search_path = ''
as $$
  insert into workflows_private.chat_turns (chat_id, conversation_id, subject, message, answer, execution_id)
  values (p_chat_id, p_conversation_id, p_subject, p_message, p_answer, p_execution_id);
$$;
comment on function public.record_chat_turn(uuid, text, text, text, text, uuid) is 'Keeps a chat turn for the conversation''s history. Service role only.';

/** Deletes chat turns and code sends older than 30 days, and expired codes, lock-outs and sessions (pg_cron, daily). */
create function workflows_private.expire_chat_records(p_now timestamptz default now())
returns void
language plpgsql
security definer
set search_path = ''
as $$
begin
  delete from workflows_private.chat_turns t where t.created_at < p_now - interval '30 days';
  delete from workflows_private.chat_code_sends s where s.sent_at < p_now - interval '1 day';
  delete from workflows_private.chat_codes k where k.expires_at < p_now;
  delete from workflows_private.chat_lockouts l where coalesce(l.locked_until, l.window_started_at + interval '15 minutes') < p_now;
  delete from workflows_private.chat_sessions s where s.expires_at < p_now;
end;
$$;
comment on function workflows_private.expire_chat_records(timestamptz) is 'Deletes old chat turns, code sends, expired codes, lock-outs and sessions.';

select cron.schedule('workflows-expire-chat-records', '53 3 * * *', $$select workflows_private.expire_chat_records()$$);

-- Access -------------------------------------------------------------------------------------------

revoke all on public.chat_deployments from public, anon, authenticated;
-- Members read every column but the password hash.
grant select (id, workflow_id, workspace_id, identifier, title, description, welcome_message, auth_type, allowed_emails, outputs,
  auth_version, created_by, created_at, updated_at) on public.chat_deployments to authenticated;
grant select on public.chat_deployments to service_role;
alter table public.chat_deployments enable row level security;
create policy "Members can read their workspaces' chats" on public.chat_deployments
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));

revoke all on workflows_private.settings, workflows_private.chat_lockouts, workflows_private.chat_codes, workflows_private.chat_code_sends,
  workflows_private.chat_turns from public, anon, authenticated, service_role;
alter table workflows_private.settings enable row level security;
alter table workflows_private.chat_lockouts enable row level security;
alter table workflows_private.chat_codes enable row level security;
alter table workflows_private.chat_code_sends enable row level security;
alter table workflows_private.chat_turns enable row level security;

revoke execute on function
  workflows_private.chat_url(text),
  workflows_private.chat_json(public.chat_deployments),
  workflows_private.chat_trigger_block(jsonb),
workflows_private.chat_locked(workflows_private.chat_lockouts, timestamptz),
  workflows_private.chat_wrong_mode(public.chat_deployments),
  workflows_private.chat_allows(public.chat_deployments, text),
  workflows_private.expire_chat_records(timestamptz)
  from public, anon, authenticated, service_role;
revoke execute on function
  public.deploy_chat(uuid, text, text, text, text, text[], text[], text, text),
  public.undeploy_chat(uuid)
  from public, anon;
grant execute on function
  public.deploy_chat(uuid, text, text, text, text, text[], text[], text, text),
  public.undeploy_chat(uuid)
  to authenticated, service_role;
revoke execute on function
  public.chat_target(text),
  public.chat_password_login(text, text, text, timestamptz),
  public.chat_request_code(text, text, timestamptz),
public.admit_chat_run(text, jsonb, text, text, integer, uuid[], bigint, integer, jsonb),
  public.record_chat_turn(uuid, text, text, text, text, uuid)
  from public, anon, authenticated;
grant execute on function
  public.chat_target(text),
  public.chat_password_login(text, text, text, timestamptz),
  public.chat_request_code(text, text, timestamptz),
public.admit_chat_run(text, jsonb, text, text, integer, uuid[], bigint, integer, jsonb),
  public.record_chat_turn(uuid, text, text, text, text, uuid)
  to service_role;
-- Sign-in attempts and sessions --------------------------------------------------------------------
-- - Wrong passwords and wrong codes are counted per chat and client address (5 in 15 minutes lock
--   that address out of that chat for 15 minutes) and per chat (25 in 15 minutes, from any
--   addresses, close the chat's sign-ins for 15 minutes). Someone else's wrong guesses never lock
--   a person out from their own address; only a guesser spread over five or more addresses can
--   close sign-ins, and then only for 15 minutes, with open sessions untouched. Wrong codes do not
--   void the code (that would be a weapon); the per-chat cap bounds guessing instead.
-- - A code request answers alike for every well-formed address: whether it is allowed, and
--   whether its 3 codes in 15 minutes are spent, decides only whether a mail is sent.
-- - Every sign-in opens a server-side session (workflows_private.chat_sessions) whose id the
--   signed cookie carries; a message, the page and /config need the row to exist, and logging out
--   deletes it.

create table workflows_private.chat_sessions (
  id uuid primary key default gen_random_uuid(),
  chat_id uuid not null references public.chat_deployments (id) on delete cascade,
  subject text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null
);
comment on table workflows_private.chat_sessions is 'Open chat sessions: the signed cookie names one, and a session whose row is gone (logged out, expired, chat removed) is refused.';
comment on column workflows_private.chat_sessions.id is 'The session id the cookie carries (random, so not guessable even were the cookie''s signing key known).';
comment on column workflows_private.chat_sessions.chat_id is 'The chat it opens.';
comment on column workflows_private.chat_sessions.subject is 'Who signed in: an e-mail address, or "password".';
comment on column workflows_private.chat_sessions.created_at is 'When it was opened.';
comment on column workflows_private.chat_sessions.expires_at is '24 hours after it was opened, as the cookie''s own expiry.';
create index chat_sessions_chat_id_idx on workflows_private.chat_sessions (chat_id);
create index chat_sessions_expires_at_idx on workflows_private.chat_sessions (expires_at);
revoke all on workflows_private.chat_sessions from public, anon, authenticated, service_role;
alter table workflows_private.chat_sessions enable row level security;
/** Opens a session for `p_subject` on a chat and answers the sign-in's 200 with its id. */
create function workflows_private.chat_open_session(p_chat public.chat_deployments, p_subject text, p_now timestamptz)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_id uuid;
begin
  insert into workflows_private.chat_sessions (chat_id, subject, created_at, expires_at)
  values (p_chat.id, p_subject, p_now, p_now + interval '24 hours')
  returning id into v_id;
  return jsonb_build_object('status', 200, 'chatId', p_chat.id, 'subject', p_subject, 'authVersion', p_chat.auth_version, 'sessionId', v_id);
end;
$$;
comment on function workflows_private.chat_open_session(public.chat_deployments, text, timestamptz) is 'Records a new chat session and answers the sign-in with chatId, subject, authVersion and sessionId.';
/**
 * Whether a session id (as the cookie carries it, so any text) names an open session of a chat.
 * Text that is not a uuid is simply no session: a cast error would be a 500.
 */
create function workflows_private.chat_session_open(p_chat_id uuid, p_session_id text, p_now timestamptz)
returns boolean
language sql
stable
security definer
set search_path = ''
as $$
  select coalesce(p_session_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', false)
    and exists (select 1 from workflows_private.chat_sessions s
                where s.id = p_session_id::uuid and s.chat_id = p_chat_id and s.expires_at > p_now);
$$;
comment on function workflows_private.chat_session_open(uuid, text, timestamptz) is 'Whether a session id names an open, unexpired session of the chat (false for text that is not a uuid).';
/** Whether the session the chat function read from a cookie is still open on the chat named. Service role only. */
create function public.chat_session_active(p_identifier text, p_session_id text, p_now timestamptz default now())
returns boolean
language sql
stable
security definer
set search_path = ''
as $$
  select coalesce((select workflows_private.chat_session_open(c.id, p_session_id, p_now)
                   from public.chat_deployments c where c.identifier = p_identifier), false);
$$;
comment on function public.chat_session_active(text, text, timestamptz) is 'Whether a chat session id is open (not logged out, not expired) on the chat; the page and /config ask it. Service role only.';
/** Ends a chat session (logout): its cookie, and any copy of it, is refused from now on. Service role only. */
create function public.end_chat_session(p_identifier text, p_session_id text)
returns void
language sql
security definer
set search_path = ''
as $$
  delete from workflows_private.chat_sessions s
  using public.chat_deployments c
  where c.identifier = p_identifier and s.chat_id = c.id
    and p_session_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
    and s.id = p_session_id::uuid;
$$;
comment on function public.end_chat_session(text, text) is 'Logs a chat session out by deleting it. Service role only.';
/**
 * A change of a chat's access (a new password, allow-list or mode) ends its sessions, which the
 * access version already refuses, and forgets its lock-outs: guesses at the old password or codes
 * say nothing about the new access, and a whole-chat lock-out should not outlive what it guarded.
 */
create function workflows_private.chat_access_changed()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  delete from workflows_private.chat_sessions s where s.chat_id = new.id;
  delete from workflows_private.chat_lockouts l where l.chat_id = new.id;
  return null;
end;
$$;
comment on function workflows_private.chat_access_changed() is 'Trigger: when a chat''s access version changes, deletes its sessions and lock-outs.';
create trigger chat_deployments_access_changed after update of auth_version on public.chat_deployments
  for each row when (old.auth_version is distinct from new.auth_version) execute function workflows_private.chat_access_changed();
/** Counts one failure of a chat's subject in its 15-minute window, locking it out for 15 minutes at `p_limit`. */
create function workflows_private.chat_count_failure(p_chat_id uuid, p_subject text, p_limit integer, p_now timestamptz)
returns workflows_private.chat_lockouts
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_lockout workflows_private.chat_lockouts;
begin
  insert into workflows_private.chat_lockouts as l (chat_id, subject, failures, window_started_at)
  values (p_chat_id, p_subject, 1, p_now)
  on conflict (chat_id, subject) do update set
    failures = case when l.window_started_at <= p_now - interval '15 minutes' or l.locked_until <= p_now then 1 else l.failures + 1 end,
    window_started_at = case when l.window_started_at <= p_now - interval '15 minutes' or l.locked_until <= p_now then p_now else l.window_started_at end,
    locked_until = case when l.locked_until <= p_now then null else l.locked_until end
  returning * into v_lockout;
  if v_lockout.failures >= p_limit then
    update workflows_private.chat_lockouts l set locked_until = p_now + interval '15 minutes'
    where l.chat_id = p_chat_id and l.subject = p_subject returning * into v_lockout;
  end if;
  return v_lockout;
end;
$$;
comment on function workflows_private.chat_count_failure(uuid, text, integer, timestamptz) is 'Counts a failed sign-in of one subject (client address or whole chat) and locks it out for 15 minutes at the limit.';
/**
 * The lock-out that stops a sign-in from client `p_client` right now, as its 429 answer: the whole
 * chat's (25 failures from any addresses) or the client's own (5 failures); null when neither.
 */
create function workflows_private.chat_sign_in_locked(p_chat_id uuid, p_client text, p_now timestamptz)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  v_lockout workflows_private.chat_lockouts;
begin
  select * into v_lockout from workflows_private.chat_lockouts l
  where l.chat_id = p_chat_id and l.subject in ('chat', 'ip:' || coalesce(p_client, 'unknown')) and l.locked_until > p_now
  order by l.locked_until desc limit 1;
  if found then
    return workflows_private.chat_locked(v_lockout, p_now);
  end if;
  return null;
end;
$$;
comment on function workflows_private.chat_sign_in_locked(uuid, text, timestamptz) is 'The 429 answer when the chat''s sign-ins or this client address are locked out, else null.';
/**
 * Counts a wrong password or code from client `p_client` against both limits and answers: the
 * 401 `p_code` with attemptsLeft (the fewer of the client's and the chat's), or 429
 * TOO_MANY_ATTEMPTS when this failure locked either out.
 */
create function workflows_private.chat_sign_in_failure(p_chat_id uuid, p_client text, p_code text, p_error text, p_now timestamptz)
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_client workflows_private.chat_lockouts := workflows_private.chat_count_failure(p_chat_id, 'ip:' || coalesce(p_client, 'unknown'), 5, p_now);
  v_chat workflows_private.chat_lockouts := workflows_private.chat_count_failure(p_chat_id, 'chat', 25, p_now);
  v_left integer := least(5 - v_client.failures, 25 - v_chat.failures);
begin
  if v_chat.locked_until > p_now then
    return workflows_private.chat_locked(v_chat, p_now);
  elsif v_client.locked_until > p_now then
    return workflows_private.chat_locked(v_client, p_now);
  end if;
  return workflows_private.refusal(401, p_code, format('%s; %s attempt%s left before a 15-minute lock-out', p_error, v_left,
    case when v_left = 1 then '' else 's' end), jsonb_build_object('attemptsLeft', v_left));
end;
$$;
comment on function workflows_private.chat_sign_in_failure(uuid, text, text, text, timestamptz) is 'Counts a wrong chat password or code per client address (5) and per chat (25) and answers the 401 or the 429 lock-out.';
/**
 * Checks a one-time code from client `p_client`: {status: 200, chatId, subject: <address>,
 * authVersion, sessionId} (the code is used up); 401 INVALID_CODE with attemptsLeft; 401
 * CODE_EXPIRED when the address has no live code; 429 TOO_MANY_ATTEMPTS while that client (5 wrong
 * codes in 15 minutes) or the whole chat (25, from any addresses) is locked out; 400 for a chat
 * that is not an e-mail chat; 404. Wrong codes never void the code, so no one can spoil another's.
 */
create function public.chat_verify_code(p_identifier text, p_email text, p_code text, p_client text, p_now timestamptz default now())
returns jsonb
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_chat public.chat_deployments;
  v_email text := lower(btrim(coalesce(p_email, '')));
  v_code workflows_private.chat_codes;
  v_locked jsonb;
begin
  select * into v_chat from public.chat_deployments c where c.identifier = p_identifier;
  if not found then
    return workflows_private.refusal(404, 'NOT_FOUND', format('No chat is deployed at "%s"', p_identifier));
  elsif v_chat.auth_type <> 'email' then
    return workflows_private.chat_wrong_mode(v_chat);
  end if;
  perform pg_advisory_xact_lock(hashtextextended('chat-sign-in:' || v_chat.id::text, 0));
  v_locked := workflows_private.chat_sign_in_locked(v_chat.id, p_client, p_now);
  if v_locked is not null then
    return v_locked;
  end if;
  select * into v_code from workflows_private.chat_codes k where k.chat_id = v_chat.id and k.email = v_email for update;
  if not found or v_code.expires_at <= p_now or not workflows_private.chat_allows(v_chat, v_email) then
    return workflows_private.refusal(401, 'CODE_EXPIRED', 'No valid code for this address: ask for a new one');
  end if;
  if p_code is null or v_code.code_hash <> extensions.digest(v_chat.id::text || ':' || v_email || ':' || btrim(p_code), 'sha256') then
    update workflows_private.chat_codes k set attempts = k.attempts + 1 where k.chat_id = v_chat.id and k.email = v_email;
    return workflows_private.chat_sign_in_failure(v_chat.id, p_client, 'INVALID_CODE', 'Wrong code', p_now);
  end if;
  delete from workflows_private.chat_codes k where k.chat_id = v_chat.id and k.email = v_email;
  delete from workflows_private.chat_lockouts l where l.chat_id = v_chat.id and l.subject = 'ip:' || coalesce(p_client, 'unknown');
  return workflows_private.chat_open_session(v_chat, v_email, p_now);
end;
$$;
comment on function public.chat_verify_code(text, text, text, text, timestamptz) is 'Checks an e-mail chat''s one-time code, with attempts limited per client address and per chat, and opens a session. Service role only.';
-- Access -------------------------------------------------------------------------------------------

revoke execute on function
  workflows_private.chat_access_changed(),
  workflows_private.chat_open_session(public.chat_deployments, text, timestamptz),
  workflows_private.chat_session_open(uuid, text, timestamptz),
  workflows_private.chat_count_failure(uuid, text, integer, timestamptz),
  workflows_private.chat_sign_in_locked(uuid, text, timestamptz),
  workflows_private.chat_sign_in_failure(uuid, text, text, text, timestamptz)
  from public, anon, authenticated, service_role;
revoke execute on function
  public.chat_session_active(text, text, timestamptz),
  public.end_chat_session(text, text),
  public.chat_verify_code(text, text, text, text, timestamptz)
  from public, anon, authenticated;
grant execute on function
  public.chat_session_active(text, text, timestamptz),
  public.end_chat_session(text, text),
  public.chat_verify_code(text, text, text, text, timestamptz)
  to service_role;
