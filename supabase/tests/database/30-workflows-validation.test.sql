-- Workflow service: drafts are validated on every save through the data API, naming block and field.
begin;
select plan(24);

insert into auth.users (id, email, aud, role) values ('a1000000-0000-4000-8000-000000000001', 'builder@wf.test', 'authenticated', 'authenticated');
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

select pg_temp.act_as('a1000000-0000-4000-8000-000000000001');
select public.create_workspace('Validation');
insert into public.workflows (id, workspace_id, name) select 'b1000000-0000-4000-8000-000000000001', id, 'Checked' from public.workspaces;

-- A valid state: an API trigger, a Function and a Response.
create temporary table good as select '{
  "blocks": {
    "api": {"id": "api", "type": "api_trigger", "name": "API", "config": {"inputFormat": [{"name": "n", "type": "number"}]}, "enabled": true},
    "work": {"id": "work", "type": "function", "name": "Work", "config": {"code": "return <api.n> * 2;"}, "enabled": true},
    "done": {"id": "done", "type": "response", "name": "Done", "config": {"body": "<work.result>"}, "enabled": true}
  },
  "edges": [{"id": "e1", "source": "api", "target": "work"}, {"id": "e2", "source": "work", "target": "done"}],
  "loops": {}, "parallels": {}
}'::jsonb as state;
grant select on good to authenticated;

select lives_ok($$update public.workflows set state = (select state from good)$$, 'A valid draft saves');
select is((select state -> 'blocks' -> 'work' ->> 'name' from public.workflows), 'Work', 'The saved draft is stored as sent');
select lives_ok($$update public.workflows set state = '{}'$$, 'An empty draft (work in progress, no trigger yet) saves');
select is(public.validate_workflow_state((select state from good)), '[]'::jsonb, 'validate_workflow_state finds nothing wrong with a valid state');

select throws_ok(
  $$update public.workflows set state = jsonb_set((select state from good), '{blocks,work,config}', '{}')$$,
  '23514', 'Block "Work" (function): blocks.work.config.code is required',
  'A draft missing a required config field is refused, naming the block and the field'
);
select throws_ok(
  $$update public.workflows set state = jsonb_set((select state from good), '{blocks,work,type}', '"teleport"')$$,
  '23514', null, 'A draft with an unknown block type is refused'
);
select is(
  pg_temp.error_detail($$update public.workflows set state = jsonb_set((select state from good), '{blocks,work,type}', '"teleport"')$$) -> 0 ->> 'code',
  'unknown_block_type', 'The error details carry each issue''s code'
);
select is(
  pg_temp.error_detail($$update public.workflows set state = jsonb_set((select state from good), '{edges}', '[{"id": "e1", "source": "api", "target": "ghost"}]')$$) -> 0,
  '{"code": "dangling_edge", "field": "edges[0].target", "edgeId": "e1", "blockId": "api", "blockName": "API", "message": "Edge \"e1\" from \"API\": target \"ghost\" is not a block"}'::jsonb,
  'A dangling edge is refused with the edge, its source block and the field'
);
select throws_ok(
  $$update public.workflows set state = jsonb_set((select state from good), '{edges}', (select state -> 'edges' from good) || '[{"id": "e3", "source": "done", "target": "work"}]')$$,
  '23514', 'Edge "e3" from "Done": a Response ends the run, so nothing can follow it',
  'Nothing may follow a Response'
);
select is(
  (select array_agg(i ->> 'code' order by i ->> 'code') from jsonb_array_elements(pg_temp.error_detail(
    $$update public.workflows set state = jsonb_set(jsonb_set((select state from good), '{blocks,work,config,code}', '"return <work.result>;"'), '{edges}',
      (select state -> 'edges' from good) || '[{"id": "e4", "source": "work", "target": "api"}]')$$)) i),
  array['reference_not_upstream', 'trigger_has_incoming_edge'],
  'Self references and edges into triggers are both reported'
);
select is(
  pg_temp.error_detail($$update public.workflows set state = jsonb_set((select state from good), '{blocks,done,config,body}', '"<nothing.result>"')$$) -> 0 ->> 'message',
  'Block "Done" (response): <nothing.result> names no block (block names are lower-cased, without spaces)',
  'A reference to a missing block is refused with the reference named'
);
select is(
  pg_temp.error_detail($$update public.workflows set state = jsonb_set((select state from good), '{blocks,api2}', '{"id": "api2", "type": "api_trigger", "name": "API 2", "config": {}, "enabled": true}')$$) -> 0 ->> 'code',
  'multiple_api_triggers', 'A second API trigger is refused'
);
select throws_ok(
  $$insert into public.workflows (workspace_id, name, state) select id, 'Broken', '{"blocks": [], "edges": {}}' from public.workspaces$$,
  '23514', null, 'A broken state is refused on insert too'
);
select is((select count(*) from public.workflows), 1::bigint, 'Nothing invalid was stored');

select is(
  (select array_agg(i ->> 'code') from jsonb_array_elements(public.validate_workflow_state('{}', 'deploy')) i),
  array['no_trigger'], 'In deploy mode a state needs an enabled trigger'
);
select is(
  (select array_agg(i ->> 'field' order by i ->> 'field') from jsonb_array_elements(public.validate_workflow_state(
    '{"blocks": {"w": {"id": "w", "type": "wait", "name": "W", "config": {"amount": -1, "unit": "hours", "extra": 1}}}}')) i),
  array['blocks.w.config.amount', 'blocks.w.config.extra', 'blocks.w.config.unit'],
  'Every wrong config field is reported, each on its own'
);
reset role;

-- The JSON Schema validator on its own.
select is((select array_agg(detail) from workflows_private.json_schema_issues('{"type": "integer"}', '1.5', '')), array['must be an integer'], 'integer means a number without fraction');
select is((select count(*) from workflows_private.json_schema_issues('{"type": "integer"}', '2.0', '')), 0::bigint, '2.0 is an integer');
select is((select array_agg(detail) from workflows_private.json_schema_issues('{"type": ["number", "null"]}', '"x"', 'n')), array['must be a number or a null'], 'A list of types accepts any of them');
select is((select array_agg(path || ' ' || detail) from workflows_private.json_schema_issues('{"type": "object", "properties": {"a": {"type": "string", "minLength": 2}}, "required": ["a", "b"], "additionalProperties": false}', '{"a": "x", "c": 1}', 'cfg')),
  array['cfg.b is required', 'cfg.a must have at least 2 characters', 'cfg.c is not a known field'], 'Objects: required, properties and unknown fields');
select is((select array_agg(path || ' ' || detail) from workflows_private.json_schema_issues('{"type": "array", "maxItems": 2, "items": {"enum": ["a", "b"]}}', '["a", "z", "b"]', 'list')),
  array['list must have at most 2 items', 'list[1] must be one of "a", "b"'], 'Arrays: size and items');
select is((select array_agg(detail) from workflows_private.json_schema_issues('{"anyOf": [{"type": "integer", "maximum": 10}, {"type": "string"}]}', '11', 'x')), array['has the wrong type or is out of range'], 'anyOf needs one branch to pass');
select is((select array_agg(detail) from workflows_private.json_schema_issues('{"type": "string", "pattern": "^[a-z]+$"}', '"A1"', 'x')), array['does not have the expected format (/^[a-z]+$/)'], 'Patterns are regular expressions');
select is((select array_agg(detail) from workflows_private.json_schema_issues('{"type": "number", "minimum": 1, "exclusiveMaximum": 5}', '5', 'x')), array['must be less than 5'], 'Number bounds');

select * from finish();
rollback;
