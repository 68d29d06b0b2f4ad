-- Gamification: a scoring's answer reads its positions after the technician's own bucket moves.
--
-- gamificacao.registrar_acao read the monthly positions before applying the scoring's bucket
-- moves, on the grounds that the in-bucket count read the totals just written. Since the national
-- position counts a tie slot from its nearer end (20261124230000_gamification-cheaper-scoring.sql)
-- it also reads the exact-points counts, which still held the technician at their old points while
-- the tie count already saw them at the new ones: every fresh scoring's national position came out
-- one too high on the board (one too small a number). It showed as position 0 only on the days the
-- scorer led the month's board (the first day of a month on a young board), and as "2 in the answer,
-- 3 on the board" otherwise. The moves are now applied first, as the batch path always has, so the
-- answer is the position the board shows for the same period an instant later.

/**
 * Scores one action in the caller's transaction and returns the full score result: the action is
 * applied, its bucket moves are applied, and only then are the monthly positions read, so they
 * count the technician exactly where the boards will show them.
 */
create or replace function gamificacao.registrar_acao(
  p_usuario_id uuid, p_acao text, p_chamado_id uuid, p_metadata jsonb, p_momento timestamptz, p_registrado_por uuid
) returns jsonb
language plpgsql set search_path = '' as $$
declare
  v_aplicada gamificacao.acao_aplicada := gamificacao.aplicar_acao(p_usuario_id, p_acao, p_chamado_id, p_metadata, p_momento, p_registrado_por);
begin
  perform gamificacao.aplicar_movimentos(v_aplicada.movimentos);
  return v_aplicada.resultado || gamificacao.posicoes_mensais(p_usuario_id, v_aplicada.cidade_id, p_momento);
end;
$$;
