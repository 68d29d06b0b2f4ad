-- Gamification read RPCs: history with its summary and pagination, badges, and the three ranking
-- boards with their meta, the caller's own position and parameter checks.
begin;
select plan(34);
select testes_gamificacao.limpar();

select testes_gamificacao.nova_cidade('sao-paulo-sp', 1500, 50), testes_gamificacao.nova_cidade('campinas-sp', 1500, 50);
update public.cidades set nome = 'São Paulo' where id = 'sao-paulo-sp';
insert into public.cidades (id, nome, uf) values ('bom-jesus-pi', 'Bom Jesus', 'PI'), ('bom-jesus-rs', 'Bom Jesus', 'RS');
select testes_gamificacao.novo_tecnico('sao-paulo-sp', 'Ana') as ana, testes_gamificacao.novo_tecnico('sao-paulo-sp', 'Bia') as bia,
  testes_gamificacao.novo_tecnico('campinas-sp', 'Caio') as caio, testes_gamificacao.novo_tecnico('campinas-sp', 'Sem Pontos') as zero \gset

-- Ana: 3 concluded calls and 2 check-ins over the last days, plus one 40 days ago.
select count(testes_gamificacao.pontuar(:'ana', 'chamado_concluido', c, '{}', now() - make_interval(days => d)))
from generate_series(1, 3) d cross join lateral (select testes_gamificacao.novo_chamado(:'ana', 'concluido', now() - make_interval(days => d, hours => 2)) as c) x;
select count(testes_gamificacao.pontuar(:'ana', 'checkin_pontual', c, testes_gamificacao.leitura(now() - make_interval(days => d, hours => 2)), now() - make_interval(days => d)))
from generate_series(1, 2) d cross join lateral (select id as c from public.chamados where tecnico_id = :'ana' and agendado_para = now() - make_interval(days => d, hours => 2)) x;
select testes_gamificacao.pontuar(:'ana', 'chamado_concluido', testes_gamificacao.novo_chamado(:'ana', 'concluido', now() - interval '40 days'), '{}', now() - interval '40 days');
select testes_gamificacao.pontuar(:'bia', 'chamado_concluido', testes_gamificacao.novo_chamado(:'bia'));
select count(testes_gamificacao.pontuar(:'caio', 'chamado_concluido', testes_gamificacao.novo_chamado(:'caio'))) from generate_series(1, 2);

-- History --------------------------------------------------------------------------------------
select testes_gamificacao.entrar_como(:'ana');
select public.gamificacao_historico(null, 30, 2, 0) as hist \gset
select is((:'hist'::jsonb) #> '{data,resumo}',
  '{"total_pontos_periodo": 170, "total_acoes": 5, "media_pontos_dia": 5.67, "acao_mais_frequente": "chamado_concluido"}'::jsonb,
  'The 30-day summary counts 5 actions and 170 points, 170/30 = 5.67 a day, chamado_concluido most often');
select is((:'hist'::jsonb) #> '{data,paginacao}', '{"limit": 2, "offset": 0, "total": 5, "has_next": true}'::jsonb, 'Pagination reports the total and a next page');
select is(jsonb_array_length((:'hist'::jsonb) #> '{data,historico}'), 2, 'A page holds limit items');
select is((:'hist'::jsonb) #>> '{data,historico,0,acao}', 'checkin_pontual', 'Newest first (the check-in was scored after the call on day 1)');
select is((select array_agg(k order by k) from jsonb_object_keys((:'hist'::jsonb) #> '{data,historico,0}') k),
  array['acao', 'chamado_id', 'cidade', 'cidade_id', 'data_acao', 'id', 'multiplicadores', 'pontos_base', 'pontos_final'], 'A history item carries every field of the spec');
select is((:'hist'::jsonb) #>> '{data,historico,0,cidade}', 'São Paulo', 'cidade is the city''s name');
select is(public.gamificacao_historico(null, 30, 2, 4) #> '{data,paginacao,has_next}', 'false', 'The last page has no next');
select is(public.gamificacao_historico(null, 60, 20, 0) #>> '{data,resumo,total_acoes}', '6', 'A 60-day period reaches the older action');
select is(public.gamificacao_historico(null, 2, 20, 0) #>> '{data,resumo,acao_mais_frequente}', 'chamado_concluido',
  'Ties for the most frequent action break alphabetically (one call and one check-in in the last 2 days)');
select is(testes_gamificacao.resultado(public.gamificacao_historico(:'bia', 30, 20, 0)), '403 SEM_PERMISSAO', 'A technician cannot read another''s history');
select is(testes_gamificacao.resultado(public.gamificacao_historico(null, 0, 20, 0)), '400 PARAMETRO_INVALIDO', 'A period of 0 days is refused');
select is(testes_gamificacao.resultado(public.gamificacao_historico(null, 30, 101, 0)), '400 PARAMETRO_INVALIDO', 'A limit above 100 is refused');
select is(testes_gamificacao.resultado(public.gamificacao_historico(null, 30, 20, -1)), '400 PARAMETRO_INVALIDO', 'A negative offset is refused');
select testes_gamificacao.entrar_como(:'bia', '{"role": "admin"}');
select is(public.gamificacao_historico(:'ana', 30, 20, 0) #>> '{data,resumo,total_acoes}', '5', 'An administrator reads anyone''s history');
select testes_gamificacao.entrar_como_servico();
select is(testes_gamificacao.resultado(public.gamificacao_historico(gen_random_uuid(), 30, 20, 0)), '404 TECNICO_NAO_ENCONTRADO', 'An unknown technician answers 404');
select is(testes_gamificacao.resultado(public.gamificacao_historico(null, 30, 20, 0)), '400 PARAMETRO_INVALIDO', 'The service role must say whose history');

-- Badges ---------------------------------------------------------------------------------------
select testes_gamificacao.entrar_como(:'ana');
select is((select array_agg(b ->> 'codigo') from jsonb_array_elements(public.gamificacao_badges_usuario(:'ana') #> '{data,badges}') b),
  array['primeiro_chamado'], 'A technician lists their badges');
select is((select array_agg(k order by k) from jsonb_object_keys(public.gamificacao_badges_usuario(:'ana') #> '{data,badges,0}') k),
  array['categoria', 'codigo', 'conquistado_em', 'descricao', 'icone', 'nome'], 'A badge carries nome, categoria and descricao (and more)');
select is(testes_gamificacao.resultado(public.gamificacao_badges_usuario(:'bia')), '403 SEM_PERMISSAO', 'but not another technician''s');

-- Local board ----------------------------------------------------------------------------------
-- All-time boards, so the expectations hold whatever today's date (weeks and months turn over).
select public.gamificacao_ranking_local(null, 'geral', 20, 0) as local \gset
select is((select array_agg(e ->> 'nome' order by (e ->> 'posicao')::int) from jsonb_array_elements((:'local'::jsonb) #> '{data,ranking}') e),
  array['Ana', 'Bia'], 'Without cidade the local board is the caller''s city, best first');
select is((:'local'::jsonb) #> '{data,posicao_usuario}', '{"posicao": 1, "pontos": 220, "distancia_proximo": 0}'::jsonb,
  'posicao_usuario gives the caller''s position, points and distance (0 for the leader)');
select is((:'local'::jsonb) #>> '{data,meta,total_tecnicos}', '2', 'total_tecnicos is the size of the city''s board');
select is((select array_agg(k order by k) from jsonb_object_keys((:'local'::jsonb) #> '{data,meta}') k),
  array['cidade', 'cidade_id', 'periodo', 'periodo_fim', 'periodo_inicio', 'total_tecnicos', 'uf', 'ultima_atualizacao'], 'meta carries every field of the spec');
select is(public.gamificacao_ranking_local('são paulo', 'mensal', 20, 0) #>> '{data,meta,cidade_id}', 'sao-paulo-sp', 'cidade matches a name without regard to case');
select is(public.gamificacao_ranking_local('campinas-sp', 'anual', 20, 0) #> '{data,posicao_usuario}', 'null', 'A caller not on the board has posicao_usuario null');
select is(testes_gamificacao.resultado(public.gamificacao_ranking_local('atlantida', 'mensal', 20, 0)), '404 CIDADE_NAO_ENCONTRADA', 'An unknown city answers 404');
select is(testes_gamificacao.resultado(public.gamificacao_ranking_local('Bom Jesus', 'mensal', 20, 0)), '400 PARAMETRO_INVALIDO', 'A name shared by two cities asks for the id');
select is(testes_gamificacao.resultado(public.gamificacao_ranking_local(null, 'bimestral', 20, 0)), '400 PARAMETRO_INVALIDO', 'An unknown period answers 400');

-- National board -------------------------------------------------------------------------------
select testes_gamificacao.entrar_como(:'bia');
select public.gamificacao_ranking_nacional(null, 'geral', 2, 0) as nacional \gset
select is((select array_agg(e ->> 'nome' order by (e ->> 'posicao')::int) from jsonb_array_elements((:'nacional'::jsonb) #> '{data,ranking}') e),
  array['Ana', 'Caio'], 'The national board lists the best technicians of every city');
select is((:'nacional'::jsonb) #> '{data,posicao_usuario}', '{"posicao": 3, "pontos": 50, "distancia_proximo": 50}'::jsonb,
  'A caller below the page still gets their position and the distance to the next');
select is(public.gamificacao_ranking_nacional('iniciante', 'geral', 20, 0) #>> '{data,meta,total_tecnicos}', '3', 'categoria filters by level slug');
select is(testes_gamificacao.resultado(public.gamificacao_ranking_nacional('lendario', 'mensal', 20, 0)), '404 NIVEL_NAO_ENCONTRADO', 'An unknown level answers 404');

-- Category board -------------------------------------------------------------------------------
select is(public.gamificacao_ranking_categoria('atividade', 'geral', 20, 0) #>> '{data,ranking,0,valor}', '4',
  'A category board computes itself on first use and reports the raw metric as valor');
select is(testes_gamificacao.resultado(public.gamificacao_ranking_categoria('simpatia', 'mensal', 20, 0)), '404 CATEGORIA_NAO_ENCONTRADA', 'An unknown category answers 404');

select * from finish();
rollback;
