-- Workflow service: block rules as data. Each block type declares the rules across its config
-- fields (blocks/<type>/rules.ts, in the vocabulary of state/config-rules.ts) and, for blocks that
-- choose a path, its handles; the catalogue stores both beside the type's JSON Schema, and the
-- functions below interpret them (block_config_issues and handle_problem know no block type by
-- name), so a new block type needs its folder and a regenerated catalogue migration, and no
-- hand-written SQL. The catalogue rows themselves are in the next, generated migration.

-- Catalogue columns ----------------------------------------------------------------------------------

-- The rule interpreter ------------------------------------------------------------------------------

/** A rule's message with each `{field}` replaced by that field of the entry (text as it is, other values as jsonb prints them). */
create function workflows_private.fill_rule_message(p_template text, p_entry jsonb)
returns text
language plpgsql
immutable
set search_path = ''
as $$
declare
  v_out text := '';
  v_rest text := p_template;
  v_field text;
  v_at integer;
begin
  loop
    v_field := (regexp_match(v_rest, '\{([A-Za-z_][A-Za-z0-9_]*)\}'))[1];
    exit when v_field is null;
    -- The first occurrence of the placeholder's text is the one the pattern matched.
    v_at := strpos(v_rest, '{' || v_field || '}');
    v_out := v_out || left(v_rest, v_at - 1)
      || coalesce(case when jsonb_typeof(p_entry -> v_field) = 'string' then p_entry ->> v_field else (p_entry -> v_field)::text end, '');
    v_rest := substr(v_rest, v_at + char_length(v_field) + 2);
  end loop;
  return v_out || v_rest;
end;
$$;
comment on function workflows_private.fill_rule_message(text, jsonb) is 'Fills the {field} placeholders of a config rule''s message from the entry at fault.';

/** Whether an entry matches a rule's filter: its field is one of `in`, or none of `notIn` (a missing field is in nothing). */
create function workflows_private.rule_entry_matches(p_entry jsonb, p_filter jsonb)
returns boolean
language sql
immutable
set search_path = ''
as $$
  select case
    when p_filter ? 'in' then
      p_entry ? (p_filter ->> 'field')
      and exists (select 1 from jsonb_array_elements(p_filter -> 'in') as v(value) where v.value = p_entry -> (p_filter ->> 'field'))
    else
      not p_entry ? (p_filter ->> 'field')
      or not exists (select 1 from jsonb_array_elements(p_filter -> 'notIn') as v(value) where v.value = p_entry -> (p_filter ->> 'field'))
  end;
$$;
comment on function workflows_private.rule_entry_matches(jsonb, jsonb) is 'True when a config entry matches a rule''s {field, in | notIn} filter.';

/** Whether an entry has a field; with `p_blank_is_missing`, text of only whitespace counts as missing. */
create function workflows_private.rule_entry_has(p_entry jsonb, p_field text, p_blank_is_missing boolean)
returns boolean
language sql
immutable
set search_path = ''
as $$
  select p_entry ? p_field
    and not (coalesce(p_blank_is_missing, false) and jsonb_typeof(p_entry -> p_field) = 'string' and (p_entry ->> p_field) ~ '^\s*$');
$$;
comment on function workflows_private.rule_entry_has(jsonb, text, boolean) is 'True when a config entry has the field (blank text counting as missing when asked).';

/**
 * Every problem a list of config rules finds in a config, rule by rule in order and entries in
 * order, as (field path under `p_base`, message): the one interpreter of the vocabulary
 * state/config-rules.ts defines. An unknown rule kind raises, so it never passes silently.
 * `keys_match`: the keys of an object field must match a pattern.
 */
create function workflows_private.config_rule_problems(p_rules jsonb, p_config jsonb, p_base text)
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
      -- UTF-8 bytes (bytea compares as memcmp), whatever order they were written in; `{key}` is its JSON text.
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

/** Rules across fields of one block's config: its type's stored rules, interpreted. */
create function workflows_private.block_config_issues(p_block jsonb)
returns setof jsonb
language sql
stable
set search_path = ''
as $$
  select workflows_private.block_issue(p_block, 'invalid_block_config', p.field, p.message)
  from workflows_private.block_types t
  cross join lateral workflows_private.config_rule_problems(t.rules, coalesce(p_block -> 'config', '{}'::jsonb), 'blocks.' || (p_block ->> 'id') || '.config') with ordinality as p(field, message, position)
  where t.type = p_block ->> 'type'
  order by p.position;
$$;
grant execute on function workflows_private.block_config_issues(jsonb) to authenticated, service_role;
comment on function workflows_private.block_config_issues(jsonb) is 'Checks a block config against its type''s stored rules; one invalid_block_config issue per problem.';

-- Access: default deny, then the validator's callers. It runs as the caller (a save through the
-- data API fires it as `authenticated`), so they need its pieces; they are pure functions over
-- their arguments.
revoke execute on function
  workflows_private.fill_rule_message(text, jsonb),
  workflows_private.rule_entry_matches(jsonb, jsonb),
  workflows_private.rule_entry_has(jsonb, text, boolean),
  workflows_private.config_rule_problems(jsonb, jsonb, text)
  from public, anon;
grant execute on function
  workflows_private.fill_rule_message(text, jsonb),
  workflows_private.rule_entry_matches(jsonb, jsonb),
  workflows_private.rule_entry_has(jsonb, text, boolean),
  workflows_private.config_rule_problems(jsonb, jsonb, text)
  to authenticated, service_role;
