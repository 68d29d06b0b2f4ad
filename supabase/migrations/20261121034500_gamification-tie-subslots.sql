-- Gamification: sub-slots of the tie keys, so a national position's cost stops growing with the board.
--
-- A national position counts, on the index, the entries tied on points inside its own time slot
-- (gamificacao.faixas_pontos): the one part of gamificacao.posicao that grows with the board (a
-- month's 12-hour slot holds ten times the tied entries at 100k technicians as at 10k). Each slot
-- is cut again into 64 sub-slots counted here, so the index count is left only the entries tied on
-- points inside one sub-slot (11¼ minutes of a month, 150 seconds of a week, 2¼ hours of a year,
-- about 5.7 days of a calendar year for all time): one more bounded key-range sum (at most 63 rows
-- of one tie key) instead of a walk whose length is the board's size over the number of slots.
-- Scoring moves a technician between two sub-slot rows per period in the same ordered upsert as
-- the tie keys (gamificacao.aplicar_movimentos, after faixas_pontos and before the city buckets,
-- the one lock order every scoring shares). Measurements: docs/performance.md, "Scoring, step 3".

create table gamificacao.faixas_subfatias (
  periodo text not null,
  periodo_inicio date not null,
  chave integer not null,
  subfatia smallint not null check (subfatia between 0 and 63),
  -- No check (quantidade >= 0), as in faixas_ranking: the upsert's proposed row may carry a -1.
  quantidade integer not null,
  primary key (periodo, periodo_inicio, chave, subfatia)
)
-- Updated by every scoring: room on each page keeps the updates HOT (see faixas_ranking).
with (fillfactor = 50);
comment on table gamificacao.faixas_subfatias is
  'Technicians per sub-slot of each tie key on each period''s board of all levels: the part of a national position inside its tie key''s time slot.';
comment on column gamificacao.faixas_subfatias.chave is 'The tie key (gamificacao.faixas_pontos.chave: pontos × 64 + time slot).';
comment on column gamificacao.faixas_subfatias.subfatia is 'The 64th of the time slot the last scoring fell in (gamificacao.subfatia_empate).';
comment on column gamificacao.faixas_subfatias.quantidade is 'Technicians on the board with that tie key and sub-slot.';
alter table gamificacao.faixas_subfatias enable row level security;
revoke all on gamificacao.faixas_subfatias from anon, authenticated, service_role;

/**
 * The nominal first moment of tie slot `p_fatia`, without slot 0's widening to -infinity: the
 * sub-slots of a slot are 64ths of the time between its nominal start and the next slot's.
 */
create function gamificacao.inicio_nominal_fatia_empate(p_periodo text, p_inicio date, p_fatia integer) returns timestamptz
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  return case p_periodo
    when 'geral' then gamificacao.meia_noite_local(make_date(2019 + p_fatia, 1, 1))
    else gamificacao.meia_noite_local(p_inicio) + make_interval(secs => p_fatia * gamificacao.largura_fatia_empate(p_periodo))
  end;
end;
$$;
comment on function gamificacao.inicio_nominal_fatia_empate(text, date, integer) is
  'Nominal first moment of a tie slot (slot 0 included, unlike gamificacao.inicio_fatia_empate), from which its sub-slots are measured.';

/**
 * The tie slot and sub-slot (0–63) of a last scoring at `p_momento`, with the sub-slot's first
 * moment and the next one's: which 64th of the slot's nominal length it falls in, clamped, so
 * earlier moments of slot 0 fall in sub-slot 0 (which starts at -infinity) and later ones of slot
 * 63 in sub-slot 63 (which ends at infinity). Exact arithmetic (numeric epochs), so a moment is in
 * sub-slot k exactly when it is at or after k's start: the position's index count relies on that.
 * One function for all four, because a position needs them together and each helper call is a
 * PL/pgSQL call of its own; gamificacao.inicio_subfatia_empate gives the same starts for any slot.
 */
create function gamificacao.subfatia_do_momento(p_periodo text, p_inicio date, p_momento timestamptz,
  out fatia integer, out subfatia smallint, out inicio timestamptz, out fim timestamptz)
language plpgsql immutable parallel safe set search_path = '' as $$
declare
  v_nominal timestamptz;
  v_largura numeric;
begin
  fatia := gamificacao.fatia_empate(p_periodo, p_inicio, p_momento);
  v_nominal := gamificacao.inicio_nominal_fatia_empate(p_periodo, p_inicio, fatia);
  v_largura := extract(epoch from gamificacao.inicio_nominal_fatia_empate(p_periodo, p_inicio, fatia + 1) - v_nominal);
  subfatia := least(63, greatest(0, floor(64 * extract(epoch from p_momento - v_nominal) / v_largura)))::smallint;
  inicio := case when fatia <= 0 and subfatia <= 0 then '-infinity'::timestamptz
    else v_nominal + make_interval(secs => subfatia * v_largura / 64) end;
  fim := case when fatia >= 63 and subfatia >= 63 then 'infinity'::timestamptz
    else v_nominal + make_interval(secs => (subfatia + 1) * v_largura / 64) end;
end;
$$;
comment on function gamificacao.subfatia_do_momento(text, date, timestamptz) is
  'Tie slot, sub-slot and the sub-slot''s start and end of a last scoring, for gamificacao.posicao.';

/** The sub-slot (0–63) of a last scoring inside its tie slot (see gamificacao.subfatia_do_momento). */
create function gamificacao.subfatia_empate(p_periodo text, p_inicio date, p_momento timestamptz) returns smallint
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  return (gamificacao.subfatia_do_momento(p_periodo, p_inicio, p_momento)).subfatia;
end;
$$;
comment on function gamificacao.subfatia_empate(text, date, timestamptz) is
  'Sub-slot (0–63) of a last scoring inside its tie slot: the 64th of the slot''s nominal length it falls in.';

/**
 * The first moment of sub-slot `p_subfatia` of tie slot `p_fatia` (-infinity for the first of slot
 * 0, which also holds anything earlier). `p_subfatia` 64 is the next slot's start, the end of
 * sub-slot 63; for slot 63 that is infinity, since it holds anything later.
 */
create function gamificacao.inicio_subfatia_empate(p_periodo text, p_inicio date, p_fatia integer, p_subfatia integer) returns timestamptz
language plpgsql immutable parallel safe set search_path = '' as $$
declare
  v_inicio timestamptz;
begin
  if p_fatia <= 0 and p_subfatia <= 0 then
    return '-infinity'::timestamptz;
  end if;
  if p_fatia >= 63 and p_subfatia >= 64 then
    return 'infinity'::timestamptz;
  end if;
  v_inicio := gamificacao.inicio_nominal_fatia_empate(p_periodo, p_inicio, p_fatia);
  return v_inicio + make_interval(secs => p_subfatia
    * extract(epoch from gamificacao.inicio_nominal_fatia_empate(p_periodo, p_inicio, p_fatia + 1) - v_inicio) / 64);
end;
$$;
comment on function gamificacao.inicio_subfatia_empate(text, date, integer, integer) is
  'First moment of a tie slot''s sub-slot (-infinity for slot 0''s first; 64 is the end of sub-slot 63).';
