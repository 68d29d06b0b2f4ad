-- Gamification rankings: calendar periods, positions from rank buckets against a full sort, ties,
-- distance to the next entry, snapshots and position changes, and the five category boards.
begin;
select plan(38);
select testes_gamificacao.limpar();

-- Periods in America/Sao_Paulo -----------------------------------------------------------------
select is(gamificacao.inicio_periodo('mensal', '2026-03-01 02:59:59+00'), '2026-02-01'::date, '23:59 local on 28 February is still February');
select is(gamificacao.inicio_periodo('mensal', '2026-03-01 03:00:00+00'), '2026-03-01'::date, 'Local midnight starts March');
select is(gamificacao.inicio_periodo('semanal', '2026-03-09 02:30:00+00'), '2026-03-02'::date, 'Sunday 23:30 local belongs to the week from Monday 2 March');
select is(gamificacao.inicio_periodo('semanal', '2026-03-09 03:00:00+00'), '2026-03-09'::date, 'Monday 00:00 local starts a new week');
select is(gamificacao.inicio_periodo('anual', '2027-01-01 02:00:00+00'), '2026-01-01'::date, 'New Year''s Eve at 23:00 local is still the old year');
select is(gamificacao.inicio_periodo('geral', now()), '-infinity'::date, 'geral is one period for all time');
select is(gamificacao.meia_noite_local(gamificacao.fim_periodo('mensal', '2026-02-01')), '2026-03-01 03:00:00+00'::timestamptz,
  'A month ends at local midnight of the next 1st');

-- Positions against a full sort ----------------------------------------------------------------
-- 240 technicians in three cities, some starting as Experiente, with many equal totals; some
-- level up along the way and a few also scored two months ago.
select testes_gamificacao.nova_cidade('norte', 1500, 50), testes_gamificacao.nova_cidade('sul', 1500, 50), testes_gamificacao.nova_cidade('leste', 1500, 50);
create temporary table quadro as
select n, testes_gamificacao.novo_tecnico((array['norte', 'sul', 'leste'])[1 + n % 3], 'Técnico ' || n,
  case when n % 5 = 0 then 1000 when n % 7 = 0 then 960 else 0 end) as id
from generate_series(1, 240) n;
select count(testes_gamificacao.pontuar(q.id, 'chamado_concluido', testes_gamificacao.novo_chamado(q.id), '{}', now() - interval '2 months'))
from quadro q where q.n % 11 = 0;
select count(testes_gamificacao.pontuar(q.id, 'chamado_concluido', testes_gamificacao.novo_chamado(q.id), '{}', now() - make_interval(secs => (q.n * 7 + k) % 50)))
from quadro q cross join lateral generate_series(1, 1 + q.n % 6) k;

create temporary table esperado as
select t.usuario_id, t.pontos, t.ultima_pontuacao_em, t.cidade_id, t.nivel_ordem,
  row_number() over (order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id) as nacional,
  row_number() over (partition by t.cidade_id order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id) as local,
  row_number() over (partition by t.nivel_ordem order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id) as nivel,
  lag(t.pontos) over (order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id) as acima
from gamificacao.totais_periodo t
where t.periodo = 'mensal' and t.periodo_inicio = gamificacao.inicio_periodo('mensal', now());

select ok((select count(distinct pontos) from esperado) > 5 and (select count(*) from esperado) = 240, 'The monthly board has 240 technicians and many ties');
select is((select count(*)::int from esperado e
           where gamificacao.posicao('nacional', 'mensal', gamificacao.inicio_periodo('mensal', now()), null, e.pontos, e.ultima_pontuacao_em, e.usuario_id) <> e.nacional),
  0, 'Every national position from the buckets equals the full sort (points, earlier last scoring, usuario_id)');
select is((select count(*)::int from esperado e
           where gamificacao.posicao('local', 'mensal', gamificacao.inicio_periodo('mensal', now()), e.cidade_id, e.pontos, e.ultima_pontuacao_em, e.usuario_id) <> e.local),
  0, 'Every city position equals the full sort of that city');
select is((select count(*)::int from esperado e
           where gamificacao.posicao('nivel', 'mensal', gamificacao.inicio_periodo('mensal', now()), e.nivel_ordem::text, e.pontos, e.ultima_pontuacao_em, e.usuario_id) <> e.nivel),
  0, 'Every position on a level''s board equals the full sort of that level');
select is((select count(*)::int from esperado e
           where gamificacao.distancia_proximo('nacional', 'mensal', gamificacao.inicio_periodo('mensal', now()), null, e.pontos, e.ultima_pontuacao_em, e.usuario_id)
                 <> coalesce(e.acima - e.pontos, 0)),
  0, 'distancia_proximo is the points of the entry right above (0 for the leader and for time-broken ties)');
select set_eq($$select periodo, periodo_inicio, nivel, escala, faixa, quantidade from gamificacao.faixas_ranking where quantidade <> 0$$,
  $$select t.periodo, t.periodo_inicio, n.nivel, e.escala, t.pontos / p.largura_faixa / case e.escala when 1 then 32 else 1 end, count(*)::int
    from gamificacao.totais_periodo t join gamificacao.periodos p using (periodo)
    cross join lateral (values (0::smallint), (t.nivel_ordem)) n (nivel) cross join (values (0::smallint), (1::smallint)) e (escala)
    group by 1, 2, 3, 4, 5
    union all
    select periodo, periodo_inicio, 0, 2, pontos, count(*)::int from gamificacao.totais_periodo group by 1, 2, 5$$,
  'The rank buckets maintained by scoring (every scale, level-ups included) equal a recount of the totals');
select is((select count(*)::int from gamificacao.totais_periodo t join public.tecnicos tc on tc.id = t.usuario_id join public.niveis nv on nv.slug = tc.nivel
           where t.nivel_ordem <> nv.ordem), 0, 'Every period row, old months included, carries the technician''s current level');
select is(
  (select array_agg(e ->> 'usuario_id' order by (e ->> 'posicao')::int)
   from jsonb_array_elements(gamificacao.pagina_quadro('nacional', 'mensal', gamificacao.inicio_periodo('mensal', now()), null, 10, 10)) e),
  (select array_agg(usuario_id::text order by nacional) from esperado where nacional between 11 and 20),
  'A page of the national board lists positions 11 to 20 in board order');
select is((select (e ->> 'posicao')::int from jsonb_array_elements(gamificacao.pagina_quadro('local', 'mensal', gamificacao.inicio_periodo('mensal', now()), 'sul', 5, 5)) e limit 1),
  6, 'Positions on a page continue from the offset');

-- Snapshots and position changes ---------------------------------------------------------------
select testes_gamificacao.nova_cidade('foto', 1500, 50);
select testes_gamificacao.novo_tecnico('foto', 'Xavier') as x, testes_gamificacao.novo_tecnico('foto', 'Yara') as y, testes_gamificacao.novo_tecnico('foto', 'Zeca') as z \gset
select count(testes_gamificacao.pontuar(t.id, 'chamado_concluido', testes_gamificacao.novo_chamado(t.id)))
from (values (:'x'::uuid, 3), (:'y'::uuid, 2), (:'z'::uuid, 1)) t (id, vezes) cross join lateral generate_series(1, t.vezes);
select ok(gamificacao.capturar_snapshots() > 0, 'The snapshot job stores positions');
select is((select array[posicao_local, posicao_nacional is not null::int] from gamificacao.ranking_snapshots
           where usuario_id = :'x' and periodo = 'mensal' and periodo_inicio = gamificacao.inicio_periodo('mensal', now())),
  array[1, 1], 'with each technician''s position on the city board (and the national one)');
select count(testes_gamificacao.pontuar(:'z', 'chamado_concluido', testes_gamificacao.novo_chamado(:'z'))) from generate_series(1, 3);
select testes_gamificacao.novo_tecnico('foto', 'Wanda') as w \gset
select testes_gamificacao.pontuar(:'w', 'chamado_concluido', testes_gamificacao.novo_chamado(:'w'));
create temporary table variacao as
select (e ->> 'usuario_id')::uuid as id, (e ->> 'posicao')::int as posicao, (e ->> 'variacao_posicao')::int as variacao
from jsonb_array_elements(gamificacao.pagina_quadro('local', 'mensal', gamificacao.inicio_periodo('mensal', now()), 'foto', 10, 0)) e;
select is((select variacao from variacao where id = :'z'), 2, 'Passing two technicians since the snapshot shows variacao_posicao +2');
select is((select array_agg(variacao order by posicao) from variacao where id in (:'x', :'y')), array[-1, -1], 'Those passed show -1');
select is((select variacao from variacao where id = :'w'), 0, 'A newcomer since the snapshot shows 0');
update public.tecnicos set cidade_id = 'norte' where id = :'x';
select is((select cidade_id from gamificacao.totais_periodo where usuario_id = :'x' and periodo = 'geral'), 'norte', 'Moving a technician moves their totals to the new city''s board');
select set_eq($$select periodo, periodo_inicio, cidade_id, escala, faixa, quantidade from gamificacao.faixas_cidades where quantidade <> 0$$,
  $$select t.periodo, t.periodo_inicio, t.cidade_id, e.escala, t.pontos / p.largura_faixa / case e.escala when 1 then 32 else 1 end, count(*)::int
    from gamificacao.totais_periodo t join gamificacao.periodos p using (periodo) cross join (values (0::smallint), (1::smallint)) e (escala)
    group by 1, 2, 3, 4, 5$$,
  'and from the old city''s rank buckets to the new one''s: the city buckets equal a recount of the totals');
select is((select count(*)::int from gamificacao.totais_periodo t
           where t.cidade_id in ('norte', 'foto')
             and gamificacao.posicao('local', t.periodo, t.periodo_inicio, t.cidade_id, t.pontos, t.ultima_pontuacao_em, t.usuario_id)
               <> (select count(*) + 1 from gamificacao.totais_periodo o
                   where o.periodo = t.periodo and o.periodo_inicio = t.periodo_inicio and o.cidade_id = t.cidade_id
                     and (o.pontos > t.pontos or (o.pontos = t.pontos and (o.ultima_pontuacao_em, o.usuario_id) < (t.ultima_pontuacao_em, t.usuario_id))))),
  0, 'Every position on both cities'' boards, on every period, equals a full count after the move');
select is((select (e ->> 'variacao_posicao')::int from jsonb_array_elements(gamificacao.pagina_quadro('local', 'mensal', gamificacao.inicio_periodo('mensal', now()), 'norte', 100, 0)) e
           where e ->> 'usuario_id' = :'x'), 0, 'and their change on the new city''s board is 0 (no comparable snapshot)');

-- Deleting technicians (their accounts) takes their totals off every count.
delete from public.tecnicos where id in (select id from quadro where n % 17 = 0) or id = :'y';
select set_eq($$select periodo, periodo_inicio, nivel, escala, faixa, quantidade from gamificacao.faixas_ranking where quantidade <> 0$$,
  $$select t.periodo, t.periodo_inicio, n.nivel, e.escala, t.pontos / p.largura_faixa / case e.escala when 1 then 32 else 1 end, count(*)::int
    from gamificacao.totais_periodo t join gamificacao.periodos p using (periodo)
    cross join lateral (values (0::smallint), (t.nivel_ordem)) n (nivel) cross join (values (0::smallint), (1::smallint)) e (escala)
    group by 1, 2, 3, 4, 5
    union all
    select periodo, periodo_inicio, 0, 2, pontos, count(*)::int from gamificacao.totais_periodo group by 1, 2, 5$$,
  'Deleting technicians takes them off the rank buckets and exact-points counts');
select set_eq($$select periodo, periodo_inicio, chave, quantidade from gamificacao.faixas_pontos where quantidade <> 0$$,
  $$select periodo, periodo_inicio, gamificacao.chave_empate(periodo, periodo_inicio, pontos, ultima_pontuacao_em), count(*)::int
    from gamificacao.totais_periodo group by 1, 2, 3$$,
  'and off the tie keys');
select set_eq($$select periodo, periodo_inicio, cidade_id, escala, faixa, quantidade from gamificacao.faixas_cidades where quantidade <> 0$$,
  $$select t.periodo, t.periodo_inicio, t.cidade_id, e.escala, t.pontos / p.largura_faixa / case e.escala when 1 then 32 else 1 end, count(*)::int
    from gamificacao.totais_periodo t join gamificacao.periodos p using (periodo) cross join (values (0::smallint), (1::smallint)) e (escala)
    group by 1, 2, 3, 4, 5$$,
  'and off the city buckets');

-- Category boards ------------------------------------------------------------------------------
-- January 2026: each technician's calls shaped for one category.
select testes_gamificacao.nova_cidade('categorias', 1500, 50);
create temporary table cat as
select nome, testes_gamificacao.novo_tecnico('categorias', nome) as id
from unnest(array['pontual', 'atrasada', 'poucos_checkins', 'nota_alta_poucas', 'nota_boa_muitas', 'nota_baixa', 'rapida', 'lenta', 'fiel', 'cliente_cancela', 'cancela']) nome;
create function pg_temp.chamados(p_nome text, p_quantos int, p_status text default 'concluido', p_estrelas smallint default null) returns setof uuid
language sql as $$
  select testes_gamificacao.novo_chamado((select id from cat where nome = p_nome), p_status,
    ('2026-01-05 09:00'::timestamp at time zone 'America/Sao_Paulo') + make_interval(days => i), p_estrelas)
  from generate_series(1, p_quantos) i
$$;
select pg_temp.chamados('pontual', 6);
select pg_temp.chamados('atrasada', 5);
update public.chamados set checkin_em = agendado_para + interval '20 minutes', checkout_em = agendado_para + interval '80 minutes'
where id = (select min(id::text)::uuid from public.chamados where tecnico_id = (select id from cat where nome = 'atrasada'));
select pg_temp.chamados('poucos_checkins', 4);
select pg_temp.chamados('nota_alta_poucas', 3, 'concluido', 5::smallint);
select pg_temp.chamados('nota_boa_muitas', 18, 'concluido', 5::smallint), pg_temp.chamados('nota_boa_muitas', 2, 'concluido', 4::smallint);
select pg_temp.chamados('nota_baixa', 20, 'concluido', 3::smallint);
select pg_temp.chamados('rapida', 6);
update public.chamados set checkout_em = checkin_em + interval '30 minutes' where tecnico_id = (select id from cat where nome = 'rapida');
update public.chamados set checkout_em = checkin_em + interval '2 minutes'
where id = (select min(id::text)::uuid from public.chamados where tecnico_id = (select id from cat where nome = 'rapida'));
select pg_temp.chamados('lenta', 5);
update public.chamados set checkout_em = checkin_em + interval '3 hours' where tecnico_id = (select id from cat where nome = 'lenta');
select pg_temp.chamados('fiel', 5);
select pg_temp.chamados('cliente_cancela', 4), pg_temp.chamados('cliente_cancela', 2, 'cancelado');
update public.chamados set cancelado_por = 'cliente' where status = 'cancelado' and tecnico_id = (select id from cat where nome = 'cliente_cancela');
select pg_temp.chamados('cancela', 4), pg_temp.chamados('cancela', 1, 'cancelado');

select gamificacao.calcular_rankings_categorias('mensal', '2026-01-01', now());
create temporary table janeiro as
select r.categoria, c.nome, r.posicao, r.valor, r.amostras
from gamificacao.ranking_categorias r join cat c on c.id = r.usuario_id
where r.periodo = 'mensal' and r.periodo_inicio = '2026-01-01';

select is((select array_agg(valor order by posicao) from janeiro where categoria = 'pontualidade' and nome in ('pontual', 'atrasada')),
  array[0.00, 20.00], 'pontualidade ranks 0% late above 20% late (1 of 5 check-ins more than 15 min late)');
select is((select count(*)::int from janeiro where categoria = 'pontualidade' and nome = 'poucos_checkins'), 0, 'Four check-ins are below its minimum sample of 5');
select is((select array_agg(nome || ' ' || valor order by posicao) from janeiro where categoria = 'qualidade'),
  array['nota_boa_muitas 4.72', 'nota_alta_poucas 4.39', 'nota_baixa 3.20'],
  'qualidade uses the Bayesian average: 4.9 from 20 ratings beats 5.0 from 3 (C = 173/43, m = 5)');
select is((select array_agg(nome || ' ' || valor || ' ' || amostras order by posicao) from janeiro where categoria = 'velocidade' and nome in ('rapida', 'lenta')),
  array['rapida 30.0 5', 'lenta 180.0 5'], 'velocidade ranks the lower average time first and drops a 2-minute call as a data error');
select ok((select posicao from janeiro where categoria = 'atividade' and nome = 'nota_boa_muitas') = 1
  and (select valor from janeiro where categoria = 'atividade' and nome = 'nota_boa_muitas') = 20, 'atividade ranks the most concluded calls first');
select is((select array_agg(nome || ' ' || valor order by posicao) from janeiro where categoria = 'confiabilidade' and nome in ('cliente_cancela', 'cancela')),
  array['cliente_cancela 0.00', 'cancela 20.00'], 'confiabilidade counts only the technician''s own cancellations of accepted calls');

select is(gamificacao.atualizar_rankings_categorias(), 4, 'The category job computes the current period of every kind');
select is(gamificacao.atualizar_rankings_categorias(), 0, 'and skips them all while no call changed');
update public.chamados set estrelas = 4 where id = (select min(id::text)::uuid from public.chamados where status = 'concluido');
select is(gamificacao.atualizar_rankings_categorias(), 4, 'A changed call makes it compute again');
select is(gamificacao.atualizar_rankings_categorias(now(), true, array['semanal', 'mensal']), 2, 'The 5-minute job covers the week and the month only');

select * from finish();
rollback;
