-- Gamification: a city board's size from its rank buckets.
--
-- GET /rankings/local answered total_tecnicos by counting the city's entries on the period's board:
-- about 1,500 index entries a city at a million technicians, for every read. The city's coarse
-- rank buckets (gamificacao.faixas_cidades, 20261124200000) hold the same count in a few rows, as
-- the national board's total already comes from its own buckets.

/** GET /rankings/local: a city's points board; the same as 20261121021000_gamification-read-api.sql, with the total from the city's buckets. */
create or replace function public.gamificacao_ranking_local(p_cidade text default null, p_periodo text default 'mensal', p_limit integer default 20, p_offset integer default 0)
returns jsonb
language plpgsql volatile security definer set search_path = '' set timezone = 'America/Sao_Paulo' as $$
declare
  v_admissao jsonb := gamificacao.admitir('consulta');
  v_cidade public.cidades;
  v_inicio date;
  v_codigo text;
  v_mensagem text;
  v_dica text;
begin
  if v_admissao ? 'resposta' then
    return v_admissao -> 'resposta';
  end if;
  begin
    perform gamificacao.validar_periodo(p_periodo);
    perform gamificacao.validar_paginacao(p_limit, p_offset);
    v_cidade := gamificacao.resolver_cidade(p_cidade);
    v_inicio := gamificacao.inicio_periodo(p_periodo, now());
    return gamificacao.resposta_ok(jsonb_build_object(
      'ranking', gamificacao.pagina_quadro('local', p_periodo, v_inicio, v_cidade.id, p_limit, p_offset),
      'meta', gamificacao.meta_periodo(p_periodo, v_inicio, now()) || jsonb_build_object(
        'cidade', v_cidade.nome,
        'cidade_id', v_cidade.id,
        'uf', v_cidade.uf,
        'total_tecnicos', (select coalesce(sum(f.quantidade), 0) from gamificacao.faixas_cidades f
                           where f.periodo = p_periodo and f.periodo_inicio = v_inicio and f.cidade_id = v_cidade.id and f.escala = 1),
        'ultima_atualizacao', now()),
      'posicao_usuario', gamificacao.posicao_usuario('local', p_periodo, v_inicio, v_cidade.id)),
      v_admissao -> 'limite');
  exception when sqlstate 'GM000' then
    get stacked diagnostics v_codigo = message_text, v_mensagem = pg_exception_detail, v_dica = pg_exception_hint;
    return gamificacao.resposta_falha(v_codigo, v_mensagem, v_dica, v_admissao -> 'limite');
  end;
end;
$$;
