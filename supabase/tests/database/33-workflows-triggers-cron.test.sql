-- Workflow service: cron expressions, time zones and daylight-saving changes for schedules.
begin;
select plan(27);

create function pg_temp.runs(p_expression text, p_timezone text, p_after text, p_count integer) returns text[] language sql as $$
  select array(select to_char(r at time zone 'UTC', 'YYYY-MM-DD HH24:MI"Z"') from unnest(public.preview_schedule(p_expression, p_timezone, p_count, p_after::timestamptz)) r);
$$;

-- The fields ---------------------------------------------------------------------------------------

select is(pg_temp.runs('*/15 * * * *', 'UTC', '2026-05-01 10:07Z', 3), array['2026-05-01 10:15Z', '2026-05-01 10:30Z', '2026-05-01 10:45Z'],
  'A step runs every N minutes');
select is(pg_temp.runs('0 9 * * 1-5', 'America/Sao_Paulo', '2026-05-01 13:00Z', 3), array['2026-05-04 12:00Z', '2026-05-05 12:00Z', '2026-05-06 12:00Z'],
  'Weekdays at 09:00 in São Paulo (UTC-3): Friday''s has passed, Monday is next');
select is(pg_temp.runs('30 8 1,15 jan-mar *', 'UTC', '2026-01-15 09:00Z', 3), array['2026-02-01 08:30Z', '2026-02-15 08:30Z', '2026-03-01 08:30Z'],
  'Lists and month names');
select is(pg_temp.runs('0 12 1 * mon', 'UTC', '2026-06-01 13:00Z', 3), array['2026-06-08 12:00Z', '2026-06-15 12:00Z', '2026-06-22 12:00Z'],
  'Both day fields restricted: a day matching either runs (Vixie cron)');
select is(pg_temp.runs('0 12 */10 * sun', 'UTC', '2026-06-01 13:00Z', 3), array['2026-06-21 12:00Z', '2026-10-11 12:00Z', '2026-11-01 12:00Z'],
  'A day field starting with * counts as unrestricted: both must match');
select is(pg_temp.runs('0 0 * * 7', 'UTC', '2026-06-01 00:00Z', 1), array['2026-06-07 00:00Z'], 'Weekday 7 is Sunday');
select is(pg_temp.runs('0 0 29 2 *', 'UTC', '2026-03-08 05:30Z', 2), array['2028-02-29 00:00Z', '2032-02-29 00:00Z'], 'February 29 waits for leap years');
select is(pg_temp.runs('0 0 30 2 *', 'UTC', '2026-03-08 05:30Z', 2), '{}'::text[], 'An expression that never runs has no next run');
select is(pg_temp.runs('0 9 * * *', 'Asia/Kolkata', '2026-03-08 05:30Z', 1), array['2026-03-09 03:30Z'], 'Half-hour offsets (Kolkata, UTC+5:30)');
select is(pg_temp.runs('0 0 1 1 *', 'Europe/Berlin', '2026-06-01 13:00Z', 1), array['2026-12-31 23:00Z'], 'New Year in Berlin is 23:00 UTC');

-- Daylight saving: fixed hours run once per local day ---------------------------------------------
-- New York: on 2026-03-08 the clock jumps from 02:00 EST to 03:00 EDT (07:00 UTC); on 2026-11-01 it
-- goes back from 02:00 EDT to 01:00 EST (06:00 UTC).

select is(pg_temp.runs('30 2 * * *', 'America/New_York', '2026-03-07 00:00Z', 3), array['2026-03-07 07:30Z', '2026-03-08 07:00Z', '2026-03-09 06:30Z'],
  '02:30 daily: on the day the spring change skips 02:30 it runs when the clock jumps (03:00 EDT), never skipped');
select is(pg_temp.runs('30 1 * * *', 'America/New_York', '2026-10-31 00:00Z', 3), array['2026-10-31 05:30Z', '2026-11-01 05:30Z', '2026-11-02 06:30Z'],
  '01:30 daily: on the day the autumn change repeats 01:30 it runs once, at the first 01:30 (EDT)');
select is(pg_temp.runs('30 1 * * *', 'America/New_York', '2026-11-01 06:10Z', 1), array['2026-11-02 06:30Z'],
  'and asked again during the repeated hour (01:10 EST), the next run is the next day''s, not the second 01:30');
select is(pg_temp.runs('*/5 1 * * *', 'America/New_York', '2026-11-01 05:40Z', 5), array['2026-11-01 05:45Z', '2026-11-01 05:50Z', '2026-11-01 05:55Z', '2026-11-02 06:00Z', '2026-11-02 06:05Z'],
  'Every 5 minutes within the 1 o''clock hour runs through that hour once');
select is(pg_temp.runs('0 8 * * *', 'Europe/Berlin', '2026-03-28 00:00Z', 3), array['2026-03-28 07:00Z', '2026-03-29 06:00Z', '2026-03-30 06:00Z'],
  '08:00 in Berlin follows the local clock across the change (07:00 then 06:00 UTC)');

-- Daylight saving: hours starting with * run in real time ----------------------------------------

select is(pg_temp.runs('*/30 * * * *', 'America/New_York', '2026-11-01 05:00Z', 5), array['2026-11-01 05:30Z', '2026-11-01 06:00Z', '2026-11-01 06:30Z', '2026-11-01 07:00Z', '2026-11-01 07:30Z'],
  'Every 30 minutes keeps running every 30 real minutes through the repeated hour');
select is(pg_temp.runs('*/30 * * * *', 'America/New_York', '2026-03-08 06:00Z', 4), array['2026-03-08 06:30Z', '2026-03-08 07:00Z', '2026-03-08 07:30Z', '2026-03-08 08:00Z'],
  'and across the skipped hour (01:30 EST, then 03:00 EDT, half an hour later)');
select is(pg_temp.runs('0 * * * *', 'America/New_York', '2026-11-01 04:30Z', 4), array['2026-11-01 05:00Z', '2026-11-01 06:00Z', '2026-11-01 07:00Z', '2026-11-01 08:00Z'],
  'Hourly runs every real hour: 01:00 EDT, 01:00 EST, 02:00 EST …');

-- What is refused ----------------------------------------------------------------------------------

select throws_ok($$select public.preview_schedule('61 * * * *')$$, '22023', 'minute field "61": 61 is out of range 0-59', 'A value out of range is refused, saying which');
select throws_ok($$select public.preview_schedule('* * * *')$$, '22023', 'a cron expression has five fields (minute hour day-of-month month day-of-week), "* * * *" has 4', 'Four fields are refused');
select throws_ok($$select public.preview_schedule('5-1 * * * *')$$, '22023', 'minute field "5-1": the range 5-1 runs backwards', 'A backwards range is refused');
select throws_ok($$select public.preview_schedule('*/0 * * * *')$$, '22023', 'minute field "*/0": a step is a positive whole number after "/"', 'A zero step is refused');
select throws_ok($$select public.preview_schedule('0 0 * foo *')$$, '22023', null, 'An unknown month name is refused');
select throws_ok($$select public.preview_schedule('0 0 1,,2 * *')$$, '22023', 'day-of-month field "1,,2" has an empty list item', 'An empty list item is refused');
select throws_ok($$select public.preview_schedule('* * * * *', 'Mars/Olympus')$$, '22023',
  'time zone "Mars/Olympus" is unknown: use an IANA time-zone name such as America/Sao_Paulo or UTC', 'An unknown time zone is refused');
select throws_ok($$select public.preview_schedule('* * * * *', 'UTC+3')$$, '22023',
  'time zone "UTC+3" is not an IANA time-zone name such as America/Sao_Paulo or UTC', 'and so is a POSIX offset, whose sign Postgres reads backwards');

set local role anon;
select throws_ok($$select public.preview_schedule('* * * * *')$$, '42501', null, 'Signed-out callers cannot use the preview');
reset role;

select * from finish();
rollback;
