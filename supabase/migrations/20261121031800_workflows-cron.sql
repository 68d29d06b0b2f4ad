-- Workflow service, part 5: cron expressions and time zones, for the schedule trigger.
--
-- A schedule's next run is computed here, in the database, so the ticker (pg_cron, every minute)
-- claims due schedules and computes their next run in the same transaction, and a deploy refuses
-- an invalid expression or time zone with the reason. Five fields (minute hour day-of-month month
-- day-of-week; minute resolution, as pg_cron), each `*`, a value, a range `a-b`, a step `*/n`,
-- `a-b/n` or `a/n`, or a list of those; months and weekdays also by their English three-letter
-- names; weekday 0 or 7 is Sunday. When both day fields are restricted a day matching either runs
-- (as Vixie cron and croner do); a field starting with `*` counts as unrestricted.
--
-- Daylight-saving time (docs/triggers.md, "Schedules"), so that a change neither skips nor
-- doubles a run:
-- - an expression whose hour field starts with `*` (every N minutes, hourly, every two hours) runs
--   in real time: at every instant whose local wall-clock time matches. The repeated hour of an
--   autumn change runs again (it is another real hour) and the skipped hour of a spring change has
--   no matching instants, so runs stay evenly spaced in real time;
-- - any other expression (fixed hours: daily at, weekly on) runs once per matching local time: a
--   time the spring change skips runs at the moment the clock jumps, a time the autumn change
--   repeats runs at its first occurrence only.

/** A parsed cron expression: the values each field allows (sorted), and how days and hours combine. */
create type workflows_private.cron_schedule as (
  minutes integer[],
  hours integer[],
  days integer[],
  months integer[],
  weekdays integer[],
  days_unrestricted boolean,
  weekdays_unrestricted boolean,
  real_time boolean
);
comment on type workflows_private.cron_schedule is 'A parsed five-field cron expression (workflows_private.cron_parse).';

/**
 * The values one cron field allows, sorted and distinct, or 22023 with the reason: `p_text` is the
 * field, `p_field` its name for messages, `p_names` the names of its values from `p_min` (months,
 * weekdays).
 */
create function workflows_private.cron_field(p_text text, p_field text, p_min integer, p_max integer, p_names text[] default null)
returns integer[]
language plpgsql
immutable
set search_path = ''
as $$
declare
  v_item text;
  v_range text;
  v_step integer := 1;
  v_from integer;
  v_to integer;
  v_values integer[] := '{}'::integer[];
  v_parts text[];
begin
  foreach v_item in array string_to_array(p_text, ',')
  loop
    if v_item = '' then
      raise exception '% field "%" has an empty list item', p_field, p_text using errcode = '22023';
    end if;
    v_range := split_part(v_item, '/', 1);
    if v_item like '%/%' then
      v_step := case when v_item ~ '^[^/]+/[0-9]{1,4}$' then split_part(v_item, '/', 2)::integer else 0 end;
      if v_step = 0 then
        raise exception '% field "%": a step is a positive whole number after "/"', p_field, p_text using errcode = '22023';
      end if;
    else
      v_step := 1;
    end if;
    if v_range = '*' then
      v_from := p_min;
      v_to := p_max;
    else
      v_parts := string_to_array(v_range, '-');
      if cardinality(v_parts) > 2 then
        raise exception '% field "%": "%" is not a value or a range', p_field, p_text, v_range using errcode = '22023';
      end if;
      for i in 1 .. cardinality(v_parts) loop
        if v_parts[i] ~ '^[0-9]{1,4}$' then
          v_parts[i] := v_parts[i]::integer::text;
        elsif p_names is not null and array_position(p_names, lower(v_parts[i])) is not null then
          v_parts[i] := (array_position(p_names, lower(v_parts[i])) - 1 + p_min)::text;
        else
          raise exception '% field "%": "%" is not a number%', p_field, p_text, v_parts[i],
            case when p_names is not null then ' or a name (' || array_to_string(p_names, ', ') || ')' else '' end using errcode = '22023';
        end if;
        if v_parts[i]::integer not between p_min and p_max then
          raise exception '% field "%": % is out of range %-%', p_field, p_text, v_parts[i], p_min, p_max using errcode = '22023';
        end if;
      end loop;
      v_from := v_parts[1]::integer;
      -- `a/n` runs from a to the end of the range, as croner reads it.
      v_to := case when cardinality(v_parts) = 2 then v_parts[2]::integer when v_item like '%/%' then p_max else v_from end;
      if v_to < v_from then
        raise exception '% field "%": the range %-% runs backwards', p_field, p_text, v_from, v_to using errcode = '22023';
      end if;
    end if;
    v_values := v_values || array(select generate_series(v_from, v_to, v_step));
  end loop;
  return array(select distinct v from unnest(v_values) v order by v);
end;
$$;
comment on function workflows_private.cron_field(text, text, integer, integer, text[]) is 'The sorted values one cron field allows; raises 22023 with the reason for a malformed field.';

/** A five-field cron expression parsed, or 22023 with what is wrong with it. */
create function workflows_private.cron_parse(p_expression text)
returns workflows_private.cron_schedule
language plpgsql
immutable
set search_path = ''
as $$
declare
  v_fields text[] := regexp_split_to_array(btrim(coalesce(p_expression, '')), '\s+');
  v_schedule workflows_private.cron_schedule;
begin
  if btrim(coalesce(p_expression, '')) = '' or cardinality(v_fields) <> 5 then
    raise exception 'a cron expression has five fields (minute hour day-of-month month day-of-week), "%" has %',
      coalesce(p_expression, ''), case when btrim(coalesce(p_expression, '')) = '' then 0 else cardinality(v_fields) end using errcode = '22023';
  end if;
  v_schedule.minutes := workflows_private.cron_field(v_fields[1], 'minute', 0, 59);
  v_schedule.hours := workflows_private.cron_field(v_fields[2], 'hour', 0, 23);
  v_schedule.days := workflows_private.cron_field(v_fields[3], 'day-of-month', 1, 31);
  v_schedule.months := workflows_private.cron_field(v_fields[4], 'month', 1, 12,
    array['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']);
  -- Weekday 7 is Sunday too; the names count from Sunday = 0.
  v_schedule.weekdays := array(select distinct v % 7 from unnest(workflows_private.cron_field(v_fields[5], 'day-of-week', 0, 7,
    array['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'])) v order by 1);
  v_schedule.days_unrestricted := v_fields[3] like '*%';
  v_schedule.weekdays_unrestricted := v_fields[5] like '*%';
  v_schedule.real_time := v_fields[2] like '*%';
  return v_schedule;
end;
$$;
comment on function workflows_private.cron_parse(text) is 'Parses a five-field cron expression; raises 22023 with the reason when it is malformed.';

/** Whether a schedule runs on a local date (its month, and its day of month and/or weekday). */
create function workflows_private.cron_day_matches(p_schedule workflows_private.cron_schedule, p_day date)
returns boolean
language sql
immutable
set search_path = ''
as $$
  select extract(month from p_day)::integer = any(p_schedule.months)
    and case when p_schedule.days_unrestricted or p_schedule.weekdays_unrestricted
      then extract(day from p_day)::integer = any(p_schedule.days) and extract(dow from p_day)::integer = any(p_schedule.weekdays)
      else extract(day from p_day)::integer = any(p_schedule.days) or extract(dow from p_day)::integer = any(p_schedule.weekdays) end;
$$;
comment on function workflows_private.cron_day_matches(workflows_private.cron_schedule, date) is 'Whether a cron schedule runs on a date (day fields combined as Vixie cron does).';

/**
 * The first local wall-clock minute at or after `p_from` that a schedule matches, ignoring time
 * zones, or null when it matches none within ten years (an expression such as 30 February).
 */
create function workflows_private.cron_next_local(p_schedule workflows_private.cron_schedule, p_from timestamp)
returns timestamp
language plpgsql
immutable
set search_path = ''
as $$
declare
  v_start timestamp := date_trunc('minute', p_from) + case when p_from > date_trunc('minute', p_from) then interval '1 minute' else interval '0' end;
  v_day date := v_start::date;
  v_hour integer := extract(hour from v_start)::integer;
  v_minute integer := extract(minute from v_start)::integer;
  v_found integer;
  v_until date := v_start::date + interval '10 years';
begin
  while v_day < v_until loop
    if not (extract(month from v_day)::integer = any(p_schedule.months)) then
      v_day := (date_trunc('month', v_day) + interval '1 month')::date;
      v_hour := -1;
      continue;
    end if;
    if workflows_private.cron_day_matches(p_schedule, v_day) then
      if v_hour = any(p_schedule.hours) then
        select min(m) into v_found from unnest(p_schedule.minutes) m where m >= v_minute;
        if v_found is not null then
          return v_day + make_interval(hours => v_hour, mins => v_found);
        end if;
      end if;
      select min(h) into v_found from unnest(p_schedule.hours) h where h > v_hour;
      if v_found is not null then
        return v_day + make_interval(hours => v_found, mins => p_schedule.minutes[1]);
      end if;
    end if;
    v_day := v_day + 1;
    v_hour := -1;
  end loop;
  return null;
end;
$$;
comment on function workflows_private.cron_next_local(workflows_private.cron_schedule, timestamp) is 'The first local minute at or after a time that a cron schedule matches (null if none within ten years).';

/** Raises 22023 unless `p_timezone` is an IANA time-zone name Postgres knows (e.g. America/Sao_Paulo, UTC). */
create function workflows_private.check_timezone(p_timezone text)
returns void
language plpgsql
stable
set search_path = ''
as $$
begin
  -- IANA names only: POSIX strings such as "UTC+3" (whose sign Postgres reads backwards) are refused.
  if p_timezone is null or p_timezone !~ '^[A-Za-z][A-Za-z_]*(/[A-Za-z0-9_+-]+){0,2}$' then
    raise exception 'time zone "%" is not an IANA time-zone name such as America/Sao_Paulo or UTC', coalesce(p_timezone, '') using errcode = '22023';
  end if;
  begin
    perform now() at time zone p_timezone;
  exception
    when invalid_parameter_value then
      raise exception 'time zone "%" is unknown: use an IANA time-zone name such as America/Sao_Paulo or UTC', p_timezone using errcode = '22023';
  end;
end;
$$;
comment on function workflows_private.check_timezone(text) is 'Raises 22023 unless the text is an IANA time-zone name Postgres knows.';

/** The UTC offset of a time zone at an instant. */
create function workflows_private.utc_offset(p_timezone text, p_at timestamptz)
returns interval
language sql
stable
set search_path = ''
as $$
  select (p_at at time zone p_timezone) - (p_at at time zone 'UTC');
$$;
comment on function workflows_private.utc_offset(text, timestamptz) is 'A time zone''s offset from UTC at an instant.';

/**
 * The instant a local wall-clock time happens in a time zone, once: its first occurrence when the
 * autumn change repeats it, and for a time the spring change skips, the moment the clock jumps past
 * it (as Vixie cron runs jobs of a skipped hour).
 */
create function workflows_private.wall_clock_instant(p_local timestamp, p_timezone text)
returns timestamptz
language plpgsql
stable
set search_path = ''
as $$
declare
  v_at timestamptz := p_local at time zone p_timezone;
  v_shift interval;
  v_low timestamptz;
  v_high timestamptz;
  v_middle timestamptz;
begin
  if (v_at at time zone p_timezone) = p_local then
    -- Postgres reads a repeated time as its later occurrence; look for an earlier one.
    foreach v_shift in array array[interval '3 hours', interval '2 hours', interval '1 hour', interval '30 minutes']
    loop
      if ((v_at - v_shift) at time zone p_timezone) = p_local then
        return v_at - v_shift;
      end if;
    end loop;
    return v_at;
  end if;
  -- Skipped: Postgres placed it after the jump; the jump is the first minute shown later than it.
  v_low := v_at - interval '3 hours';
  v_high := v_at;
  while v_high - v_low > interval '1 minute' loop
    v_middle := v_low + make_interval(mins => (extract(epoch from v_high - v_low)::bigint / 120)::integer);
    if (v_middle at time zone p_timezone) > p_local then
      v_high := v_middle;
    else
      v_low := v_middle;
    end if;
  end loop;
  return v_high;
end;
$$;
comment on function workflows_private.wall_clock_instant(timestamp, text) is 'When a local time happens in a time zone: its first occurrence, or for a skipped time the moment the clock jumps past it.';

/**
 * The next time a cron expression runs in a time zone strictly after `p_after`, or null when it
 * never runs (within ten years). Raises 22023 for a malformed expression or an unknown time zone.
 * See the migration's comment for how daylight-saving changes are handled.
 */
create function workflows_private.cron_next(p_expression text, p_timezone text, p_after timestamptz)
returns timestamptz
language plpgsql
stable
set search_path = ''
as $$
declare
  v_schedule workflows_private.cron_schedule := workflows_private.cron_parse(p_expression);
  v_at timestamptz;
  v_local timestamp;
  v_next timestamp;
  v_candidate timestamptz;
  v_low timestamptz;
  v_high timestamptz;
  v_middle timestamptz;
begin
  perform workflows_private.check_timezone(p_timezone);
  if not v_schedule.real_time then
    v_local := date_trunc('minute', p_after at time zone p_timezone) + interval '1 minute';
    for i in 1 .. 2000 loop
      v_next := workflows_private.cron_next_local(v_schedule, v_local);
      if v_next is null then
        return null;
      end if;
      v_candidate := workflows_private.wall_clock_instant(v_next, p_timezone);
      -- Only inside a repeated hour does a later local time map to an instant already past.
      if v_candidate > p_after then
        return v_candidate;
      end if;
      v_local := v_next + interval '1 minute';
    end loop;
    return null;
  end if;

  v_at := date_trunc('minute', p_after, 'UTC') + interval '1 minute';
  for i in 1 .. 200 loop
    v_local := v_at at time zone p_timezone;
    v_next := workflows_private.cron_next_local(v_schedule, v_local);
    if v_next is null then
      return null;
    elsif v_next = v_local then
      return v_at;
    elsif v_next - v_local > interval '1 day' then
      -- Nothing matches before then: go to a day ahead of it, so at most one clock change lies between.
      v_at := greatest(v_at + interval '1 minute', workflows_private.wall_clock_instant(v_next - interval '1 day', p_timezone));
      continue;
    end if;
    v_candidate := v_at + (v_next - v_local);
    if workflows_private.utc_offset(p_timezone, v_candidate) = workflows_private.utc_offset(p_timezone, v_at) then
      return v_candidate;
    end if;
    -- The clock changed on the way: nothing matched before the change; go on from it.
    v_low := v_at;
    v_high := v_candidate;
    while v_high - v_low > interval '1 minute' loop
      v_middle := v_low + make_interval(mins => (extract(epoch from v_high - v_low)::bigint / 120)::integer);
      if workflows_private.utc_offset(p_timezone, v_middle) = workflows_private.utc_offset(p_timezone, v_low) then
        v_low := v_middle;
      else
        v_high := v_middle;
      end if;
    end loop;
    v_at := v_high;
  end loop;
  return null;
end;
$$;
comment on function workflows_private.cron_next(text, text, timestamptz) is 'The next run of a cron expression in a time zone after an instant (null: never); raises 22023 when the expression or time zone is invalid.';

/**
 * The next `p_count` runs (1 to 100) of a cron expression in a time zone after `p_after` (default
 * now), for an editor to show before deploying; 22023 with the reason when the expression or the
 * time zone is invalid (HTTP 400 through the data API).
 */
create function public.preview_schedule(p_cron_expression text, p_timezone text default 'UTC', p_count integer default 5, p_after timestamptz default now())
returns timestamptz[]
language plpgsql
stable
set search_path = ''
as $$
declare
  v_runs timestamptz[] := '{}'::timestamptz[];
  v_at timestamptz := p_after;
begin
  if p_count is null or p_count not between 1 and 100 then
    raise exception 'preview_schedule: count must be 1 to 100' using errcode = '22023';
  end if;
  for i in 1 .. p_count loop
    v_at := workflows_private.cron_next(p_cron_expression, p_timezone, v_at);
    exit when v_at is null;
    v_runs := v_runs || v_at;
  end loop;
  return v_runs;
end;
$$;
comment on function public.preview_schedule(text, text, integer, timestamptz) is 'The next runs of a cron expression in a time zone (22023 with the reason when either is invalid).';

revoke execute on function
  workflows_private.cron_field(text, text, integer, integer, text[]),
  workflows_private.cron_parse(text),
  workflows_private.cron_day_matches(workflows_private.cron_schedule, date),
  workflows_private.cron_next_local(workflows_private.cron_schedule, timestamp),
  workflows_private.check_timezone(text),
  workflows_private.utc_offset(text, timestamptz),
  workflows_private.wall_clock_instant(timestamp, text),
  workflows_private.cron_next(text, text, timestamptz)
  from public, anon;
-- preview_schedule runs as its caller (signed-in users and the service role), so they need the pieces.
grant execute on function
  workflows_private.cron_field(text, text, integer, integer, text[]),
  workflows_private.cron_parse(text),
  workflows_private.cron_day_matches(workflows_private.cron_schedule, date),
  workflows_private.cron_next_local(workflows_private.cron_schedule, timestamp),
  workflows_private.check_timezone(text),
  workflows_private.utc_offset(text, timestamptz),
  workflows_private.wall_clock_instant(timestamp, text),
  workflows_private.cron_next(text, text, timestamptz)
  to authenticated, service_role;
revoke execute on function public.preview_schedule(text, text, integer, timestamptz) from public, anon;
grant execute on function public.preview_schedule(text, text, integer, timestamptz) to authenticated, service_role;
