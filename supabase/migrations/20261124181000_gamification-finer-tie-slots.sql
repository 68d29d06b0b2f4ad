-- Gamification: finer tie slots for the week and the month.
--
-- Inside a tie key (exact points, time slot of the last scoring) a national position still counts
-- the tied technicians one by one on the index. At 1,000,000 technicians the month held 747,242
-- technicians in 14,476 keys, 52 a key on average and up to 3,090, ten times what 100,000
-- technicians leave: that count was most of what grew in gamificacao.posicao. The keys have 64
-- slots and the month used 31 of them (a day each) and the week 7. A slot is now 12 hours in a
-- month (62 slots) and 160 minutes in a week (63 slots), so a key holds half a month-day's or a
-- ninth of a week-day's share of a tie; the sums over the earlier slots of the same points read at
-- most 61 rows instead of 30. The year (6 days) and all time (the year) keep theirs.
--
-- The keys already stored are recounted from the period totals (gamificacao.reconstruir_faixas).

/** Length in seconds of a tie slot of a week, month or year (all time slots by calendar year instead). */
create function gamificacao.largura_fatia_empate(p_periodo text) returns integer
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  -- PL/pgSQL, as the other helpers of the scoring path: a SQL function with a pinned search_path
  -- is not inlined, and is parsed and planned again in every statement that calls it.
  return case p_periodo when 'anual' then 6 * 86400 when 'mensal' then 43200 else 9600 end;
end;
$$;
comment on function gamificacao.largura_fatia_empate(text) is
  'Seconds per tie slot: 160 minutes in a week (63 slots), 12 hours in a month (62), 6 days in a year (61).';

/**
 * The time slot of a last scoring at `p_momento` within period (`p_periodo`, `p_inicio`): 160
 * minutes of a week, 12 hours of a month, 6 days of a year (gamificacao.largura_fatia_empate), the
 * year since 2019 for all time, clamped to 0–63. Later moments never get a smaller slot, so on
 * equal points the slots keep the board's order (the earlier last scoring ranks higher).
 */
create or replace function gamificacao.fatia_empate(p_periodo text, p_inicio date, p_momento timestamptz) returns integer
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  return least(63, greatest(0, case p_periodo
    when 'geral' then extract(year from gamificacao.hora_local(p_momento))::integer - 2019
    else floor(extract(epoch from p_momento - gamificacao.meia_noite_local(p_inicio)) / gamificacao.largura_fatia_empate(p_periodo))::integer
  end));
end;
$$;
comment on function gamificacao.fatia_empate(text, date, timestamptz) is
  'Time slot (0–63) of a last scoring within its period: 160 minutes of a week, 12 hours of a month, 6 days of a year, the year of all time.';

/** The first moment of slot `p_fatia` (see gamificacao.fatia_empate): -infinity for slot 0, which also holds anything earlier. */
create or replace function gamificacao.inicio_fatia_empate(p_periodo text, p_inicio date, p_fatia integer) returns timestamptz
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  if p_fatia <= 0 then
    return '-infinity'::timestamptz;
  end if;
  return case p_periodo
    when 'geral' then gamificacao.meia_noite_local(make_date(2019 + p_fatia, 1, 1))
    else gamificacao.meia_noite_local(p_inicio) + make_interval(secs => p_fatia * gamificacao.largura_fatia_empate(p_periodo))
  end;
end;
$$;

select gamificacao.reconstruir_faixas();
