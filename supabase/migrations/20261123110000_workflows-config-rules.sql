-- Workflow service: block rules as data. Each block type declares the rules across its config
-- fields (blocks/<type>/rules.ts, in the vocabulary of state/config-rules.ts) and, for blocks that
-- choose a path, its handles; the catalogue stores both beside the type's JSON Schema, and the
-- functions below interpret them. They replace the per-block PL/pgSQL of
-- `..._workflows-validation.sql` (block_config_issues and handle_problem knew each block type by
-- name), so a new block type needs its folder and a generated catalogue migration, and no
-- hand-written SQL. The catalogue rows themselves are in the next, generated migration.

-- Catalogue columns ----------------------------------------------------------------------------------

alter table workflows_private.block_types
  add column rules jsonb not null default '[]'::jsonb,
  add column choice jsonb;
comment on column workflows_private.block_types.rules is 'Rules across config fields, as state/config-rules.ts defines them: [{rule, list?, field?, where?, values?, blankIsMissing?, message}].';
comment on column workflows_private.block_types.choice is 'For blocks that choose a path (Condition, Router): {prefix, list, noun}; an edge handle `<prefix><id>` must name the id of an entry of the config list `list`. Null otherwise.';

-- The rule interpreter ------------------------------------------------------------------------------

/** A rule's message with each `{field}` replaced by that field of the entry (config-rules.ts fillMessage). */
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
 * order, as (field path under `p_base`, message); config-rules.ts configRuleProblems is the same
 * interpreter in TypeScript. An unknown rule kind raises, so it never passes silently.
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
    if not (v_rule ->> 'rule') = any (array['unique', 'first_matches', 'only_first', 'only_last', 'requires', 'forbids', 'reserved']) then
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

/** Rules across fields of one block's config: its type's stored rules, interpreted (state/validate.ts checkBlockConfig). */
create or replace function workflows_private.block_config_issues(p_block jsonb)
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
comment on function workflows_private.block_config_issues(jsonb) is 'Checks a block config against its type''s stored rules; one invalid_block_config issue per problem.';

/**
 * Why an edge handle is not allowed on its source block, or null when it is (validate.ts
 * checkHandle): a choosing block's handles name entries of its list, containers have their
 * `<type>-start` handle, triggers have no error port.
 */
create or replace function workflows_private.handle_problem(p_source jsonb, p_handle text)
returns text
language plpgsql
stable
set search_path = ''
as $$
declare
  v_type text := p_source ->> 'type';
  v_category text;
  v_choice jsonb;
  v_prefix text;
begin
  select t.category, t.choice into v_category, v_choice from workflows_private.block_types t where t.type = v_type;
  v_prefix := v_choice ->> 'prefix';
  if p_handle is null then
    return case when v_choice is not null then format('edges from a %s must use a "%s<id>" or "error" handle', v_type, v_prefix) end;
  end if;
  if p_handle = 'error' then
    return case when v_category = 'trigger' then 'a trigger has no error port' end;
  end if;
  if v_choice is not null and left(p_handle, char_length(v_prefix)) = v_prefix then
    return case
      when exists (
        select 1
        from jsonb_array_elements(case when jsonb_typeof(p_source -> 'config' -> (v_choice ->> 'list')) = 'array' then p_source -> 'config' -> (v_choice ->> 'list') else '[]'::jsonb end) as e(value)
        where e.value -> 'id' = to_jsonb(substr(p_handle, char_length(v_prefix) + 1))
      ) then null
      else format('"%s" names no %s of this block', p_handle, v_choice ->> 'noun')
    end;
  end if;
  if v_category = 'container' and p_handle = v_type || '-start' then
    return null;
  end if;
  return format('"%s" is not a handle a %s block has', p_handle, v_type);
end;
$$;
comment on function workflows_private.handle_problem(jsonb, text) is 'Checks an edge handle against its source block''s catalogue entry; returns the problem or null.';

-- The old per-block helper is no longer used: uniqueness is a rule now.
drop function workflows_private.repeats(jsonb, text);

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
