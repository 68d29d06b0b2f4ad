-- Workflow service: chat deployments, their three access modes with limited attempts, and the
-- admission of a chat message with its conversation.
begin;
select plan(64);

insert into auth.users (id, email, aud, role) values
  ('b0000000-0000-4000-8000-000000000001', 'owner@chat.test', 'authenticated', 'authenticated'),
  ('b0000000-0000-4000-8000-000000000002', 'viewer@chat.test', 'authenticated', 'authenticated'),
  ('b0000000-0000-4000-8000-000000000003', 'stranger@chat.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create function pg_temp.as_service() returns void language sql as $$
  select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true);
$$;

select pg_temp.act_as('b0000000-0000-4000-8000-000000000001');
select public.create_workspace('Chats');
reset role;
create temporary table ws as select id from public.workspaces where name = 'Chats';
grant select on ws to authenticated, service_role;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'b0000000-0000-4000-8000-000000000002', 'viewer' from ws;
insert into public.workflows (id, workspace_id, name, state) values
  ('b1000000-0000-4000-8000-000000000001', (select id from ws), 'Helper', '{
    "blocks": {"chat": {"id": "chat", "type": "chat_trigger", "name": "Chat", "config": {}},
               "reply": {"id": "reply", "type": "variables", "name": "Reply", "config": {"assignments": [{"name": "text", "value": "You said <chat.message>"}]}}},
    "edges": [{"id": "e1", "source": "chat", "target": "reply"}]}'),
  ('b1000000-0000-4000-8000-000000000002', (select id from ws), 'No chat trigger', '{
    "blocks": {"api": {"id": "api", "type": "api_trigger", "name": "API", "config": {}}}, "edges": []}');
create temporary table chats (label text primary key, body jsonb);
grant all on chats to authenticated, service_role;

-- Deploying a chat ---------------------------------------------------------------------------------

select pg_temp.act_as('b0000000-0000-4000-8000-000000000001');
select throws_ok($$select public.deploy_chat('b1000000-0000-4000-8000-000000000001', 'helper', 'Helper')$$, '22023',
  'Workflow "Helper" is not deployed: deploy it before giving it a chat', 'A workflow needs a deployment before a chat');
select public.deploy_workflow('b1000000-0000-4000-8000-000000000001');
select public.deploy_workflow('b1000000-0000-4000-8000-000000000002');
select throws_ok($$select public.deploy_chat('b1000000-0000-4000-8000-000000000002', 'nochat', 'No')$$, '22023',
  'The active deployment of "No chat trigger" has no enabled chat trigger (chat_trigger block): add one and deploy again', 'and a chat trigger');
select throws_ok($$select public.deploy_chat('b1000000-0000-4000-8000-000000000001', 'Bad_Name', 'Helper')$$, '22023', null, 'An identifier is lower-case letters, digits and hyphens');
select throws_ok($$select public.deploy_chat('b1000000-0000-4000-8000-000000000001', 'helper', 'Helper', 'password')$$, '22023', 'a password chat needs a password', 'A password chat needs a password');
select throws_ok($$select public.deploy_chat('b1000000-0000-4000-8000-000000000001', 'helper', 'Helper', 'password', 'short')$$, '22023', 'a chat password has 8 to 200 characters', 'of 8 characters or more');
select throws_ok($$select public.deploy_chat('b1000000-0000-4000-8000-000000000001', 'helper', 'Helper', 'email')$$, '22023', 'an e-mail chat needs at least one allowed address or @domain', 'An e-mail chat needs an allow-list');
select throws_ok($$select public.deploy_chat('b1000000-0000-4000-8000-000000000001', 'helper', 'Helper', 'email', null, array['not-an-address'])$$, '22023', null, 'of addresses or @domains');
select throws_ok($$select public.deploy_chat('b1000000-0000-4000-8000-000000000001', 'helper', 'Helper', p_outputs => array['ghost.text'])$$, '22023',
  'output "ghost.text": name a block of the deployed workflow and one of its fields (blockName.attribute)', 'Outputs name blocks of the deployment');
insert into chats select 'public', public.deploy_chat('b1000000-0000-4000-8000-000000000001', 'helper', 'Helper', p_outputs => array['Reply.text'], p_welcome_message => 'Ask me anything');
select is((select body - 'id' - 'createdAt' - 'updatedAt' from chats where label = 'public'),
  '{"workflowId": "b1000000-0000-4000-8000-000000000001", "identifier": "helper", "url": "http://127.0.0.1:54321/chat/helper", "title": "Helper",
    "description": null, "welcomeMessage": "Ask me anything", "authType": "public", "allowedEmails": [], "outputs": ["Reply.text"]}'::jsonb,
  'An editor deploys a chat and gets its URL');
select pg_temp.act_as('b0000000-0000-4000-8000-000000000002');
select throws_ok($$select public.deploy_chat('b1000000-0000-4000-8000-000000000001', 'mine', 'Mine')$$, '42501', null, 'A viewer cannot');
select is((select identifier from public.chat_deployments), 'helper', 'but reads the chat');
select throws_ok($$select password_hash from public.chat_deployments$$, '42501', null, 'never its password hash');
select pg_temp.act_as('b0000000-0000-4000-8000-000000000003');
select is((select count(*)::int from public.chat_deployments), 0, 'Someone outside the workspace sees no chat');
reset role;

-- Public chats -------------------------------------------------------------------------------------

select pg_temp.as_service();
select is(public.chat_target('helper') -> 'chat' ->> 'authType', 'public', 'The chat function finds the chat by identifier');
select is(public.chat_target('nobody') ->> 'status', '404', 'An unknown identifier is a 404');
insert into chats select 'run1', public.admit_chat_run('helper', null, 'Hello', 'conv-1');
select is((select (body ->> 'status', body ->> 'triggerBlockId', body -> 'input', body -> 'chat' -> 'outputs')::text from chats where label = 'run1'),
  '(200,chat,"{""history"": [], ""message"": ""Hello"", ""conversationId"": ""conv-1""}","[""Reply.text""]")',
  'A public chat''s message is admitted without a session, from the chat trigger, with the message and an empty history');
select is((select (trigger, mode, trigger_block_id)::text from public.workflow_executions where id = (select (body ->> 'executionId')::uuid from chats where label = 'run1')),
  '(chat,sync,chat)', 'and recorded as a chat run');
select public.record_chat_turn((select id from public.chat_deployments where identifier = 'helper'), 'conv-1', null, 'Hello', 'You said Hello', (select (body ->> 'executionId')::uuid from chats where label = 'run1'));
select is(public.admit_chat_run('helper', null, 'Again', 'conv-1') -> 'input' -> 'history',
  '[{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "You said Hello"}]'::jsonb, 'The next message carries the conversation''s earlier turns');
select is(public.admit_chat_run('helper', null, 'Hi', 'conv-2') -> 'input' -> 'history', '[]'::jsonb, 'Another conversation starts empty');

-- Password chats -----------------------------------------------------------------------------------

reset role;
select pg_temp.act_as('b0000000-0000-4000-8000-000000000001');
insert into chats select 'password', public.deploy_chat('b1000000-0000-4000-8000-000000000001', 'helper', 'Helper', 'password', 'correct horse battery');
reset role;
select ok((select password_hash like '$2a$10$%' from public.chat_deployments where identifier = 'helper'), 'The password is stored as a bcrypt hash');
select pg_temp.as_service();
select is(public.admit_chat_run('helper', null, 'Hello', 'conv-3') ->> 'code', 'AUTH_REQUIRED', 'A password chat refuses a message without a session');
select is(public.chat_password_login('helper', 'wrong', '10.0.0.1', '2030-01-01 10:00Z') - 'status',
  '{"outcome": "refused", "code": "INVALID_PASSWORD", "error": "Wrong password; 4 attempts left before a 15-minute lock-out", "attemptsLeft": 4}'::jsonb,
  'A wrong password is refused, saying how many attempts are left');
select public.chat_password_login('helper', 'wrong', '10.0.0.1', '2030-01-01 10:01Z');
select public.chat_password_login('helper', 'wrong', '10.0.0.1', '2030-01-01 10:02Z');
select public.chat_password_login('helper', 'wrong', '10.0.0.1', '2030-01-01 10:03Z');
select is(public.chat_password_login('helper', 'wrong', '10.0.0.1', '2030-01-01 10:04Z') - 'lockedUntil',
  '{"status": 429, "outcome": "refused", "code": "TOO_MANY_ATTEMPTS", "error": "Too many failed attempts: locked out for 15 minutes", "retryAfter": 900}'::jsonb,
  'The fifth wrong password locks the client out for 15 minutes');
select is(public.chat_password_login('helper', 'correct horse battery', '10.0.0.1', '2030-01-01 10:10Z') ->> 'retryAfter', '540',
  'Even the right password waits out the lock-out, which says how long is left');
select is(public.chat_password_login('helper', 'correct horse battery', '10.0.0.2', '2030-01-01 10:10Z') ->> 'subject', 'password',
  'Another client is not locked out');
insert into chats select 'login', public.chat_password_login('helper', 'correct horse battery', '10.0.0.1', '2030-01-01 10:20Z');
select is((select body ->> 'status' from chats where label = 'login'), '200', 'After the lock-out the right password opens a session');
select ok((select body ->> 'sessionId' ~ '^[0-9a-f-]{36}$' from chats where label = 'login'), 'with a server-side session id for the cookie to carry');
select is(public.admit_chat_run('helper', (select body - 'status' from chats where label = 'login'),
  'Hello', 'conv-3') ->> 'status', '200', 'A session of the current version is admitted');
select is(public.admit_chat_run('helper', (select body - 'status' || '{"authVersion": 1}' from chats where label = 'login'),
  'Hello', 'conv-3') ->> 'code', 'AUTH_REQUIRED', 'A session made before the access changed is refused');
select is(public.admit_chat_run('helper', (select body - 'status' - 'sessionId' from chats where label = 'login'),
  'Hello', 'conv-3') ->> 'code', 'AUTH_REQUIRED', 'A session without a server-side id (a cookie from before ids) is refused');
select is(public.admit_chat_run('helper', (select body - 'status' || '{"sessionId": "not-a-uuid"}' from chats where label = 'login'),
  'Hello', 'conv-3') ->> 'code', 'AUTH_REQUIRED', 'and so is a session id that is not one, without an error');
select is(public.admit_chat_run('helper', (select body - 'status' from chats where label = 'login'),
  'Hello', 'conv-1') ->> 'code', 'CONVERSATION_FORBIDDEN', 'A conversation started by someone else cannot be continued');
select ok(public.chat_session_active('helper', (select body ->> 'sessionId' from chats where label = 'login')), 'The page finds the session open');
select public.end_chat_session('helper', (select body ->> 'sessionId' from chats where label = 'login'));
select ok(not public.chat_session_active('helper', (select body ->> 'sessionId' from chats where label = 'login')), 'Logging out ends the session');
select is(public.admit_chat_run('helper', (select body - 'status' from chats where label = 'login'),
  'Hello', 'conv-3') ->> 'code', 'AUTH_REQUIRED', 'and its cookie, however well signed, admits no message any more');

-- 25 wrong passwords from any addresses (each under its own limit of 5) close the chat's sign-ins.
select public.chat_password_login('helper', 'wrong', '10.9.0.' || (n % 7), '2030-01-01 14:00Z') from generate_series(1, 24) n;
select is(public.chat_password_login('helper', 'wrong', '10.9.1.1', '2030-01-01 14:01Z') ->> 'code', 'TOO_MANY_ATTEMPTS',
  'The 25th wrong password of a chat, from any address, closes its sign-ins');
select is(public.chat_password_login('helper', 'correct horse battery', '10.9.2.1', '2030-01-01 14:05Z') ->> 'retryAfter', '660',
  'so a guesser spread over many addresses is capped per chat: even the right password waits, told how long');
select is(public.chat_password_login('helper', 'correct horse battery', '10.9.2.1', '2030-01-01 14:17Z') ->> 'status', '200', 'and it reopens after 15 minutes');
select is(public.chat_request_code('helper', 'ana@example.com') ->> 'code', 'WRONG_AUTH_MODE', 'A password chat sends no codes');

-- E-mail chats -------------------------------------------------------------------------------------

reset role;
select pg_temp.act_as('b0000000-0000-4000-8000-000000000001');
insert into chats select 'email', public.deploy_chat('b1000000-0000-4000-8000-000000000001', 'helper', 'Helper', 'email', null, array['Ana@Example.com', '@team.example']);
reset role;
select is((select count(*)::int from workflows_private.chat_lockouts l join public.chat_deployments c on c.id = l.chat_id where c.identifier = 'helper'), 0,
  'Changing the access forgets the old access''s lock-outs');
select is((select body -> 'allowedEmails' from chats where label = 'email'), '["@team.example", "ana@example.com"]'::jsonb, 'An e-mail chat keeps its allow-list in lower case');
select pg_temp.as_service();
select is(public.chat_request_code('helper', 'eve@example.com', '2030-01-01 10:00Z'), '{"status": 202, "email": "eve@example.com", "expiresAt": "2030-01-01T10:15:00+00:00"}'::jsonb,
  'An address not allowed gets no code, in the very answer an allowed address gets without one');
select is(public.chat_request_code('helper', 'not an address') ->> 'code', 'INVALID_EMAIL', 'nor does a malformed one');
insert into chats select 'code1', public.chat_request_code('helper', 'bob@team.example', '2030-01-01 10:00Z');
select ok((select body ->> 'code' ~ '^[0-9]{6}$' and body ->> 'expiresAt' = '2030-01-01T10:15:00+00:00' from chats where label = 'code1'),
  'An address of an allowed domain gets a 6-digit code valid 15 minutes');
reset role;
select ok((select code_hash <> convert_to(body ->> 'code', 'UTF8') from workflows_private.chat_codes, chats where label = 'code1'), 'The code is stored hashed');
select pg_temp.as_service();
select public.chat_request_code('helper', 'bob@team.example', '2030-01-01 10:01Z');
insert into chats select 'code3', public.chat_request_code('helper', 'bob@team.example', '2030-01-01 10:02Z');
select is(public.chat_request_code('helper', 'bob@team.example', '2030-01-01 10:03Z'), '{"status": 202, "email": "bob@team.example", "expiresAt": "2030-01-01T10:18:00+00:00"}'::jsonb,
  'A fourth code within 15 minutes is not sent, with the answer an outsider gets');
select is(public.chat_verify_code('helper', 'bob@team.example', (select body ->> 'code' from chats where label = 'code1'), '10.0.0.1', '2030-01-01 10:04Z') ->> 'code',
  case when (select body ->> 'code' from chats where label = 'code1') = (select body ->> 'code' from chats where label = 'code3') then null else 'INVALID_CODE' end,
  'A newer code replaces the older ones');
insert into chats select 'bob', public.chat_verify_code('helper', 'BOB@team.example', (select body ->> 'code' from chats where label = 'code3'), '10.0.0.1', '2030-01-01 10:05Z');
select is((select body - 'chatId' - 'sessionId' from chats where label = 'bob'),
  '{"status": 200, "subject": "bob@team.example", "authVersion": 3}'::jsonb, 'The live code opens a session for its address');
select is(public.chat_verify_code('helper', 'bob@team.example', (select body ->> 'code' from chats where label = 'code3'), '10.0.0.1', '2030-01-01 10:06Z') ->> 'code', 'CODE_EXPIRED',
  'A code works once');
insert into chats select 'code4', public.chat_request_code('helper', 'ana@example.com', '2030-01-01 11:00Z');
select is(public.chat_verify_code('helper', 'ana@example.com', (select body ->> 'code' from chats where label = 'code4'), '10.0.0.1', '2030-01-01 11:16Z') ->> 'code', 'CODE_EXPIRED',
  'A code expires after 15 minutes');
insert into chats select 'code5', public.chat_request_code('helper', 'ana@example.com', '2030-01-01 12:00Z');
select public.chat_verify_code('helper', 'ana@example.com', 'x', '10.6.6.6', '2030-01-01 12:01Z');
select public.chat_verify_code('helper', 'ana@example.com', 'x', '10.6.6.6', '2030-01-01 12:01Z');
select public.chat_verify_code('helper', 'ana@example.com', 'x', '10.6.6.6', '2030-01-01 12:01Z');
select is(public.chat_verify_code('helper', 'ana@example.com', 'x', '10.6.6.6', '2030-01-01 12:01Z') - 'status' - 'outcome',
  '{"code": "INVALID_CODE", "error": "Wrong code; 1 attempt left before a 15-minute lock-out", "attemptsLeft": 1}'::jsonb, 'Wrong codes are counted per client address');
select is(public.chat_verify_code('helper', 'ana@example.com', 'x', '10.6.6.6', '2030-01-01 12:02Z') ->> 'code', 'TOO_MANY_ATTEMPTS', 'The fifth wrong code locks that client out');
select is(public.chat_verify_code('helper', 'ana@example.com', (select body ->> 'code' from chats where label = 'code5'), '10.6.6.6', '2030-01-01 12:03Z') ->> 'retryAfter', '840',
  'even with the right code, told how long');
select is(public.chat_verify_code('helper', 'ana@example.com', (select body ->> 'code' from chats where label = 'code5'), '10.0.0.7', '2030-01-01 12:04Z') ->> 'subject', 'ana@example.com',
  'but the code is not void and its owner, from her own address, is not locked out');
select is(public.admit_chat_run('helper', (select body - 'status' from chats where label = 'bob'),
  'Hello', 'conv-bob') ->> 'status', '200', 'A session of an allowed address is admitted');
insert into chats select 'code6', public.chat_request_code('helper', 'ana@example.com', '2030-01-01 13:00Z');
select public.chat_verify_code('helper', 'ana@example.com', 'x', '10.8.0.' || (n % 6), '2030-01-01 13:01Z') from generate_series(1, 24) n;
select is(public.chat_verify_code('helper', 'ana@example.com', 'x', '10.8.1.1', '2030-01-01 13:02Z') ->> 'code', 'TOO_MANY_ATTEMPTS',
  'The 25th wrong code of a chat, from any addresses, closes its sign-ins');
select is(public.chat_verify_code('helper', 'ana@example.com', (select body ->> 'code' from chats where label = 'code6'), '10.8.2.1', '2030-01-01 13:03Z') ->> 'code', 'TOO_MANY_ATTEMPTS',
  'so a spread-out guesser is capped per chat: even the right code waits');
select is(public.chat_request_code('helper', 'ana@example.com', '2030-01-01 13:04Z') ->> 'status', '202', 'A code request is still answered 202');
reset role;
insert into workflows_private.chat_sessions (chat_id, subject, created_at, expires_at)
  select id, 'old@team.example', '2030-01-01 00:00Z', '2030-01-02 00:00Z' from public.chat_deployments where identifier = 'helper';
select workflows_private.expire_chat_records('2030-01-03 00:00Z');
select is((select count(*)::int from workflows_private.chat_sessions where subject = 'old@team.example'), 0, 'Expired sessions are deleted daily');
select pg_temp.as_service();

-- Who may call the endpoint's functions ------------------------------------------------------------

reset role;
select pg_temp.act_as('b0000000-0000-4000-8000-000000000001');
select throws_ok($$select public.chat_request_code('helper', 'ana@example.com')$$, '42501', null, 'Only the service role issues codes (the answer holds the code)');
select throws_ok($$select public.admit_chat_run('helper', null, 'Hello', 'c')$$, '42501', null, 'and admits chat runs');
select throws_ok($$select public.end_chat_session('helper', gen_random_uuid()::text)$$, '42501', null, 'and ends sessions');
select throws_ok($$select public.chat_session_active('helper', gen_random_uuid()::text)$$, '42501', null, 'and tells whether one is open');
select public.undeploy_chat('b1000000-0000-4000-8000-000000000001');
reset role;
select is((select count(*)::int from public.chat_deployments), 0, 'Undeploying the chat removes it');

select * from finish();
rollback;
