-- Workflow service: a state past a cap (500 blocks, 2,000 edges, 2 MiB of JSON) is refused on save
-- at once, with the cap's issue alone; a state at the caps saves (docs/workflow-limits.md).
begin;
select plan(8);

insert into auth.users (id, email, aud, role) values ('a1500000-0000-4000-8000-000000000001', 'caps@wf.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
-- The codes of the issues a statement's error lists in its DETAIL, or null when it succeeds.
create function pg_temp.issue_codes(p_statement text) returns text[] language plpgsql as $$
declare v_detail text;
begin
  execute p_statement;
  return null;
exception when check_violation then
  get stacked diagnostics v_detail = pg_exception_detail;
  return (select array_agg(i ->> 'code' order by i ->> 'code') from jsonb_array_elements(v_detail::jsonb) i);
end;
$$;
grant execute on function pg_temp.issue_codes(text) to authenticated;

-- `p_count` Variables blocks after a manual trigger, each a block of its own (no edges).
create function pg_temp.blocks(p_count integer) returns jsonb language sql as $$
  select jsonb_build_object('blocks',
    jsonb_build_object('start', '{"id": "start", "type": "manual_trigger", "name": "Start", "config": {}}'::jsonb)
    || coalesce((select jsonb_object_agg('b' || n, jsonb_build_object('id', 'b' || n, 'type', 'variables', 'name', 'B ' || n, 'config', '{"assignments": []}'::jsonb))
                 from generate_series(1, p_count - 1) n), '{}'::jsonb));
$$;
grant execute on function pg_temp.blocks(integer) to authenticated;

select pg_temp.act_as('a1500000-0000-4000-8000-000000000001');
select public.create_workspace('Caps');
insert into public.workflows (id, workspace_id, name) select 'b1500000-0000-4000-8000-000000000001', id, 'Capped' from public.workspaces;

select lives_ok($$update public.workflows set state = pg_temp.blocks(500)$$, 'A state with 500 blocks saves');
select is(pg_temp.issue_codes($$update public.workflows set state = pg_temp.blocks(501)$$), array['too_many_blocks'], 'A state with 501 blocks is refused, with that issue alone');
select throws_ok($$update public.workflows set state = pg_temp.blocks(4000)$$, '23514', 'The workflow has 4,000 blocks; a workflow may have at most 500',
  'A 4,000-block state is refused with a clear message, not a statement timeout');
select is(pg_temp.issue_codes($$update public.workflows set state = pg_temp.blocks(2) || jsonb_build_object('edges', (select jsonb_agg(jsonb_build_object('id', 'e' || n, 'source', 'nowhere', 'target', 'b1')) from generate_series(1, 2001) n))$$),
  array['too_many_edges'], 'A state with 2,001 edges is refused with that issue alone, though every edge is broken');
select is(pg_temp.issue_codes($$update public.workflows set state = jsonb_build_object('blocks', jsonb_build_object('start', jsonb_build_object('id', 'start', 'type', 'function', 'name', 'Start', 'config', jsonb_build_object('code', repeat('x', 5000000)))))$$),
  array['state_too_large'], 'A 5 MB state is refused');
select is(jsonb_array_length(public.validate_workflow_state(pg_temp.blocks(501) || '{"extra": true}'::jsonb)), 1, 'Past a cap, nothing else is looked at (not even an unknown top-level key)');
select is((public.validate_workflow_state(pg_temp.blocks(501)) -> 0 ->> 'field'), 'blocks', 'The cap issue names its field');
select is((select count(*)::integer from public.workflows w, jsonb_object_keys(w.state -> 'blocks')), 500, 'The refused saves left the 500-block draft in place');

select * from finish();
rollback;
