-- Gamification category boards stored in blocks (20261121020800_gamification-category-rankings.sql):
-- a board longer than one block reads back as positions 1..N without gaps, every technician's
-- own position matches the board, and the API's pages, own entry, distance to the next one and
-- board size are right across a block boundary.
begin;
select plan(14);
select testes_gamificacao.limpar();

select testes_gamificacao.nova_cidade('blocos', 1500, 50);
create temporary table tec as
select i, testes_gamificacao.novo_tecnico('blocos', 'Bloco ' || i) as id from generate_series(1, 600) i;
-- 1 to 3 concluded calls each (atividade ranks all 600: minimum sample 1), and ten technicians
-- without a concluded call (not on the board).
select count(testes_gamificacao.novo_chamado(t.id, case when t.i <= 10 then 'cancelado' else 'concluido' end,
  gamificacao.meia_noite_local(gamificacao.inicio_periodo('semanal', now())) + (t.i % 97 + k) * interval '1 minute'))
from tec t cross join generate_series(1, 1 + t.i % 3) k;

select is(gamificacao.atualizar_rankings_categorias(now(), true, array['semanal']), 1, 'The job ranks the week');

create temporary table semana as
select r.* from gamificacao.ranking_categorias r
where r.categoria = 'atividade' and r.periodo = 'semanal' and r.periodo_inicio = gamificacao.inicio_periodo('semanal', now());

select is((select count(*)::int from gamificacao.quadros_categorias_blocos b
           where b.categoria = 'atividade' and b.periodo = 'semanal' and b.periodo_inicio = gamificacao.inicio_periodo('semanal', now())),
  3, '590 entries take three blocks of 256 positions');
select is((select array_agg(posicao order by posicao) from semana), array(select generate_series(1, 590)),
  'The board reads back as positions 1..590 without gaps');
select is((select count(distinct usuario_id)::int from semana), 590, 'Each ranked technician appears once');
select is((select count(*)::int from semana s join tec t on t.id = s.usuario_id where t.i <= 10), 0,
  'Technicians without a concluded call are not on the board');
select is((select count(*)::int from semana s
           where gamificacao.posicao_quadro_categoria('atividade', 'semanal', s.periodo_inicio, s.usuario_id) is distinct from s.posicao),
  0, 'Every technician''s own position, from the blocks in technician order, is their position on the board');
select is(gamificacao.posicao_quadro_categoria('atividade', 'semanal', gamificacao.inicio_periodo('semanal', now()), (select id from tec where i = 1)),
  null, 'A technician not on the board has no position');

-- Through the API, as the technician in position 257 (the first of the second block).
select testes_gamificacao.entrar_como((select usuario_id from semana where posicao = 257));
create temporary table resposta as select public.gamificacao_ranking_categoria('atividade', 'semanal', 10, 250) as r;
reset role;
select is((select array_agg((e ->> 'posicao')::int order by o) from resposta, jsonb_array_elements(r #> '{data,ranking}') with ordinality x (e, o)),
  array(select generate_series(251, 260)), 'A page across the block boundary lists positions 251 to 260 in order');
select is((select array_agg((e ->> 'usuario_id')::uuid order by o) from resposta, jsonb_array_elements(r #> '{data,ranking}') with ordinality x (e, o)),
  (select array_agg(usuario_id order by posicao) from semana where posicao between 251 and 260), 'with the board''s technicians');
select is((select (r #>> '{data,meta,total_tecnicos}')::int from resposta), 590, 'total_tecnicos is the board''s size');
select is((select (r #>> '{data,posicao_usuario,posicao}')::int from resposta), 257, 'The caller''s own position');
select is((select (r #>> '{data,posicao_usuario,valor}')::numeric from resposta), (select valor from semana where posicao = 257), 'and value');
select is((select (r #>> '{data,posicao_usuario,distancia_proximo}')::numeric from resposta),
  (select abs(a.valor - b.valor) from semana a, semana b where a.posicao = 256 and b.posicao = 257),
  'The distance to the next one above reads the previous block');

delete from gamificacao.ranking_categorias_calculos where periodo = 'semanal';
select is((select count(*)::int from gamificacao.quadros_categorias_usuarios where periodo = 'semanal'), 0,
  'A period''s stored boards go with its computation record');

select * from finish();
rollback;
