-- Gamification: one recomputation of a period's category boards at a time.
--
-- gamificacao.calcular_rankings_categorias() deletes a period's board rows and inserts them again.
-- Two runs for the same period at once (the 5-minute job and a GET /rankings/categoria that found
-- the period never computed, or an operator running the job by hand) both deleted nothing the other
-- had committed and then collided on the primary key: the second failed. The computation moves to
-- gamificacao.recalcular_quadros_categorias(), unchanged, and calcular_rankings_categorias() now
-- takes a transaction-level advisory lock per period first, so a second run waits for the first to
-- commit and then replaces its rows. Callers keep calling calcular_rankings_categorias().

alter function gamificacao.calcular_rankings_categorias(text, date, timestamptz) rename to recalcular_quadros_categorias;
comment on function gamificacao.recalcular_quadros_categorias(text, date, timestamptz) is
  'Recomputes the five category boards of one period; call it through gamificacao.calcular_rankings_categorias(), which serialises runs.';

/** Recomputes the five category boards of one period (kind and first day), one run per period at a time. */
create function gamificacao.calcular_rankings_categorias(p_periodo text, p_inicio date, p_momento timestamptz) returns void
language plpgsql set search_path = '' as $$
begin
  perform pg_advisory_xact_lock(hashtextextended(format('gamificacao.ranking_categorias/%s/%s', p_periodo, p_inicio), 0));
  perform gamificacao.recalcular_quadros_categorias(p_periodo, p_inicio, p_momento);
end;
$$;
comment on function gamificacao.calcular_rankings_categorias(text, date, timestamptz) is
  'Recomputes the five category boards of one period from the calls scheduled in it; concurrent runs for the same period wait for each other.';
