-- Gamification: deleting a technician takes them off the boards' counts too.
--
-- Deleting a technician (their account) deletes their period totals by cascade, but the rank
-- buckets, exact-points counts, tie keys and city buckets kept counting them, so everyone below
-- them kept a position one too low, and the boards' totals counted them, until the buckets were
-- rebuilt. A statement trigger on the totals now removes every deleted row from the counts it
-- was in, with the same ordered upsert as scoring.

/**
 * Trigger (after delete on gamificacao.totais_periodo, per statement): takes the deleted rows off
 * their boards' counts: the board of all levels (rank buckets, exact points, tie key), their
 * level's board and their city's board.
 */
create function gamificacao.retirar_dos_quadros() returns trigger
language plpgsql set search_path = '' as $$
declare
  v_movimentos gamificacao.movimentos;
begin
  with mudancas as (
    select a.periodo, a.periodo_inicio, q.nivel, q.cidade, e.escala, e.faixa, -count(*)::integer as delta
    from apagados a
    join gamificacao.periodos p on p.periodo = a.periodo
    cross join lateral (values (0::smallint, null::text), (a.nivel_ordem, null), (null, a.cidade_id)) q (nivel, cidade)
    cross join lateral (values
      (0::smallint, a.pontos / p.largura_faixa),
      (1::smallint, a.pontos / p.largura_faixa / gamificacao.faixas_por_grupo()),
      (2::smallint, case when q.nivel = 0 then a.pontos end),
      (3::smallint, case when q.nivel = 0 then gamificacao.chave_empate(a.periodo, a.periodo_inicio, a.pontos, a.ultima_pontuacao_em) end)
    ) e (escala, faixa)
    where e.escala < 2 or q.nivel = 0
    group by 1, 2, 3, 4, 5, 6
  )
  select coalesce(array_agg(m.periodo), '{}'), coalesce(array_agg(m.periodo_inicio), '{}'), coalesce(array_agg(m.nivel), '{}'),
    coalesce(array_agg(m.escala), '{}'), coalesce(array_agg(m.faixa), '{}'), coalesce(array_agg(m.delta), '{}'),
    coalesce(array_agg(m.cidade), '{}')
  into v_movimentos
  from mudancas m;
  perform gamificacao.aplicar_movimentos(v_movimentos);
  return null;
end;
$$;
comment on function gamificacao.retirar_dos_quadros() is
  'Trigger: removes deleted period totals from the rank buckets, exact-points counts, tie keys and city buckets.';

create trigger totais_periodo_retirar_dos_quadros after delete on gamificacao.totais_periodo
  referencing old table as apagados for each statement execute function gamificacao.retirar_dos_quadros();

-- No recount here: 20261124200000, which lands with this migration, recounts every bucket from the
-- totals, which already drops the counts earlier deletions left behind.
