-- Workflow service: chat sign-ins that cannot be used against someone else, and sessions that end.
--
-- Issue 29, finding 4. Before this migration:
-- - five wrong e-mail codes locked the *address* out, so anyone could lock anyone out of a chat;
-- - `EMAIL_NOT_ALLOWED` (403) against 202 told a stranger who was on the allow-list;
-- - wrong passwords were counted per client address only, so a guesser with many addresses was
--   never stopped;
-- - logging out only cleared the cookie: a copy of it kept working for 24 hours.
-- Now:
-- - wrong passwords and wrong codes are counted per chat and client address (5 in 15 minutes lock
--   that address out of that chat for 15 minutes) and per chat (25 in 15 minutes, from any
--   addresses, close the chat's sign-ins for 15 minutes). Someone else's wrong guesses never lock
--   a person out from their own address; only a guesser spread over five or more addresses can
--   close sign-ins, and then only for 15 minutes, with open sessions untouched. Wrong codes no
--   longer void the code (that too was a weapon); the per-chat cap bounds guessing instead.
-- - a code request answers alike for every well-formed address: whether it is allowed, and
--   whether its 3 codes in 15 minutes are spent, decides only whether a mail is sent.
-- - every sign-in opens a server-side session (workflows_private.chat_sessions) whose id the
--   signed cookie carries; a message, the page and /config need the row to exist, and logging out
--   deletes it.

-- Sessions -----------------------------------------------------------------------------------------

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

comment on table workflows_private.chat_lockouts is 'Failed sign-ins per chat and subject (ip:<client address>, or chat for the whole chat), and lock-outs.';
comment on column workflows_private.chat_lockouts.subject is 'ip:<client address> (5 failures lock it out), or chat (25 failures from any addresses close the chat''s sign-ins).';
comment on column workflows_private.chat_lockouts.failures is 'Wrong passwords or codes in the current 15-minute window.';

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

-- Attempts per client address and per chat -------------------------------------------------------

-- Replaced by chat_sign_in_failure, which counts per client address and per chat together.
drop function workflows_private.chat_failure(uuid, text, integer, text, text, timestamptz);

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
 * Checks a chat password from client `p_client`: {status: 200, chatId, subject: "password",
 * authVersion, sessionId}; 401 INVALID_PASSWORD with attemptsLeft; 429 TOO_MANY_ATTEMPTS while that
 * client (5 wrong passwords in 15 minutes) or the whole chat (25, from any addresses) is locked
 * out, for 15 minutes; 400 for a chat that is not a password chat; 404 for no chat.
 */
create or replace function public.chat_password_login(p_identifier text, p_password text, p_client text, p_now timestamptz default now())
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

/**
 * Asks for a one-time code for an e-mail chat. Every well-formed address gets the same 202
 * {status: 202, email, expiresAt}, so the answer tells no one who is on the allow-list; only when
 * the address is allowed and has had fewer than 3 codes in 15 minutes does it also hold `code` and
 * `title`, for the edge function to mail (the code is never stored in clear). Refusals: 400 for a
 * malformed address or a chat that is not an e-mail chat, 404.
 */
create or replace function public.chat_request_code(p_identifier text, p_email text, p_now timestamptz default now())
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

comment on column workflows_private.chat_codes.attempts is 'Wrong attempts at this code so far (informational: the per-client and per-chat limits stop guessing, so another person''s wrong guesses never void it).';
comment on table workflows_private.chat_code_sends is 'Codes sent per allowed address, for the per-address send limit (3 in 15 minutes).';

drop function public.chat_verify_code(text, text, text, timestamptz);

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

/**
 * Admits a chat message's run: the session the edge function verified (`p_session`: {chatId,
 * subject, authVersion, sessionId}, or null) must be this chat's current one and still open (not
 * logged out) unless the chat is public (401 AUTH_REQUIRED); the conversation must be the
 * session's (403 CONVERSATION_FORBIDDEN). Then admit_trigger_run (sync, from the active
 * deployment's chat trigger: 403 NOT_DEPLOYED, 402, 429 as for every run) with the input {message,
 * conversationId, history}, history being the conversation's last `p_history_turns` turns. Answers
 * admit's answer plus `chat` {id, outputs} and `subject`.
 */
create or replace function public.admit_chat_run(
  p_identifier text,
  p_session jsonb,
  p_message text,
  p_conversation_id text,
  p_history_turns integer default 20,
  p_cached_deployment_ids uuid[] default null,
  p_environment_version bigint default null,
  p_lease_seconds integer default 360
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
  v_answer := public.admit_trigger_run('chat', v_chat.workflow_id, v_block, 'sync',
    null, null, null, p_cached_deployment_ids, p_environment_version, p_lease_seconds);
  if v_answer ->> 'outcome' = 'admitted' then
    v_answer := v_answer || jsonb_build_object('input', jsonb_build_object('message', p_message, 'conversationId', p_conversation_id, 'history', v_history));
  end if;
  return v_answer || jsonb_build_object('chat', jsonb_build_object('id', v_chat.id, 'outputs', to_jsonb(v_chat.outputs)), 'subject', v_subject);
end;
$$;

/** Deletes chat turns and code sends older than 30 days, and expired codes, lock-outs and sessions (pg_cron, daily). */
create or replace function workflows_private.expire_chat_records(p_now timestamptz default now())
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
