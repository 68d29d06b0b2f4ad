-- Proposals portal, part 5: the business-day calendar and commission payment dates.
--
-- calculate_payment_dates(sale_date) implements the decision on payment dates: the carrier pays
-- the portal on day 20 of the second month after the sale; the portal pays the technician on the
-- first 15th or last day of a month strictly after that; each date then moves to the next business
-- day (not a weekend, not in public.holidays). The holidays table is seeded here with Brazil's
-- national holidays and the movable bank closures (Carnaval, Good Friday, Corpus Christi), because
-- payment dates are wrong without it; admins maintain it afterwards.

create table public.holidays (
  holiday_date date primary key,
  name text not null constraint holidays_name_not_blank check (btrim(name) <> ''),
  kind text not null default 'national' constraint holidays_kind_known check (kind in ('national', 'bank_closure')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint holidays_name_no_control_characters check (shared_private.is_plain_text(name))
);
comment on table public.holidays is
  'Days on which no payment is made (besides weekends): national holidays and bank closures. Read by calculate_payment_dates.';
comment on column public.holidays.holiday_date is 'The day off.';
comment on column public.holidays.name is 'Name of the holiday, in Portuguese.';
comment on column public.holidays.kind is 'national (fixed by federal law) or bank_closure (movable days banks do not open: Carnaval, Good Friday, Corpus Christi).';
comment on column public.holidays.created_at is 'When the row was added.';
comment on column public.holidays.updated_at is 'When the row last changed.';

create trigger holidays_set_updated_at
  before update on public.holidays
  for each row execute function portal_private.set_updated_at();

/** Easter Sunday of a Gregorian year (the anonymous Gregorian computus, a.k.a. Meeus/Jones/Butcher). */
create function portal_private.easter_sunday(_year integer)
returns date
language plpgsql
immutable
strict
set search_path = ''
as $$
declare
  a integer := _year % 19;
  b integer := _year / 100;
  c integer := _year % 100;
  h integer;
  l integer;
  m integer;
begin
  h := (19 * a + b - b / 4 - (b - (b + 8) / 25 + 1) / 3 + 15) % 30;
  l := (32 + 2 * (b % 4) + 2 * (c / 4) - h - c % 4) % 7;
  m := (a + 11 * h + 22 * l) / 451;
  return make_date(_year, (h + l - 7 * m + 114) / 31, (h + l - 7 * m + 114) % 31 + 1);
end;
$$;
comment on function portal_private.easter_sunday(integer) is
  'Easter Sunday of the year; the movable bank closures are offsets from it.';

insert into public.holidays (holiday_date, name, kind)
select make_date(year, fixed.month, fixed.day), fixed.name, 'national'
from generate_series(2024, 2035) as year
cross join (values
  (1, 1, 'Confraternização Universal'),
  (4, 21, 'Tiradentes'),
  (5, 1, 'Dia do Trabalho'),
  (9, 7, 'Independência do Brasil'),
  (10, 12, 'Nossa Senhora Aparecida'),
  (11, 2, 'Finados'),
  (11, 15, 'Proclamação da República'),
  (11, 20, 'Dia Nacional de Zumbi e da Consciência Negra'),
  (12, 25, 'Natal')
) as fixed (month, day, name)
union all
select portal_private.easter_sunday(year) + movable.offset_days, movable.name, 'bank_closure'
from generate_series(2024, 2035) as year
cross join (values
  (-48, 'Carnaval (segunda-feira)'),
  (-47, 'Carnaval (terça-feira)'),
  (-2, 'Sexta-feira Santa'),
  (60, 'Corpus Christi')
) as movable (offset_days, name);

/** The day itself when it is a business day, else the first business day after it. */
create function portal_private.next_business_day(_day date)
returns date
language plpgsql
stable
strict
set search_path = ''
as $$
declare
  candidate date := _day;
begin
  while extract(isodow from candidate) in (6, 7)
    or exists (select 1 from public.holidays where holiday_date = candidate)
  loop
    candidate := candidate + 1;
  end loop;
  return candidate;
end;
$$;
comment on function portal_private.next_business_day(date) is
  'The date if it is a business day, otherwise the next one (skips weekends and public.holidays).';

/**
 * Commission payment dates for a sale (activation) date. carrier_payment_date: day 20 of the
 * second month after the sale, moved to the next business day. portal_payment_date: the first 15th
 * or last day of a month strictly after the carrier date, moved to the next business day.
 * Stable, not immutable: it reads the holidays table.
 */
create function public.calculate_payment_dates(
  sale_date date,
  out carrier_payment_date date,
  out portal_payment_date date
)
language plpgsql
stable
strict
set search_path = ''
as $$
declare
  carrier_month date;
  month_end date;
  portal_day date;
begin
  carrier_payment_date := portal_private.next_business_day(
    (date_trunc('month', sale_date) + interval '2 months')::date + 19
  );
  carrier_month := date_trunc('month', carrier_payment_date)::date;
  month_end := (carrier_month + interval '1 month - 1 day')::date;
  portal_day := case
    when carrier_month + 14 > carrier_payment_date then carrier_month + 14
    when month_end > carrier_payment_date then month_end
    else month_end + 15
  end;
  portal_payment_date := portal_private.next_business_day(portal_day);
end;
$$;
comment on function public.calculate_payment_dates(date) is
  'Carrier and portal payment dates of a commission for a sale on sale_date (see docs/proposals-portal.md).';

revoke execute on function public.calculate_payment_dates(date) from public, anon;
grant execute on function public.calculate_payment_dates(date) to authenticated, service_role;
grant execute on function portal_private.next_business_day(date) to authenticated, service_role;

alter table public.holidays enable row level security;

revoke all on public.holidays from anon, authenticated, service_role;
grant select, insert, update, delete on public.holidays to authenticated, service_role;

create policy "Signed-in users can read the holidays" on public.holidays
  for select to authenticated
  using (true);
create policy "Admins can add holidays" on public.holidays
  for insert to authenticated
  with check ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can add holidays" on public.holidays
  for insert to authenticated
  with check ((select public.has_role((select auth.uid()), 'super_admin')));
create policy "Admins can change holidays" on public.holidays
  for update to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')))
  with check ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can change holidays" on public.holidays
  for update to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')))
  with check ((select public.has_role((select auth.uid()), 'super_admin')));
create policy "Admins can remove holidays" on public.holidays
  for delete to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can remove holidays" on public.holidays
  for delete to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')));

-- Nothing in portal_private is callable by PUBLIC (see the foundation migration).
revoke execute on all functions in schema portal_private from public;
