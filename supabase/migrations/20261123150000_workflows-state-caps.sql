-- Workflow service: caps on a workflow state's size, block count and edge count, checked before
-- anything else (state/state-caps.ts has the same caps for the TypeScript validator; the parity test
-- holds them together), and a validator that stays fast up to them. A 4,000-block state used to run
-- into the signed-in save's 8 s statement timeout (57014) and a 5 MB state was saved without
-- complaint; both are now refused at once with one issue naming the cap.
--
-- The function is the one of `..._workflows-validation.sql` with two changes: the caps at the
-- start, and what each block reaches through the edges computed once into a jsonb map, which the
-- cycle check and each reference's upstream check read, where every reference used to walk the
-- edges again (500 blocks with 20 references each took 8.5 s). Nothing else differs, so it reports
-- the same issues as before for every state within the caps.

/**
 * Every issue of a workflow state, as a JSON array of {code, message, blockId?, blockName?, edgeId?,
 * field}. `p_mode` 'save' accepts work in progress; 'deploy' also requires an enabled trigger. The
 * order of checks and the codes and fields follow validation.ts exactly; rules that depend on an
 * order read blocks and containers sorted by id (collation "C", as JavaScript compares strings).
 */
create or replace function workflows_private.state_issues(p_state jsonb, p_mode text default 'save')
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  v_issues jsonb;
  v_blocks jsonb;
  v_edges jsonb;
  v_loops jsonb;
  v_parallels jsonb;
  v_key text;
  v_block jsonb;
  v_norm text;
  v_by_name jsonb := '{}'::jsonb;
  v_invalid text[] := '{}'::text[];
  v_schema jsonb;
  v_config_issues jsonb;
  v_parent jsonb := '{}'::jsonb;
  v_kind text;
  v_sid text;
  v_settings jsonb;
  v_field text;
  v_container jsonb;
  v_node text;
  v_node_block jsonb;
  v_index bigint;
  v_circular text[] := '{}'::text[];
  v_seen text[];
  v_current text;
  v_edge jsonb;
  v_source jsonb;
  v_target jsonb;
  v_handle text;
  v_edge_ids text[] := '{}'::text[];
  v_pairs text[] := '{}'::text[];
  v_pair text;
  v_problem text;
  v_prefix text;
  v_adjacency jsonb := '[]'::jsonb;
  v_has_cycle boolean := false;
  v_row record;
  v_chain text[];
  v_assigned text[];
  v_api text;
  v_target_key text;
  v_target_scope text;
  v_local text;
  v_reach jsonb;
  v_size bigint;
  v_count bigint;
begin
  -- Caps first (state-caps.ts): past one, only the cap is reported and nothing else is looked at,
  -- so the answer comes at once instead of after validating for longer than a save may take.
  v_issues := '[]'::jsonb;
  v_size := octet_length(p_state::text);
  if v_size > 2097152 then
    v_issues := v_issues || workflows_private.issue('state_too_large', format('The workflow state is %s bytes of JSON; a workflow may have at most 2,097,152', to_char(v_size, 'FM999,999,999,999')), null, null, null, 'state');
  end if;
  if jsonb_typeof(p_state -> 'blocks') = 'object' then
    select count(*) into v_count from jsonb_object_keys(p_state -> 'blocks');
    if v_count > 500 then
      v_issues := v_issues || workflows_private.issue('too_many_blocks', format('The workflow has %s blocks; a workflow may have at most 500', to_char(v_count, 'FM999,999,999')), null, null, null, 'blocks');
    end if;
  end if;
  if jsonb_typeof(p_state -> 'edges') = 'array' and jsonb_array_length(p_state -> 'edges') > 2000 then
    v_issues := v_issues || workflows_private.issue('too_many_edges', format('The workflow has %s edges; a workflow may have at most 2,000', to_char(jsonb_array_length(p_state -> 'edges'), 'FM999,999,999')), null, null, null, 'edges');
  end if;
  if jsonb_array_length(v_issues) > 0 then
    return v_issues;
  end if;

  -- The envelope, against the state's JSON Schema.
  select coalesce(jsonb_agg(workflows_private.issue('invalid_shape', 'Workflow state: ' || coalesce(nullif(i.path, ''), 'state') || ' ' || i.detail, null, null, null, coalesce(nullif(i.path, ''), 'state'))), '[]'::jsonb)
    into v_issues
    from workflows_private.json_schema_issues((select s.schema from workflows_private.schemas s where s.name = 'state'), p_state, '') i;
  if jsonb_array_length(v_issues) > 0 then
    return v_issues;
  end if;
  v_blocks := coalesce(p_state -> 'blocks', '{}'::jsonb);
  v_edges := coalesce(p_state -> 'edges', '[]'::jsonb);
  v_loops := coalesce(p_state -> 'loops', '{}'::jsonb);
  v_parallels := coalesce(p_state -> 'parallels', '{}'::jsonb);
  -- zod's defaults, so later rules read blocks exactly as validation.ts does.
  select coalesce(jsonb_object_agg(b.key, b.value || jsonb_build_object('config', coalesce(b.value -> 'config', '{}'::jsonb), 'enabled', coalesce(b.value -> 'enabled', 'true'::jsonb))), '{}'::jsonb)
    into v_blocks from jsonb_each(v_blocks) as b(key, value);

  -- Blocks: ids, names, types, configs.
  for v_key, v_block in select b.key, b.value from jsonb_each(v_blocks) as b(key, value) order by b.key collate "C" loop
    if v_block ->> 'id' <> v_key then
      v_issues := v_issues || workflows_private.block_issue(v_block, 'block_id_mismatch', 'blocks.' || v_key || '.id', format('its id "%s" differs from its key "%s"', v_block ->> 'id', v_key));
    end if;
    v_norm := workflows_private.normalize_block_name(v_block ->> 'name');
    if v_norm !~ '^[a-z0-9_-]+$' then
      v_issues := v_issues || workflows_private.block_issue(v_block, 'invalid_block_name', 'blocks.' || v_key || '.name',
        format('the name may contain only letters, digits, spaces, "_" and "-", so it can be referenced as <%s.field>', coalesce(nullif(v_norm, ''), 'name')));
    elsif v_norm in ('loop', 'parallel', 'variable') then
      v_issues := v_issues || workflows_private.block_issue(v_block, 'reserved_block_name', 'blocks.' || v_key || '.name', format('"%s" is reserved for <%s.…> references', v_norm, v_norm));
    elsif v_by_name ? v_norm then
      v_issues := v_issues || workflows_private.block_issue(v_block, 'duplicate_block_name', 'blocks.' || v_key || '.name',
        format('the name is the same as block "%s" once normalised ("%s")', v_blocks -> (v_by_name ->> v_norm) ->> 'name', v_norm));
    else
      v_by_name := v_by_name || jsonb_build_object(v_norm, v_key);
    end if;
    select t.config_schema into v_schema from workflows_private.block_types t where t.type = v_block ->> 'type';
    if not found then
      v_issues := v_issues || workflows_private.block_issue(v_block, 'unknown_block_type', 'blocks.' || v_key || '.type',
        format('"%s" is not a block type (known: %s)', v_block ->> 'type', (select string_agg(t.type, ', ' order by t.position) from workflows_private.block_types t)));
      v_invalid := v_invalid || v_key;
      continue;
    end if;
    select coalesce(jsonb_agg(workflows_private.block_issue(v_block, 'invalid_config', i.path, i.path || ' ' || i.detail)), '[]'::jsonb)
      into v_config_issues
      from workflows_private.json_schema_issues(v_schema, v_block -> 'config', 'blocks.' || v_key || '.config') i;
    if jsonb_array_length(v_config_issues) > 0 then
      v_invalid := v_invalid || v_key;
      v_issues := v_issues || v_config_issues;
    else
      v_issues := v_issues || coalesce((select jsonb_agg(i) from workflows_private.block_config_issues(v_block) i), '[]'::jsonb);
    end if;
  end loop;

  -- Loops and parallels: each container with its settings, and who is in which body.
  for v_key, v_block in select b.key, b.value from jsonb_each(v_blocks) as b(key, value) order by b.key collate "C" loop
    if v_block ->> 'type' = 'loop' and not v_loops ? (v_block ->> 'id') then
      v_issues := v_issues || workflows_private.block_issue(v_block, 'missing_subflow', 'loops.' || (v_block ->> 'id'), format('a loop block needs its settings in loops.%s', v_block ->> 'id'));
    end if;
    if v_block ->> 'type' = 'parallel' and not v_parallels ? (v_block ->> 'id') then
      v_issues := v_issues || workflows_private.block_issue(v_block, 'missing_subflow', 'parallels.' || (v_block ->> 'id'), format('a parallel block needs its settings in parallels.%s', v_block ->> 'id'));
    end if;
  end loop;
  for v_kind, v_sid, v_settings in
    select s.kind, s.id, s.settings from (
      select 'loop' as kind, l.key as id, l.value as settings from jsonb_each(v_loops) as l(key, value)
      union all
      select 'parallel', p.key, p.value from jsonb_each(v_parallels) as p(key, value)
    ) s order by s.id collate "C", s.kind collate "C"
  loop
    v_field := case v_kind when 'loop' then 'loops.' else 'parallels.' end || v_sid;
    v_container := v_blocks -> v_sid;
    if v_container is null or v_container ->> 'type' <> v_kind then
      v_issues := v_issues || workflows_private.issue('missing_subflow', format('%s belongs to no %s block with id "%s"', v_field, v_kind, v_sid), null, null, null, v_field);
      continue;
    end if;
    for v_node, v_index in select n.value, n.ordinality - 1 from jsonb_array_elements_text(v_settings -> 'nodes') with ordinality as n(value, ordinality) loop
      v_node_block := v_blocks -> v_node;
      if v_node_block is null or v_node = v_sid then
        v_issues := v_issues || workflows_private.block_issue(v_container, 'subflow_member', format('%s.nodes[%s]', v_field, v_index),
          case when v_node_block is null then format('its body lists "%s", which is not a block', v_node) else format('a %s cannot contain itself', v_kind) end);
      elsif v_parent ? v_node then
        v_issues := v_issues || workflows_private.block_issue(v_container, 'subflow_member', format('%s.nodes[%s]', v_field, v_index), format('"%s" is already in the body of another loop or parallel', v_node_block ->> 'name'));
      elsif v_node_block ->> 'type' = 'response' or exists (select 1 from workflows_private.block_types t where t.type = v_node_block ->> 'type' and t.category = 'trigger') then
        v_issues := v_issues || workflows_private.block_issue(v_node_block, 'misplaced_block', format('%s.nodes[%s]', v_field, v_index),
          case when v_node_block ->> 'type' = 'response' then 'a Response' else 'a trigger' end || ' cannot be inside a loop or parallel');
      else
        v_parent := v_parent || jsonb_build_object(v_node, v_sid);
      end if;
    end loop;
    if v_kind = 'loop' and v_settings ->> 'loopType' = 'for' and not v_settings ? 'iterations' then
      v_issues := v_issues || workflows_private.block_issue(v_container, 'invalid_subflow', v_field || '.iterations', 'a `for` loop needs `iterations`');
    elsif v_kind = 'loop' and v_settings ->> 'loopType' = 'forEach' and not v_settings ? 'forEachItems' then
      v_issues := v_issues || workflows_private.block_issue(v_container, 'invalid_subflow', v_field || '.forEachItems', 'a `forEach` loop needs `forEachItems`');
    elsif v_kind = 'parallel' and v_settings ->> 'parallelType' = 'count' and not v_settings ? 'count' then
      v_issues := v_issues || workflows_private.block_issue(v_container, 'invalid_subflow', v_field || '.count', 'a `count` parallel needs `count`');
    elsif v_kind = 'parallel' and v_settings ->> 'parallelType' = 'collection' and not v_settings ? 'distribution' then
      v_issues := v_issues || workflows_private.block_issue(v_container, 'invalid_subflow', v_field || '.distribution', 'a `collection` parallel needs `distribution`');
    end if;
    if jsonb_array_length(v_settings -> 'nodes') = 0 then
      v_issues := v_issues || workflows_private.block_issue(v_container, 'subflow_without_start', v_field || '.nodes', 'its body is empty');
    end if;
  end loop;
  -- Containers nested in each other's bodies in a circle: report them and stop.
  for v_key in select k from jsonb_object_keys(v_parent) as k order by k collate "C" loop
    v_seen := array[v_key];
    v_current := v_parent ->> v_key;
    while v_current is not null and not v_current = any(v_seen) loop
      v_seen := v_seen || v_current;
      v_current := v_parent ->> v_current;
    end loop;
    if v_current is not null then
      v_circular := v_circular || v_seen[array_position(v_seen, v_current):];
    end if;
  end loop;
  if cardinality(v_circular) > 0 then
    for v_key in select d.id from (select distinct c.id from unnest(v_circular) as c(id)) d order by d.id collate "C" loop
      v_block := v_blocks -> v_key;
      v_issues := v_issues || workflows_private.block_issue(v_block, 'subflow_member',
        case when v_block ->> 'type' = 'loop' then 'loops.' else 'parallels.' end || v_key || '.nodes', 'loops and parallels contain each other in a circle');
    end loop;
    return v_issues;
  end if;

  -- Edges, in order.
  for v_edge, v_index in select e.value, e.ordinality - 1 from jsonb_array_elements(v_edges) with ordinality as e(value, ordinality) loop
    v_source := v_blocks -> (v_edge ->> 'source');
    v_target := v_blocks -> (v_edge ->> 'target');
    v_handle := v_edge ->> 'sourceHandle';
    v_field := format('edges[%s]', v_index);
    v_prefix := format('Edge "%s"%s: ', v_edge ->> 'id', case when v_source is not null then format(' from "%s"', v_source ->> 'name') else '' end);
    if (v_edge ->> 'id') = any(v_edge_ids) then
      v_issues := v_issues || workflows_private.issue('duplicate_edge_id', v_prefix || 'the id is used by another edge', v_source ->> 'id', v_source ->> 'name', v_edge ->> 'id', v_field || '.id');
    end if;
    v_edge_ids := v_edge_ids || (v_edge ->> 'id');
    v_problem := null;
    v_key := null;
    if v_source is null then
      v_problem := format('source "%s" is not a block', v_edge ->> 'source');
      v_key := 'dangling_edge|.source';
    elsif v_target is null then
      v_problem := format('target "%s" is not a block', v_edge ->> 'target');
      v_key := 'dangling_edge|.target';
    elsif v_edge ->> 'source' = v_edge ->> 'target' then
      v_problem := 'a block cannot connect to itself';
      v_key := 'self_edge|.target';
    else
      -- Handles depend on the source's config, so they are only checked once both ends are sound.
      if not ((v_edge ->> 'source') = any(v_invalid) or (v_edge ->> 'target') = any(v_invalid)) then
        v_problem := workflows_private.handle_problem(v_source, v_handle);
      end if;
      if v_problem is not null then
        v_key := 'invalid_edge_handle|.sourceHandle';
      else
        v_pair := jsonb_build_array(v_edge ->> 'source', v_edge ->> 'target', coalesce(v_handle, ''))::text;
        if v_pair = any(v_pairs) then
          v_problem := format('"%s" is already connected to "%s" this way', v_source ->> 'name', v_target ->> 'name');
          v_key := 'duplicate_edge|.target';
        else
          v_pairs := v_pairs || v_pair;
          if exists (select 1 from workflows_private.block_types t where t.type = v_target ->> 'type' and t.category = 'trigger') then
            v_problem := format('trigger "%s" cannot have incoming edges', v_target ->> 'name');
            v_key := 'trigger_has_incoming_edge|.target';
          elsif v_source ->> 'type' = 'response' then
            v_problem := 'a Response ends the run, so nothing can follow it';
            v_key := 'response_has_outgoing_edge|.source';
          elsif v_handle in ('loop-start', 'parallel-start') then
            if (v_parent ->> (v_edge ->> 'target')) is distinct from (v_edge ->> 'source') then
              v_problem := format('a %s edge must lead to a block inside "%s"', v_handle, v_source ->> 'name');
              v_key := 'cross_scope_edge|.target';
            end if;
          elsif (v_parent ->> (v_edge ->> 'source')) is distinct from (v_parent ->> (v_edge ->> 'target')) then
            v_problem := format('"%s" and "%s" are not in the same loop or parallel body; edges cannot cross a body''s border', v_source ->> 'name', v_target ->> 'name');
            v_key := 'cross_scope_edge|.target';
          else
            v_adjacency := v_adjacency || jsonb_build_array(jsonb_build_array(v_edge ->> 'source', v_edge ->> 'target'));
          end if;
        end if;
      end if;
    end if;
    if v_problem is not null then
      v_issues := v_issues || workflows_private.issue(split_part(v_key, '|', 1), v_prefix || v_problem, v_source ->> 'id', v_source ->> 'name', v_edge ->> 'id', v_field || split_part(v_key, '|', 2));
    end if;
  end loop;
  for v_kind, v_sid, v_settings in
    select s.kind, s.id, s.settings from (
      select 'loop' as kind, l.key as id, l.value as settings from jsonb_each(v_loops) as l(key, value)
      union all
      select 'parallel', p.key, p.value from jsonb_each(v_parallels) as p(key, value)
    ) s order by s.id collate "C", s.kind collate "C"
  loop
    v_container := v_blocks -> v_sid;
    continue when v_container is null or v_container ->> 'type' <> v_kind or jsonb_array_length(v_settings -> 'nodes') = 0;
    if not exists (select 1 from jsonb_array_elements(v_edges) e where e.value ->> 'source' = v_sid and e.value ->> 'sourceHandle' = v_kind || '-start') then
      v_issues := v_issues || workflows_private.block_issue(v_container, 'subflow_without_start', case v_kind when 'loop' then 'loops.' else 'parallels.' end || v_sid,
        format('no "%s-start" edge leads into its body', v_kind));
    end if;
  end loop;

  -- What each block reaches through the edges, computed once: {source: {target: true}}. The cycle
  -- check and every reference's upstream check read it (one lookup each) instead of walking the
  -- edges again per reference.
  with recursive adjacency(source, target) as (
    select a.value ->> 0, a.value ->> 1 from jsonb_array_elements(v_adjacency) as a(value)
  ), reach(source, target) as (
    select adjacency.source, adjacency.target from adjacency
    union
    select reach.source, adjacency.target from reach join adjacency on adjacency.source = reach.target
  )
  select coalesce(jsonb_object_agg(r.source, r.targets), '{}'::jsonb) into v_reach
    from (select reach.source, jsonb_object_agg(reach.target, true) as targets from reach group by reach.source) r;

  -- Cycles: each group of blocks that reach one another, once, on its first id.
  for v_row in
    with reach(source, target) as (
      select s.key, t.key from jsonb_each(v_reach) as s(key, value) cross join lateral jsonb_object_keys(s.value) as t(key)
    ), groups as (
      select array_agg(r.target order by r.target collate "C") as members
      from reach r
      where v_reach -> r.source ? r.source
        and v_reach -> r.target ? r.source
      group by r.source
    )
    select distinct g.members from groups g
  loop
    v_has_cycle := true;
    v_issues := v_issues || workflows_private.block_issue(v_blocks -> (v_row.members[1]), 'cycle', 'blocks.' || v_row.members[1],
      format('edges form a cycle through %s; use a loop to repeat blocks', (select string_agg(format('"%s"', v_blocks -> m.id ->> 'name'), ', ' order by m.ord) from unnest(v_row.members) with ordinality as m(id, ord))));
  end loop;

  -- Triggers.
  for v_key in
    select b.value ->> 'id' from jsonb_each(v_blocks) as b(key, value) where b.value ->> 'type' = 'api_trigger' order by b.value ->> 'id' collate "C" offset 1
  loop
    v_issues := v_issues || workflows_private.block_issue(v_blocks -> v_key, 'multiple_api_triggers', 'blocks.' || v_key || '.type',
      format('a workflow may have only one API trigger ("%s" is the first)', (select b.value ->> 'name' from jsonb_each(v_blocks) as b(key, value) where b.value ->> 'type' = 'api_trigger' order by b.value ->> 'id' collate "C" limit 1)));
  end loop;
  if p_mode = 'deploy' and not exists (
    select 1 from jsonb_each(v_blocks) as b(key, value) join workflows_private.block_types t on t.type = b.value ->> 'type'
    where t.category = 'trigger' and (b.value ->> 'enabled')::boolean
  ) then
    v_issues := v_issues || workflows_private.issue('no_trigger', 'The workflow has no enabled trigger block, so nothing can start it', null, null, null, 'blocks');
  end if;

  -- References: each must name a block that runs before the block reading it.
  if v_has_cycle then
    return v_issues;
  end if;
  select coalesce(array_agg(a.value ->> 'name'), '{}') into v_assigned
    from jsonb_each(v_blocks) as b(key, value)
    cross join lateral jsonb_array_elements(case when jsonb_typeof(b.value -> 'config' -> 'assignments') = 'array' then b.value -> 'config' -> 'assignments' else '[]'::jsonb end) as a(value)
    where b.value ->> 'type' = 'variables';
  select b.key into v_api from jsonb_each(v_blocks) as b(key, value) where b.value ->> 'type' = 'api_trigger' order by b.key collate "C" limit 1;
  for v_key, v_block in select b.key, b.value from jsonb_each(v_blocks) as b(key, value) loop
    continue when exists (select 1 from workflows_private.block_types t where t.type = v_block ->> 'type' and t.category = 'trigger');
    v_chain := '{}'::text[];
    v_current := v_parent ->> (v_block ->> 'id');
    while v_current is not null loop
      v_chain := v_chain || v_current;
      v_current := v_parent ->> v_current;
    end loop;
    for v_row in
      select s.path, r.head, r.first_segment, r.raw
      from (
        select * from workflows_private.json_strings(v_block -> 'config', 'blocks.' || (v_block ->> 'id') || '.config')
        union all
        select * from workflows_private.json_strings(jsonb_strip_nulls(jsonb_build_object('iterations', v_loops -> (v_block ->> 'id') -> 'iterations', 'forEachItems', v_loops -> (v_block ->> 'id') -> 'forEachItems')), 'loops.' || (v_block ->> 'id'))
          where v_block ->> 'type' = 'loop' and v_loops ? (v_block ->> 'id')
        union all
        select * from workflows_private.json_strings(jsonb_strip_nulls(jsonb_build_object('count', v_parallels -> (v_block ->> 'id') -> 'count', 'distribution', v_parallels -> (v_block ->> 'id') -> 'distribution')), 'parallels.' || (v_block ->> 'id'))
          where v_block ->> 'type' = 'parallel' and v_parallels ? (v_block ->> 'id')
      ) s
      cross join lateral workflows_private.references_in(s.value) r
    loop
      if v_row.head in ('loop', 'parallel') then
        if not exists (select 1 from unnest(v_chain) as c(id) where v_blocks -> c.id ->> 'type' = v_row.head) then
          v_issues := v_issues || workflows_private.block_issue(v_block, 'reference_outside_subflow', v_row.path, format('%s is only available inside a %s', v_row.raw, v_row.head));
        elsif v_row.first_segment not in ('index', 'item', 'items') then
          v_issues := v_issues || workflows_private.block_issue(v_block, 'unknown_reference', v_row.path, format('%s : a %s offers only index, item and items', v_row.raw, v_row.head));
        end if;
        continue;
      end if;
      if v_row.head = 'variable' then
        if not v_row.first_segment = any(v_assigned) then
          v_issues := v_issues || workflows_private.block_issue(v_block, 'unknown_reference', v_row.path, format('%s : no Variables block sets "%s"', v_row.raw, v_row.first_segment));
        end if;
        continue;
      end if;
      v_target_key := coalesce(v_by_name ->> v_row.head, case when v_row.head = 'api' then v_api end);
      if v_target_key is null then
        v_issues := v_issues || workflows_private.block_issue(v_block, 'unknown_reference', v_row.path, format('%s names no block (block names are lower-cased, without spaces)', v_row.raw));
        continue;
      end if;
      if v_target_key = v_block ->> 'id' then
        v_issues := v_issues || workflows_private.block_issue(v_block, 'reference_not_upstream', v_row.path, format('%s is this block''s own output', v_row.raw));
        continue;
      end if;
      if v_target_key = any(v_chain) then
        if v_row.first_segment not in ('index', 'item', 'items') then
          v_issues := v_issues || workflows_private.block_issue(v_block, 'reference_not_upstream', v_row.path,
            format('%s : inside "%s" only its index, item and items exist; its results come after it ends', v_row.raw, v_blocks -> v_target_key ->> 'name'));
        end if;
        continue;
      end if;
      v_target_scope := v_parent ->> v_target_key;
      if v_target_scope is not null and not v_target_scope = any(v_chain) then
        v_issues := v_issues || workflows_private.block_issue(v_block, 'reference_into_subflow', v_row.path,
          format('%s reads a block inside "%s" from outside it; use <%s.results>', v_row.raw, v_blocks -> v_target_scope ->> 'name', workflows_private.normalize_block_name(v_blocks -> v_target_scope ->> 'name')));
        continue;
      end if;
      v_local := case
        when v_target_scope is null then coalesce(v_chain[cardinality(v_chain)], v_block ->> 'id')
        when array_position(v_chain, v_target_scope) = 1 then v_block ->> 'id'
        else v_chain[array_position(v_chain, v_target_scope) - 1]
      end;
      if not coalesce(v_reach -> v_target_key ? v_local, false) then
        v_issues := v_issues || workflows_private.block_issue(v_block, 'reference_not_upstream', v_row.path,
          format('%s reads "%s", which does not run before this block (connect it upstream)', v_row.raw, v_blocks -> v_target_key ->> 'name'));
      end if;
    end loop;
  end loop;
  return v_issues;
end;
$$;
comment on function workflows_private.state_issues(jsonb, text) is 'Validates a workflow state (mode save or deploy) and returns every issue as a JSON array; mirrors validate.ts, caps first (state-caps.ts).';
