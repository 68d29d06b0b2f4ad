-- Workflow service: block rules and choice handles are catalogue data, read by one interpreter.
begin;
select plan(13);

insert into auth.users (id, email, aud, role) values ('a2000000-0000-4000-8000-000000000001', 'rules@wf.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
-- The DETAIL of the error a statement raises (the JSON list of every issue), or null.
create function pg_temp.error_detail(p_statement text) returns jsonb language plpgsql as $$
declare v_detail text;
begin
  execute p_statement;
  return null;
exception when others then
  get stacked diagnostics v_detail = pg_exception_detail;
  return v_detail::jsonb;
end;
$$;
grant execute on function pg_temp.error_detail(text) to authenticated;

-- The catalogue holds each block type's rules and, for choosing blocks, its handles.
select is(
  (select array_agg(r ->> 'rule' order by o) from workflows_private.block_types t, jsonb_array_elements(t.rules) with ordinality as x(r, o) where t.type = 'condition'),
  array['unique', 'first_matches', 'only_first', 'only_last', 'forbids', 'requires'],
  'The Condition''s rules are stored as data, in order'
);
select is(
  (select jsonb_object_agg(type, choice) from workflows_private.block_types where choice is not null),
  '{"condition": {"prefix": "condition-", "list": "conditions", "noun": "condition"}, "router": {"prefix": "router-", "list": "routes", "noun": "route"}, "llm_router": {"prefix": "router-", "list": "routes", "noun": "route"}}'::jsonb,
  'Only Condition, Router and LLM Router choose a path, each with its handle prefix'
);
select is((select count(*) from workflows_private.block_types where rules = '[]'::jsonb), 7::bigint, 'Block types without cross-field rules store an empty list');

select pg_temp.act_as('a2000000-0000-4000-8000-000000000001');
select public.create_workspace('Rules');
insert into public.workflows (id, workspace_id, name) select 'b2000000-0000-4000-8000-000000000001', id, 'Checked' from public.workspaces;

create temporary table good as select '{
  "blocks": {
    "start": {"id": "start", "type": "manual_trigger", "name": "Start", "config": {}},
    "check": {"id": "check", "type": "condition", "name": "Check", "config": {"conditions": [{"id": "yes", "kind": "if", "expression": "true"}, {"id": "no", "kind": "else"}]}},
    "a": {"id": "a", "type": "variables", "name": "A", "config": {"assignments": [{"name": "x", "value": 1}]}}
  },
  "edges": [{"id": "e1", "source": "start", "target": "check"}, {"id": "e2", "source": "check", "target": "a", "sourceHandle": "condition-yes"}]
}'::jsonb as state;
grant select on good to authenticated;

select lives_ok($$update public.workflows set state = (select state from good)$$, 'A state keeping every rule saves');
select is(
  pg_temp.error_detail($$update public.workflows set state = jsonb_set((select state from good), '{blocks,check,config,conditions}', '[{"id": "no", "kind": "else"}, {"id": "yes", "kind": "if", "expression": "true"}]')$$),
  '[
    {"code": "invalid_block_config", "field": "blocks.check.config.conditions[0].kind", "blockId": "check", "blockName": "Check", "message": "Block \"Check\" (condition): the first condition must be \"if\""},
    {"code": "invalid_block_config", "field": "blocks.check.config.conditions[1].kind", "blockId": "check", "blockName": "Check", "message": "Block \"Check\" (condition): only the first condition may be \"if\"; use \"else if\""},
    {"code": "invalid_block_config", "field": "blocks.check.config.conditions[0].kind", "blockId": "check", "blockName": "Check", "message": "Block \"Check\" (condition): \"else\" must be the last condition"}
  ]'::jsonb,
  'A save breaking the Condition''s rules is refused with one issue per broken rule, naming the field'
);
select is(
  pg_temp.error_detail($$update public.workflows set state = jsonb_set((select state from good), '{blocks,a,config,assignments}', '[{"name": "x", "value": 1}, {"name": "x", "value": 2}]')$$) -> 0 ->> 'message',
  'Block "A" (variables): name "x" is used twice in assignments',
  'A message template is filled from the entry at fault'
);
select is(
  pg_temp.error_detail($$update public.workflows set state = jsonb_set((select state from good), '{edges,1,sourceHandle}', '"condition-maybe"')$$) -> 0 ->> 'message',
  'Edge "e2" from "Check": "condition-maybe" names no condition of this block',
  'A choice handle must name an entry of the block''s list'
);
select is(
  pg_temp.error_detail($$update public.workflows set state = jsonb_set((select state from good), '{edges,1}', '{"id": "e2", "source": "check", "target": "a"}')$$) -> 0 ->> 'message',
  'Edge "e2" from "Check": edges from a condition must use a "condition-<id>" or "error" handle',
  'A choosing block''s edges need a handle'
);
reset role;

-- The interpreter on its own.
select is(
  (select array_agg(field || ': ' || message) from workflows_private.config_rule_problems(
    '[{"rule": "forbids", "where": {"field": "method", "in": ["GET"]}, "field": "body", "message": "a {method} request has no body"}]',
    '{"method": "GET", "body": {}}', 'blocks.h.config')),
  array['blocks.h.config.body: a GET request has no body'],
  'Rules may apply to the config itself'
);
select is(
  (select array_agg(field || ': ' || message) from workflows_private.config_rule_problems(
    (select rules from workflows_private.block_types where type = 'response'),
    jsonb_build_object('headers', jsonb_build_object('X-Ok', '1', E'X-A\nB', '2', 'X B', '3')), 'blocks.r.config')),
  array[
    'blocks.r.config.headers: header name "X B" is not a valid HTTP field name (RFC 9110: letters, digits and !#$%&''*+-.^_`|~ only; no spaces or line breaks)',
    'blocks.r.config.headers: header name "X-A\nB" is not a valid HTTP field name (RFC 9110: letters, digits and !#$%&''*+-.^_`|~ only; no spaces or line breaks)'],
  'A Response header name with a space or a line break breaks its keys_match rule, each named as JSON'
);
select is(
  (select count(*) from workflows_private.config_rule_problems(
    (select rules from workflows_private.block_types where type = 'response'), '{"headers": {"X-Order": "<api.id>", "content-type": "text/plain"}}', 'c')),
  0::bigint,
  'and HTTP field names pass'
);
select throws_ok(
  $$select * from workflows_private.config_rule_problems('[{"rule": "sorted", "list": "x", "field": "id", "message": "m"}]', '{}', 'c')$$,
  'XX000', 'Unknown config rule "sorted" in the block catalogue',
  'A rule the interpreter does not know is an error, even over nothing'
);
select ok(
  not has_function_privilege('anon', 'workflows_private.config_rule_problems(jsonb, jsonb, text)', 'execute'),
  'Anonymous callers cannot run the interpreter'
);

select * from finish();
rollback;
