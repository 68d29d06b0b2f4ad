-- The plain-text rule (shared_private.is_plain_text): which characters it refuses in single-line
-- and multi-line text, the cleaning applied to auth metadata names, who may run it, and that every
-- typed name, title and description of the three services carries it as a CHECK constraint.
begin;
select plan(13);

select ok(
  (select bool_and(shared_private.is_plain_text(v)) from unnest(array[
    'Ana Souza', 'Ação São João – Ü €', 'Pão Dourado Ltda.', '🚀 Orbita', 'a' || chr(160) || 'b', 'a' || chr(8232) || 'b', ''
  ]) as v) and shared_private.is_plain_text(null),
  'Names with accents, symbols, emoji, no-break spaces, empty and null text are plain');
select is(
  (select array_agg(code order by code) from generate_series(1, 159) as code where not shared_private.is_plain_text('a' || chr(code) || 'b')),
  (select array_agg(code order by code) from generate_series(1, 159) as code where code < 32 or code between 127 and 159),
  'Single-line text refuses exactly the control characters: U+0001–U+001F, DEL and U+0080–U+009F');
select ok(not shared_private.is_plain_text(E'Ana\tSouza') and not shared_private.is_plain_text(E'Ana\nSouza') and not shared_private.is_plain_text(E'Ana\r'),
  'Tab, line feed and carriage return are refused in single-line text');
select ok(shared_private.is_plain_text(E'linha 1\r\nlinha 2\n\tcom tab', true),
  'Multi-line text accepts tab, line feed and carriage return');
select is(
  (select array_agg(code order by code) from generate_series(1, 159) as code where not shared_private.is_plain_text('a' || chr(code) || 'b', true)),
  (select array_agg(code order by code) from generate_series(1, 159) as code where (code < 32 and code not in (9, 10, 13)) or code between 127 and 159),
  'Multi-line text still refuses every other control character (bell, escape, vertical tab, form feed, DEL, NEL…)');
select is(shared_private.is_plain_text(E'a\tb', null), false, 'A null multi-line flag means single-line');
select is(shared_private.plain_text_of(E'\tAna\u0007\u0007Souza\n'), 'Ana Souza', 'plain_text_of turns each run of control characters into one space and trims');
select is(shared_private.plain_text_of(null), null, 'plain_text_of keeps null');

select ok(has_function_privilege('authenticated', 'shared_private.is_plain_text(text, boolean)', 'execute')
  and has_function_privilege('service_role', 'shared_private.is_plain_text(text, boolean)', 'execute'),
  'The API roles that write these tables can run the rule their CHECK constraints call');
select ok(not has_function_privilege('anon', 'shared_private.is_plain_text(text, boolean)', 'execute')
  and not has_function_privilege('authenticated', 'shared_private.plain_text_of(text)', 'execute'),
  'Nothing more is granted: anon writes none of these tables, and the cleaning is the auth trigger''s alone');
select is(shared_private.is_plain_text(E'x\x01', false) is not null, true, 'It never answers null for text, so a CHECK cannot let a bad value through');

create function pg_temp.plan_of(_query text) returns text language plpgsql as $$
declare
  line text;
  plan text := '';
begin
  for line in execute 'explain (verbose, costs off) ' || _query loop
    plan := plan || line || ' ';
  end loop;
  return plan;
end;
$$;
select doesnt_match(pg_temp.plan_of('select 1 from public.customers where shared_private.is_plain_text(company_name)'), 'is_plain_text',
  'Postgres inlines it (no SET clause), so the check on every written row is a plain regular-expression test');

select set_eq($$
  select conrelid::regclass::text || '.' || pg_get_constraintdef(oid) from pg_constraint
  where contype = 'c' and conname like '%\_no\_control\_characters'
    and conname = replace(conrelid::regclass::text, 'public.', '') || '_' || (regexp_match(pg_get_constraintdef(oid), 'is_plain_text\((\w+)'))[1] || '_no_control_characters'
$$, $$ values
  ('profiles.CHECK (shared_private.is_plain_text(full_name))'),
  ('customers.CHECK (shared_private.is_plain_text(company_name))'),
  ('customers.CHECK (shared_private.is_plain_text(contact_name))'),
  ('customers.CHECK (shared_private.is_plain_text(street))'),
  ('customers.CHECK (shared_private.is_plain_text(city))'),
  ('products.CHECK (shared_private.is_plain_text(name))'),
  ('products.CHECK (shared_private.is_plain_text(description, true))'),
  ('proposals.CHECK (shared_private.is_plain_text(notes, true))'),
  ('holidays.CHECK (shared_private.is_plain_text(name))'),
  ('tecnicos.CHECK (shared_private.is_plain_text(nome))'),
  ('tecnicos.CHECK (shared_private.is_plain_text(avatar_url))'),
  ('cidades.CHECK (shared_private.is_plain_text(nome))'),
  ('niveis.CHECK (shared_private.is_plain_text(nome))'),
  ('acoes.CHECK (shared_private.is_plain_text(nome))'),
  ('acoes.CHECK (shared_private.is_plain_text(descricao, true))'),
  ('badges.CHECK (shared_private.is_plain_text(nome))'),
  ('badges.CHECK (shared_private.is_plain_text(icone))'),
  ('badges.CHECK (shared_private.is_plain_text(descricao, true))'),
  ('billing_accounts.CHECK (shared_private.is_plain_text(name))'),
  ('workspaces.CHECK (shared_private.is_plain_text(name))'),
  ('folders.CHECK (shared_private.is_plain_text(name))'),
  ('workflows.CHECK (shared_private.is_plain_text(name))'),
  ('workflows.CHECK (shared_private.is_plain_text(description, true))'),
  ('workflow_deployments.CHECK (shared_private.is_plain_text(note, true))')
$$, 'Every typed name, title, URL, description and note of the three services carries the rule, named after its column');

select * from finish();
rollback;
