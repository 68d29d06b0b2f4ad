-- Gamification: national positions counted from the tie keys (exact points and time slot of the
-- last scoring, gamificacao.faixas_pontos) and city positions counted from the city rank buckets
-- (gamificacao.faixas_cidades) equal a full sort on every period kind, with large ties spread over
-- days and slot boundaries, level-ups, several coarse buckets and batches; scoring keeps the tie
-- keys and the city buckets equal to a recount, and so does reconstruir_faixas.
begin;
select plan(21);
select testes_gamificacao.limpar();

-- Slots --------------------------------------------------------------------------------------
select is(
  (select count(*)::int from gamificacao.periodos p
   cross join lateral (values (case p.periodo when 'geral' then '-infinity'::date when 'anual' then '2026-01-01'::date
     when 'mensal' then '2026-03-01'::date else '2026-03-02'::date end)) i (inicio)
   cross join generate_series(1, case p.periodo when 'semanal' then 62 when 'mensal' then 61 when 'anual' then 60 else 40 end) k
   where gamificacao.fatia_empate(p.periodo, i.inicio, gamificacao.inicio_fatia_empate(p.periodo, i.inicio, k)) <> k
      or gamificacao.fatia_empate(p.periodo, i.inicio, gamificacao.inicio_fatia_empate(p.periodo, i.inicio, k) - interval '1 microsecond') <> k - 1),
  0, 'Every slot starts where its fatia_empate changes, on every period kind');
select is(gamificacao.fatia_empate('mensal', '2026-03-01', '2026-03-01 02:59:59+00'), 0, 'A moment before the period falls into slot 0');
select is(gamificacao.inicio_fatia_empate('mensal', '2026-03-01', 0), '-infinity'::timestamptz, 'which starts at -infinity');
select is(gamificacao.fatia_empate('geral', '-infinity', '2200-01-01 00:00+00'), 63, 'A moment past the last slot falls into the last one');
select is(gamificacao.chave_empate('mensal', '2026-03-01', 150, '2026-03-03 03:00+00'), 150 * 64 + 4, 'The tie key is points × 64 + slot (12 hours in a month)');
select is(gamificacao.fatia_empate('semanal', '2026-03-02', '2026-03-02 05:40+00'), 1, 'A week''s slot is 160 minutes');

-- Positions against a full sort ----------------------------------------------------------------
-- 300 technicians in March 2026, each action worth 50 points, so only a few point values and
-- ties of a hundred technicians, last scored over different days (some exactly at a local
-- midnight, some sharing one instant); some start at 960 points and level up on the way, and a few
-- score a dozen times more, into higher coarse buckets (320 points for a week or a month).
select testes_gamificacao.nova_cidade('empate-norte', 1500, 50), testes_gamificacao.nova_cidade('empate-sul', 1500, 50);
create temporary table quadro as
select n, testes_gamificacao.novo_tecnico(case when n % 2 = 0 then 'empate-norte' else 'empate-sul' end, 'Técnico ' || n,
  case when n % 7 = 0 then 960 else 0 end) as id
from generate_series(1, 300) n;
select count(testes_gamificacao.pontuar(q.id, 'chamado_concluido', testes_gamificacao.novo_chamado(q.id, p_agendado => '2026-03-01 12:00+00'), '{}',
  '2026-03-01 03:00+00'::timestamptz + make_interval(days => (q.n * 7 + k * 3) % 29, secs => case when q.n % 5 = 0 then 0 else (q.n * 13) % 600 end)))
from quadro q cross join lateral generate_series(1, 1 + q.n % 3 + case when q.n % 41 = 0 then 12 else 0 end) k;

create temporary table esperado as
select t.periodo, t.periodo_inicio, t.usuario_id, t.pontos, t.ultima_pontuacao_em,
  row_number() over (partition by t.periodo, t.periodo_inicio order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id) as nacional,
  t.cidade_id,
  row_number() over (partition by t.periodo, t.periodo_inicio, t.cidade_id order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id) as local
from gamificacao.totais_periodo t;

select ok((select count(*) from esperado where periodo = 'mensal') = 300
    and (select max(c) from (select count(*) c from esperado where periodo = 'mensal' group by pontos) g) >= 80,
  'The March board has 300 technicians and ties of at least 80');
select ok((select count(distinct (periodo, periodo_inicio)) from esperado) >= 8, 'on several weeks, a month, a year and all time');
select is((select count(*)::int from esperado e
           where gamificacao.posicao('nacional', e.periodo, e.periodo_inicio, null, e.pontos, e.ultima_pontuacao_em, e.usuario_id) <> e.nacional),
  0, 'Every national position, on every period kind, equals the full sort (points, earlier last scoring, usuario_id)');
select ok((select count(distinct faixa) from gamificacao.faixas_cidades where periodo = 'mensal' and escala = 1 and quantidade > 0) >= 2,
  'The city boards span more than one coarse bucket');
select is((select count(*)::int from esperado e
           where gamificacao.posicao('local', e.periodo, e.periodo_inicio, e.cidade_id, e.pontos, e.ultima_pontuacao_em, e.usuario_id) <> e.local),
  0, 'Every city position, on every period kind, equals the full sort of that city');

create temporary table recontagem_cidades as
select t.periodo, t.periodo_inicio, t.cidade_id, e.escala, t.pontos / p.largura_faixa / case e.escala when 1 then 32 else 1 end as faixa, count(*)::int as quantidade
from gamificacao.totais_periodo t join gamificacao.periodos p using (periodo) cross join (values (0::smallint), (1::smallint)) e (escala)
group by 1, 2, 3, 4, 5;
select set_eq($$select periodo, periodo_inicio, cidade_id, escala, faixa, quantidade from gamificacao.faixas_cidades where quantidade <> 0$$,
  $$select * from recontagem_cidades$$, 'The city buckets maintained by scoring equal a recount of the totals');

create temporary table recontagem as
select t.periodo, t.periodo_inicio, gamificacao.chave_empate(t.periodo, t.periodo_inicio, t.pontos, t.ultima_pontuacao_em) as chave, count(*)::int as quantidade
from gamificacao.totais_periodo t group by 1, 2, 3;
select set_eq($$select periodo, periodo_inicio, chave, quantidade from gamificacao.faixas_pontos where quantidade <> 0$$,
  $$select * from recontagem$$, 'The tie keys maintained by scoring equal a recount of the totals');

-- A batch scores now, in the current month: its moves are applied once at the end.
select jsonb_agg(jsonb_build_object('usuario_id', q.id, 'acao', 'chamado_concluido', 'chamado_id', testes_gamificacao.novo_chamado(q.id))) as lote
from quadro q where q.n <= 60 \gset
select testes_gamificacao.entrar_como_servico();
select public.gamificacao_registrar_acoes(:'lote'::jsonb) -> 'data' ->> 'sucesso' as sucesso \gset
reset role;
select is(:'sucesso'::int, 60, 'A batch scores 60 technicians this month');
select is((select count(*)::int from gamificacao.totais_periodo t
           cross join lateral (select count(*) + 1 as esperada from gamificacao.totais_periodo o
             where o.periodo = t.periodo and o.periodo_inicio = t.periodo_inicio
               and (o.pontos > t.pontos or (o.pontos = t.pontos and (o.ultima_pontuacao_em, o.usuario_id) < (t.ultima_pontuacao_em, t.usuario_id)))) s
           where gamificacao.posicao('nacional', t.periodo, t.periodo_inicio, null, t.pontos, t.ultima_pontuacao_em, t.usuario_id) <> s.esperada),
  0, 'after which every national position still equals a full count');
select is((select count(*)::int from gamificacao.totais_periodo t
           cross join lateral (select count(*) + 1 as esperada from gamificacao.totais_periodo o
             where o.periodo = t.periodo and o.periodo_inicio = t.periodo_inicio and o.cidade_id = t.cidade_id
               and (o.pontos > t.pontos or (o.pontos = t.pontos and (o.ultima_pontuacao_em, o.usuario_id) < (t.ultima_pontuacao_em, t.usuario_id)))) s
           where gamificacao.posicao('local', t.periodo, t.periodo_inicio, t.cidade_id, t.pontos, t.ultima_pontuacao_em, t.usuario_id) <> s.esperada),
  0, 'and so does every city position');

create temporary table mantidas as select periodo, periodo_inicio, chave, quantidade from gamificacao.faixas_pontos where quantidade <> 0;
create temporary table mantidas_cidades as
select periodo, periodo_inicio, cidade_id, escala, faixa, quantidade from gamificacao.faixas_cidades where quantidade <> 0;
select gamificacao.reconstruir_faixas();
select set_eq($$select periodo, periodo_inicio, chave, quantidade from gamificacao.faixas_pontos$$, $$select * from mantidas$$,
  'The tie keys scoring and the batch maintained equal what reconstruir_faixas recounts');
select set_eq($$select periodo, periodo_inicio, cidade_id, escala, faixa, quantidade from gamificacao.faixas_cidades$$, $$select * from mantidas_cidades$$,
  'and so do the city buckets');

-- Boards being scored now ---------------------------------------------------------------------
-- 150 technicians of another city score 50 points once to three times over the last 20 hours,
-- most of them in the current slot, several at the very same instant: a national position counts
-- its ties from the nearer end of its slot (the slot's end, or the present while it fills), and
-- both ends must agree with the full sort, also for an entry that is not on the board.
select testes_gamificacao.nova_cidade('empate-agora', 1500, 50);
create temporary table agora as
select n, testes_gamificacao.novo_tecnico('empate-agora', 'Técnico agora ' || n) as id from generate_series(1, 150) n;
select count(testes_gamificacao.pontuar(a.id, 'chamado_concluido', testes_gamificacao.novo_chamado(a.id, p_agendado => now() - interval '1 day'), '{}',
  now() - make_interval(secs => case when a.n % 6 = 0 then 0 else (a.n * 977 + k * 4201) % 72000 end)))
from agora a cross join lateral generate_series(1, 1 + a.n % 3) k;

create temporary table esperado_agora as
select t.periodo, t.periodo_inicio, t.usuario_id, t.pontos, t.ultima_pontuacao_em,
  row_number() over (partition by t.periodo, t.periodo_inicio order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id) as nacional,
  gamificacao.inicio_fatia_empate(t.periodo, t.periodo_inicio, f.fatia) as inicio_fatia,
  case when f.fatia >= 63 then 'infinity' else gamificacao.inicio_fatia_empate(t.periodo, t.periodo_inicio, f.fatia + 1) end as fim_fatia
from gamificacao.totais_periodo t
cross join lateral (select gamificacao.fatia_empate(t.periodo, t.periodo_inicio, t.ultima_pontuacao_em) as fatia) f
where (t.periodo, t.periodo_inicio) in (select p.periodo, gamificacao.inicio_periodo(p.periodo, now()) from gamificacao.periodos p);

create temporary table extremos_agora as
select usuario_id, case when inicio_fatia = '-infinity' then true else least(fim_fatia, now()) - ultima_pontuacao_em < ultima_pontuacao_em - inicio_fatia end as do_fim
from esperado_agora where usuario_id in (select id from agora);
select ok((select count(*) filter (where do_fim) >= 50 and count(*) filter (where not do_fim) >= 50 from extremos_agora),
  'The current boards hold entries nearer the end of their slot and entries nearer its start');
select is((select count(*)::int from esperado_agora e
           where gamificacao.posicao('nacional', e.periodo, e.periodo_inicio, null, e.pontos, e.ultima_pontuacao_em, e.usuario_id) <> e.nacional),
  0, 'Every national position on the boards being scored now equals the full sort');
select is((select count(*)::int from esperado_agora e
           where gamificacao.posicao('nacional', e.periodo, e.periodo_inicio, null, e.pontos, e.ultima_pontuacao_em, '00000000-0000-4000-8000-000000000000')
             <> 1 + (select count(*) from gamificacao.totais_periodo t where t.periodo = e.periodo and t.periodo_inicio = e.periodo_inicio
                 and (t.pontos > e.pontos or (t.pontos = e.pontos
                   and (t.ultima_pontuacao_em, t.usuario_id) < (e.ultima_pontuacao_em, '00000000-0000-4000-8000-000000000000'::uuid))))),
  0, 'and so does the position an entry not on the board would take');

select * from finish();
rollback;
