-- Gamification badges: every rule kind of the catalogue, awarded once, counted on the technician.
begin;
select plan(31);
select testes_gamificacao.limpar();

select testes_gamificacao.nova_cidade('capital', 1500, 50), testes_gamificacao.nova_cidade('interior', 30, 20),
  testes_gamificacao.nova_cidade('media', 100, 20), testes_gamificacao.nova_cidade('isolada', 1500, 1),
  testes_gamificacao.nova_cidade('dupla', 1500, 2), testes_gamificacao.nova_cidade('remota', 3, 20);

-- contagem_acao --------------------------------------------------------------------------------
select testes_gamificacao.novo_tecnico('capital', 'Estreante') as estreante \gset
select testes_gamificacao.novo_chamado(:'estreante') as estreante_chamado \gset
select is(testes_gamificacao.pontuar(:'estreante', 'checkin_pontual', :'estreante_chamado', testes_gamificacao.leitura(now() - interval '2 hours')) -> 'badges_conquistados',
  '[]'::jsonb, 'A check-in alone earns no badge');
select is(testes_gamificacao.pontuar(:'estreante', 'chamado_concluido', :'estreante_chamado') #>> '{badges_conquistados,0,codigo}', 'primeiro_chamado',
  'The first concluded call earns Primeiro Chamado');
select is(jsonb_array_length(testes_gamificacao.pontuar(:'estreante', 'chamado_concluido', testes_gamificacao.novo_chamado(:'estreante')) -> 'badges_conquistados'), 0,
  'The second concluded call earns it no second time');

select testes_gamificacao.novo_tecnico('capital', 'Maratonista') as maratona, testes_gamificacao.novo_tecnico('capital', 'Veterana') as veterana \gset
insert into gamificacao.contagem_acoes values (:'maratona', 'chamado_concluido', 49), (:'veterana', 'chamado_concluido', 499);
select is((select array_agg(b ->> 'codigo' order by b ->> 'codigo') from jsonb_array_elements(
  testes_gamificacao.pontuar(:'maratona', 'chamado_concluido', testes_gamificacao.novo_chamado(:'maratona')) -> 'badges_conquistados') b),
  array['maratonista_bronze', 'primeiro_chamado'], 'The 50th concluded call earns Maratonista Bronze (not Prata)');
select is((select array_agg(b ->> 'codigo' order by b ->> 'codigo') from jsonb_array_elements(
  testes_gamificacao.pontuar(:'veterana', 'chamado_concluido', testes_gamificacao.novo_chamado(:'veterana')) -> 'badges_conquistados') b),
  array['maratonista_bronze', 'maratonista_ouro', 'maratonista_prata', 'primeiro_chamado'], 'The 500th earns every count badge not yet held');

select testes_gamificacao.novo_tecnico('capital', 'Pontual') as pontual \gset
insert into gamificacao.contagem_acoes values (:'pontual', 'checkin_pontual', 9);
select is(testes_gamificacao.pontuar(:'pontual', 'checkin_pontual', testes_gamificacao.novo_chamado(:'pontual'), testes_gamificacao.leitura(now() - interval '2 hours'))
  #>> '{badges_conquistados,0,codigo}', 'sempre_no_horario', 'The 10th punctual check-in earns Sempre no Horário');

select testes_gamificacao.novo_tecnico('capital', 'Estrelada') as estrelada \gset
insert into gamificacao.contagem_acoes values (:'estrelada', 'avaliacao_5_estrelas', 9);
select is(testes_gamificacao.pontuar(:'estrelada', 'avaliacao_5_estrelas', testes_gamificacao.novo_chamado(:'estrelada', 'concluido', now() - interval '2 hours', 5::smallint))
  #>> '{badges_conquistados,0,codigo}', 'cinco_estrelas', 'The 10th five-star rating earns Cinco Estrelas');

-- acao_antes_da_hora ---------------------------------------------------------------------------
-- Calls at 07:30 in Sao Paulo on ten past days, checked in at 07:25 and scored a minute later.
select testes_gamificacao.novo_tecnico('capital', 'Madrugadora') as cedo \gset
select count(testes_gamificacao.pontuar(:'cedo', 'checkin_pontual',
    testes_gamificacao.novo_chamado(:'cedo', 'concluido', ('2026-03-01 07:30'::timestamp at time zone 'America/Sao_Paulo') + make_interval(days => d)),
    testes_gamificacao.leitura(('2026-03-01 07:25'::timestamp at time zone 'America/Sao_Paulo') + make_interval(days => d)),
    ('2026-03-01 07:26'::timestamp at time zone 'America/Sao_Paulo') + make_interval(days => d)))
from generate_series(1, 9) d;
select is(testes_gamificacao.pontuar(:'cedo', 'checkin_pontual',
    testes_gamificacao.novo_chamado(:'cedo', 'concluido', '2026-03-11 09:00'::timestamp at time zone 'America/Sao_Paulo'),
    testes_gamificacao.leitura('2026-03-11 08:55'::timestamp at time zone 'America/Sao_Paulo'),
    '2026-03-11 08:56'::timestamp at time zone 'America/Sao_Paulo') #>> '{badges_conquistados,0,codigo}',
  'sempre_no_horario', 'Nine check-ins before 8h and one at 8:55 earn Sempre no Horário but not Madrugador');
select is(testes_gamificacao.pontuar(:'cedo', 'checkin_pontual',
    testes_gamificacao.novo_chamado(:'cedo', 'concluido', '2026-03-12 07:30'::timestamp at time zone 'America/Sao_Paulo'),
    testes_gamificacao.leitura('2026-03-12 07:25'::timestamp at time zone 'America/Sao_Paulo'),
    '2026-03-12 07:26'::timestamp at time zone 'America/Sao_Paulo') #>> '{badges_conquistados,0,codigo}',
  'madrugador', 'The tenth check-in before 8h (local time) earns Madrugador');

-- dias_na_semana -------------------------------------------------------------------------------
-- The week of Monday 2026-03-02 in Sao Paulo; calls concluded Monday to Thursday, twice on Tuesday.
select testes_gamificacao.novo_tecnico('capital', 'Semana') as semana \gset
insert into gamificacao.contagem_acoes values (:'semana', 'chamado_concluido', 1);
insert into public.usuario_badges (usuario_id, badge_codigo) values (:'semana', 'primeiro_chamado');
select count(testes_gamificacao.pontuar(:'semana', 'chamado_concluido',
    testes_gamificacao.novo_chamado(:'semana', 'concluido', d), '{}', d + interval '2 hours'))
from unnest(array['2026-03-02 10:00', '2026-03-03 09:00', '2026-03-03 15:00', '2026-03-04 10:00', '2026-03-05 10:00']::timestamp[]) t
cross join lateral (select t at time zone 'America/Sao_Paulo' as d) x;
select is((select count(*)::int from public.usuario_badges where usuario_id = :'semana' and badge_codigo = 'semana_cheia'), 0,
  'Five calls on four different days of a week do not earn Semana Cheia');
select is(testes_gamificacao.pontuar(:'semana', 'chamado_concluido',
    testes_gamificacao.novo_chamado(:'semana', 'concluido', '2026-03-06 10:00'::timestamp at time zone 'America/Sao_Paulo'), '{}',
    '2026-03-06 12:00'::timestamp at time zone 'America/Sao_Paulo') #>> '{badges_conquistados,0,codigo}',
  'semana_cheia', 'A fifth day in the same week earns Semana Cheia');
select testes_gamificacao.novo_tecnico('capital', 'Virada') as virada \gset
insert into public.usuario_badges (usuario_id, badge_codigo) values (:'virada', 'primeiro_chamado');
select count(testes_gamificacao.pontuar(:'virada', 'chamado_concluido',
    testes_gamificacao.novo_chamado(:'virada', 'concluido', d), '{}', d + interval '2 hours'))
from generate_series('2026-03-05 10:00'::timestamp, '2026-03-09 10:00', interval '1 day') t
cross join lateral (select t at time zone 'America/Sao_Paulo' as d) x;
select is((select count(*)::int from public.usuario_badges where usuario_id = :'virada' and badge_codigo = 'semana_cheia'), 0,
  'Five days that straddle two weeks (Thursday to Monday) do not earn it');
-- The week's fifth scoring on its fifth day: exactly as many scorings as the days the rule asks.
select testes_gamificacao.novo_tecnico('capital', 'Exata') as exata \gset
insert into public.usuario_badges (usuario_id, badge_codigo) values (:'exata', 'primeiro_chamado');
select count(testes_gamificacao.pontuar(:'exata', 'chamado_concluido',
    testes_gamificacao.novo_chamado(:'exata', 'concluido', d), '{}', d + interval '2 hours'))
from generate_series('2026-03-02 10:00'::timestamp, '2026-03-05 10:00', interval '1 day') t
cross join lateral (select t at time zone 'America/Sao_Paulo' as d) x;
select is(testes_gamificacao.pontuar(:'exata', 'chamado_concluido',
    testes_gamificacao.novo_chamado(:'exata', 'concluido', '2026-03-06 10:00'::timestamp at time zone 'America/Sao_Paulo'), '{}',
    '2026-03-06 12:00'::timestamp at time zone 'America/Sao_Paulo') #>> '{badges_conquistados,0,codigo}',
  'semana_cheia', 'Five scorings in a week, one a day, earn it on the fifth');

-- media_avaliacoes -----------------------------------------------------------------------------
select testes_gamificacao.novo_tecnico('capital', 'Encantadora') as encanta, testes_gamificacao.novo_tecnico('capital', 'Poucas') as poucas,
  testes_gamificacao.novo_tecnico('capital', 'Mediana') as mediana \gset
select testes_gamificacao.novo_chamado(:'encanta', 'concluido', now() - make_interval(days => d), case when d = 1 then 4 else 5 end::smallint)
from generate_series(1, 15) d;
select testes_gamificacao.novo_chamado(:'poucas', 'concluido', now() - make_interval(days => d), 5::smallint) from generate_series(1, 14) d;
select testes_gamificacao.novo_chamado(:'mediana', 'concluido', now() - make_interval(days => d), case when d <= 6 then 4 else 5 end::smallint)
from generate_series(1, 15) d;
select is(testes_gamificacao.pontuar(:'encanta', 'chamado_concluido', (select id from public.chamados where tecnico_id = :'encanta' and estrelas = 4))
  #>> '{badges_conquistados,0,codigo}', 'primeiro_chamado', 'A non-rating action does not evaluate the rating average');
select is(testes_gamificacao.pontuar(:'encanta', 'avaliacao_4_estrelas', (select id from public.chamados where tecnico_id = :'encanta' and estrelas = 4))
  #>> '{badges_conquistados,0,codigo}', 'cliente_encantado', 'Fifteen ratings in 30 days averaging 4.93 earn Cliente Encantado');
select is(testes_gamificacao.pontuar(:'poucas', 'avaliacao_5_estrelas', (select id from public.chamados where tecnico_id = :'poucas' limit 1)) -> 'badges_conquistados',
  '[]'::jsonb, 'Fourteen perfect ratings are below the minimum sample of 15');
select is(testes_gamificacao.pontuar(:'mediana', 'avaliacao_5_estrelas', (select id from public.chamados where tecnico_id = :'mediana' and estrelas = 5 limit 1)) -> 'badges_conquistados',
  '[]'::jsonb, 'Fifteen ratings averaging 4.6 do not earn it');

-- tier_cidade and tecnicos_ativos --------------------------------------------------------------
select testes_gamificacao.novo_tecnico('interior', 'Desbravadora') as desbrava, testes_gamificacao.novo_tecnico('media', 'Urbana') as urbana,
  testes_gamificacao.novo_tecnico('remota', 'Remota') as remota \gset
insert into public.usuario_badges (usuario_id, badge_codigo) values (:'desbrava', 'primeiro_chamado'), (:'urbana', 'primeiro_chamado');
select is(testes_gamificacao.pontuar(:'desbrava', 'chamado_concluido', testes_gamificacao.novo_chamado(:'desbrava')) #>> '{badges_conquistados,0,codigo}',
  'desbravador', 'Concluding a call in a tier-4 city earns Desbravador');
select is(testes_gamificacao.pontuar(:'urbana', 'chamado_concluido', testes_gamificacao.novo_chamado(:'urbana')) -> 'badges_conquistados',
  '[]'::jsonb, 'A tier-3 city does not');
select is(testes_gamificacao.pontuar(:'remota', 'checkin_pontual', testes_gamificacao.novo_chamado(:'remota'), testes_gamificacao.leitura(now() - interval '2 hours'))
  -> 'badges_conquistados', '[]'::jsonb, 'A check-in in a tier-5 city does not either (the rule is about concluded calls)');

select testes_gamificacao.novo_tecnico('isolada', 'Pioneira') as pioneira, testes_gamificacao.novo_tecnico('dupla', 'Acompanhada') as acompanhada \gset
insert into public.usuario_badges (usuario_id, badge_codigo) values (:'pioneira', 'primeiro_chamado'), (:'acompanhada', 'primeiro_chamado');
select is(testes_gamificacao.pontuar(:'pioneira', 'chamado_concluido', testes_gamificacao.novo_chamado(:'pioneira')) #>> '{badges_conquistados,0,codigo}',
  'pioneiro_regional', 'Concluding a call as the only active technician of the city earns Pioneiro Regional');
select is(testes_gamificacao.pontuar(:'acompanhada', 'chamado_concluido', testes_gamificacao.novo_chamado(:'acompanhada')) -> 'badges_conquistados',
  '[]'::jsonb, 'With two active technicians it does not');

-- nivel ----------------------------------------------------------------------------------------
select testes_gamificacao.novo_tecnico('capital', 'Quase Experiente', 950) as quase, testes_gamificacao.novo_tecnico('capital', 'Quase Legend', 39990) as lenda \gset
insert into public.usuario_badges (usuario_id, badge_codigo) values (:'quase', 'primeiro_chamado'), (:'lenda', 'primeiro_chamado');
select is(testes_gamificacao.pontuar(:'quase', 'chamado_concluido', testes_gamificacao.novo_chamado(:'quase')) -> 'badges_conquistados' -> 0 ->> 'codigo',
  'nivel_experiente', 'Reaching Experiente earns its level badge');
select is((select array_agg(b ->> 'codigo' order by b ->> 'codigo') from jsonb_array_elements(
  testes_gamificacao.pontuar(:'lenda', 'chamado_concluido', testes_gamificacao.novo_chamado(:'lenda')) -> 'badges_conquistados') b),
  array['nivel_experiente', 'nivel_expert', 'nivel_legend', 'nivel_master_tech'], 'Reaching Legend earns every level badge not yet held');

-- ranking_mensal (month close) -----------------------------------------------------------------
-- February 2026: five technicians in "podio", two in "pequena"; closed by the job on 1 March at 00:05.
select testes_gamificacao.nova_cidade('podio', 1500, 50), testes_gamificacao.nova_cidade('pequena', 1500, 50);
create temporary table fevereiro as
select n, testes_gamificacao.novo_tecnico(case when n <= 5 then 'podio' else 'pequena' end, 'Fevereiro ' || n) as id
from generate_series(1, 7) n;
select count(testes_gamificacao.pontuar(f.id, 'chamado_concluido',
    testes_gamificacao.novo_chamado(f.id, 'concluido', ('2026-02-10 09:00'::timestamp at time zone 'America/Sao_Paulo') + make_interval(days => k)), '{}',
    ('2026-02-10 12:00'::timestamp at time zone 'America/Sao_Paulo') + make_interval(days => k)))
from fevereiro f cross join lateral generate_series(1, case f.n when 7 then 9 else 8 - f.n end) k;
select ok(gamificacao.capturar_snapshots('2026-03-01 00:05'::timestamp at time zone 'America/Sao_Paulo') > 0, 'The daily job snapshots the closed month on 1 March');
select is((select array_agg(f.n order by f.n) from fevereiro f join public.usuario_badges ub on ub.usuario_id = f.id and ub.badge_codigo = 'podio_cidade'),
  array[1, 2, 3], 'The top three of a city with five technicians earn Pódio da Cidade');
select is((select array_agg(f.n order by f.n) from fevereiro f join public.usuario_badges ub on ub.usuario_id = f.id and ub.badge_codigo = 'campeao_nacional'),
  array[7], 'The national leader of the month earns Campeão Nacional, even from a city too small for a podium');
select is((select periodo_inicio from public.usuario_badges where badge_codigo = 'campeao_nacional'), '2026-02-01'::date, 'The award names the month that earned it');
select is(gamificacao.premiar_fechamento_mensal('2026-02-01', now()), 0, 'Running the month close again awards nothing twice');

-- Bookkeeping ----------------------------------------------------------------------------------
select is((select count(*)::int from public.tecnicos t where t.badges_count <> (select count(*) from public.usuario_badges ub where ub.usuario_id = t.id)
             and t.id not in (:'semana', :'virada', :'exata', :'desbrava', :'urbana', :'pioneira', :'acompanhada', :'quase', :'lenda')),
  0, 'badges_count matches the awards of every technician');
update public.badges set ativo = false where codigo = 'primeiro_chamado';
select testes_gamificacao.novo_tecnico('capital', 'Sem Badge') as sem \gset
select is(testes_gamificacao.pontuar(:'sem', 'chamado_concluido', testes_gamificacao.novo_chamado(:'sem')) -> 'badges_conquistados',
  '[]'::jsonb, 'An inactive badge is no longer awarded');

select * from finish();
rollback;
