-- Workflow service: a Response block whose header name HTTP refuses (a line break, a space, a
-- colon) is refused when the workflow is saved, as other config rules are, instead of failing every
-- run. Header names are never templates, so the run-time check (blocks/response/headers.ts) can be
-- made at save time exactly.
--
-- The rule vocabulary (state/config-rules.ts) gains `keys_match`: every key of an object field
-- matches a pattern. The interpreter below learns it; the Response's rule itself is data, in the
-- catalogue migration generated right after this one.

/**
 * Every problem a list of config rules finds in a config, rule by rule in order and entries in
 * order, as (field path under `p_base`, message); config-rules.ts configRuleProblems is the same
 * interpreter in TypeScript. An unknown rule kind raises, so it never passes silently. Now with
 * `keys_match`: the keys of an object field must match a pattern.
 */
create or replace function workflows_private.config_rule_problems(p_rules jsonb, p_config jsonb, p_base text)
returns table (field text, message text)
language plpgsql
immutable
set search_path = ''
as $$
declare
  v_rule jsonb;
  v_list text;
  v_field text;
  v_entries jsonb;
  v_count integer;
begin
  for v_rule in select r.value from jsonb_array_elements(p_rules) with ordinality as r(value, position) order by r.position loop
    if not (v_rule ->> 'rule') = any (array['unique', 'first_matches', 'only_first', 'only_last', 'requires', 'forbids', 'reserved', 'keys_match']) then
      raise exception 'Unknown config rule "%" in the block catalogue', v_rule ->> 'rule'
        using errcode = 'XX000', hint = 'The rule vocabulary grew in state/config-rules.ts: teach workflows_private.config_rule_problems the new rule in a migration.';
    end if;
    v_list := v_rule ->> 'list';
    v_field := coalesce(v_rule ->> 'field', v_rule -> 'where' ->> 'field');
    -- The entries the rule reads, each with the path of its fields: a list's objects, or the config.
    if v_list is null then
      v_entries := jsonb_build_array(jsonb_build_object('entry', p_config, 'at', p_base));
    else
      select coalesce(jsonb_agg(jsonb_build_object('entry', e.value, 'at', format('%s.%s[%s]', p_base, v_list, e.position - 1)) order by e.position), '[]'::jsonb)
        into v_entries
        from jsonb_array_elements(case when jsonb_typeof(p_config -> v_list) = 'array' then p_config -> v_list else '[]'::jsonb end) with ordinality as e(value, position)
        where jsonb_typeof(e.value) = 'object';
    end if;
    v_count := jsonb_array_length(v_entries);
    if v_rule ->> 'rule' = 'keys_match' then
      -- One problem per key of the entry's object that breaks the pattern, keys in the order of their
      -- UTF-8 bytes (bytea compares as memcmp), as config-rules.ts orders them; `{key}` is its JSON text.
      return query
        select (x.value ->> 'at') || '.' || v_field,
          workflows_private.fill_rule_message(v_rule ->> 'message', (x.value -> 'entry') || jsonb_build_object('key', to_jsonb(k.key)::text))
        from jsonb_array_elements(v_entries) with ordinality as x(value, position)
        cross join lateral jsonb_object_keys(case when jsonb_typeof(x.value -> 'entry' -> v_field) = 'object' then x.value -> 'entry' -> v_field else '{}'::jsonb end) as k(key)
        where k.key !~ (v_rule ->> 'pattern')
        order by x.position, convert_to(k.key, 'UTF8');
      continue;
    end if;
    return query
      select (x.value ->> 'at') || '.' || v_field, workflows_private.fill_rule_message(v_rule ->> 'message', x.value -> 'entry')
      from jsonb_array_elements(v_entries) with ordinality as x(value, position)
      where case v_rule ->> 'rule'
        when 'unique' then
          jsonb_typeof(x.value -> 'entry' -> v_field) not in ('object', 'array')
          and exists (
            select 1 from jsonb_array_elements(v_entries) with ordinality as earlier(value, position)
            where earlier.position < x.position and earlier.value -> 'entry' -> v_field = x.value -> 'entry' -> v_field
          )
        when 'first_matches' then x.position = 1 and not workflows_private.rule_entry_matches(x.value -> 'entry', v_rule -> 'where')
        when 'only_first' then x.position > 1 and workflows_private.rule_entry_matches(x.value -> 'entry', v_rule -> 'where')
        when 'only_last' then x.position < v_count and workflows_private.rule_entry_matches(x.value -> 'entry', v_rule -> 'where')
        when 'requires' then
          workflows_private.rule_entry_matches(x.value -> 'entry', v_rule -> 'where')
          and not workflows_private.rule_entry_has(x.value -> 'entry', v_field, (v_rule ->> 'blankIsMissing')::boolean)
        when 'forbids' then
          workflows_private.rule_entry_matches(x.value -> 'entry', v_rule -> 'where')
          and workflows_private.rule_entry_has(x.value -> 'entry', v_field, (v_rule ->> 'blankIsMissing')::boolean)
        else -- reserved
          exists (select 1 from jsonb_array_elements(v_rule -> 'values') as v(value) where v.value = x.value -> 'entry' -> v_field)
      end
      order by x.position;
  end loop;
end;
$$;
comment on function workflows_private.config_rule_problems(jsonb, jsonb, text) is 'Interprets config rules (state/config-rules.ts) over one config; returns each problem''s field path and message.';
