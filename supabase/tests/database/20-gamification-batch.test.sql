-- Gamification batch scoring (POST /points/lote): items scored on their own, results in request
-- order, positions after the batch, the same checks, idempotency and rate limit as one action.
begin;
select plan(14);
select testes_gamificacao.limpar();

select testes_gamificacao.nova_cidade('lote', 1500, 50);
select testes_gamificacao.novo_tecnico('lote', 'Ana') as ana, testes_gamificacao.novo_tecnico('lote', 'Bia') as bia \gset
select testes_gamificacao.novo_chamado(:'ana') as a1, testes_gamificacao.novo_chamado(:'ana') as a2,
  testes_gamificacao.novo_chamado(:'bia') as b1 \gset

-- The back office sends Bia's call before Ana's two, plus a repeat and an unknown call.
select testes_gamificacao.entrar_como_servico();
select public.gamificacao_registrar_acoes(jsonb_build_array(
  jsonb_build_object('usuario_id', :'bia', 'acao', 'chamado_concluido', 'chamado_id', :'b1'),
  jsonb_build_object('usuario_id', :'ana', 'acao', 'chamado_concluido', 'chamado_id', :'a1'),
  jsonb_build_object('usuario_id', :'ana', 'acao', 'chamado_concluido', 'chamado_id', :'a2'),
  jsonb_build_object('usuario_id', :'ana', 'acao', 'chamado_concluido', 'chamado_id', :'a1'),
  jsonb_build_object('usuario_id', :'ana', 'acao', 'chamado_concluido', 'chamado_id', gen_random_uuid()))) as lote \gset
reset role;

select is((:'lote'::jsonb) ->> 'status', '200', 'A batch answers 200 even when some items fail');
select is(((:'lote'::jsonb) #> '{data}') - 'resultados'::text, '{"total": 5, "sucesso": 3, "falhas": 2}'::jsonb, 'It counts the items, successes and failures');
select is((select array_agg((r ->> 'indice')::int order by o) from jsonb_array_elements((:'lote'::jsonb) #> '{data,resultados}') with ordinality x (r, o)),
  array[0, 1, 2, 3, 4], 'Results come back in request order, whatever order the items ran in');
select is((select array_agg(r ->> 'status' order by (r ->> 'indice')::int) from jsonb_array_elements((:'lote'::jsonb) #> '{data,resultados}') r),
  array['200', '200', '200', '409', '404'], 'Each item has its own status');
select is((:'lote'::jsonb) #>> '{data,resultados,3,error,codigo}', 'ACAO_DUPLICADA', 'A repeat inside the batch is a duplicate of the earlier item');
select is((:'lote'::jsonb) #>> '{data,resultados,2,data,pontos_total}', '100', 'Ana''s second call builds on her first');
select is((select array_agg((r #>> '{data,posicao_ranking_local}')::int order by (r ->> 'indice')::int) from jsonb_array_elements((:'lote'::jsonb) #> '{data,resultados}') r
           where r ->> 'status' = '200'), array[2, 1, 1], 'Positions are those after the whole batch (Ana 100 points, Bia 50)');
select is((select count(*)::int from public.historico_pontos), 3, 'The failed items recorded nothing');
select set_eq($$select periodo, periodo_inicio, nivel, escala, faixa, quantidade from gamificacao.faixas_ranking where quantidade <> 0$$,
  $$select t.periodo, t.periodo_inicio, n.nivel, e.escala, t.pontos / p.largura_faixa / case e.escala when 1 then 32 else 1 end, count(*)::int
    from gamificacao.totais_periodo t join gamificacao.periodos p using (periodo)
    cross join lateral (values (0::smallint), (t.nivel_ordem)) n (nivel) cross join (values (0::smallint), (1::smallint)) e (escala)
    group by 1, 2, 3, 4, 5
    union all
    select periodo, periodo_inicio, 0, 2, pontos, count(*)::int from gamificacao.totais_periodo group by 1, 2, 5$$,
  'The batch''s bucket moves, applied once at the end, equal a recount of the totals');

-- A technician's batch: only their own actions, one rate-limit token per item.
select testes_gamificacao.novo_chamado(:'bia') as b2 \gset
select testes_gamificacao.entrar_como(:'bia');
select public.gamificacao_registrar_acoes(jsonb_build_array(
  jsonb_build_object('usuario_id', :'bia', 'acao', 'chamado_concluido', 'chamado_id', :'b2'),
  jsonb_build_object('usuario_id', :'ana', 'acao', 'checkin_pontual', 'chamado_id', :'a2'),
  jsonb_build_object('usuario_id', 'não-é-uuid', 'acao', 'chamado_concluido', 'chamado_id', :'b2'))) as proprio \gset
select is((select array_agg(testes_gamificacao.resultado(r) order by (r ->> 'indice')::int) from jsonb_array_elements((:'proprio'::jsonb) #> '{data,resultados}') r),
  array['200', '403 SEM_PERMISSAO', '400 PARAMETRO_INVALIDO'], 'A technician''s batch scores their own action and refuses another''s and a malformed one');
select is((:'proprio'::jsonb) #>> '{limite,restante}', '57', 'Each item spent one of the technician''s tokens');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acoes('[]')), '400 PARAMETRO_INVALIDO', 'An empty batch is refused');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acoes((select jsonb_agg(jsonb_build_object('usuario_id', :'bia', 'acao', 'x', 'chamado_id', :'b2'))
  from generate_series(1, 101)))), '400 PARAMETRO_INVALIDO', 'A batch of more than 100 is refused');
reset role;
update gamificacao.limites_uso set tokens = 1 where usuario_id = :'bia';
select testes_gamificacao.entrar_como(:'bia');
select is((select array_agg(testes_gamificacao.resultado(r) order by (r ->> 'indice')::int)
           from jsonb_array_elements(public.gamificacao_registrar_acoes(jsonb_build_array(
             jsonb_build_object('usuario_id', :'bia', 'acao', 'checkin_pontual', 'chamado_id', gen_random_uuid()),
             jsonb_build_object('usuario_id', :'bia', 'acao', 'checkin_pontual', 'chamado_id', gen_random_uuid()))) #> '{data,resultados}') r),
  array['404 CHAMADO_NAO_ENCONTRADO', '429 LIMITE_EXCEDIDO'], 'Items beyond the technician''s tokens answer 429 LIMITE_EXCEDIDO');
reset role;

select * from finish();
rollback;
