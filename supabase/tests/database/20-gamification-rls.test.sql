-- Gamification row-level security and privileges: technicians read their own history, badges and
-- calls plus everyone's public ranking fields, write only through scoring; administrators and the
-- service role manage catalogues and calls; the ledger is append-only.
begin;
select plan(38);
select testes_gamificacao.limpar();

select is(
  (select array_agg(c.relname::text order by c.relname) from pg_class c
   where c.relnamespace = 'public'::regnamespace and c.relrowsecurity
     and c.relname in ('niveis', 'faixas_tier', 'acoes', 'badges', 'cidades', 'cidades_metricas', 'tecnicos', 'chamados', 'historico_pontos', 'usuario_badges')),
  array['acoes', 'badges', 'chamados', 'cidades', 'cidades_metricas', 'faixas_tier', 'historico_pontos', 'niveis', 'tecnicos', 'usuario_badges'],
  'Every public gamification table has row-level security on');

select testes_gamificacao.nova_cidade('rls', 1500, 50);
select testes_gamificacao.novo_tecnico('rls', 'Ana') as ana, testes_gamificacao.novo_tecnico('rls', 'Bia') as bia \gset
select testes_gamificacao.novo_chamado(:'ana') as chamado_ana, testes_gamificacao.novo_chamado(:'bia') as chamado_bia \gset
select testes_gamificacao.pontuar(:'ana', 'chamado_concluido', :'chamado_ana'), testes_gamificacao.pontuar(:'bia', 'chamado_concluido', :'chamado_bia');
select testes_gamificacao.novo_usuario('{"role": "admin"}') as admin \gset

-- A technician ---------------------------------------------------------------------------------
select testes_gamificacao.entrar_como(:'ana');
select is((select array_agg(distinct usuario_id) from public.historico_pontos), array[:'ana'::uuid], 'A technician reads only their own history');
select is((select array_agg(distinct usuario_id) from public.usuario_badges), array[:'ana'::uuid], 'A technician reads only their own badges');
select is((select array_agg(id) from public.chamados), array[:'chamado_ana'::uuid], 'A technician reads only their own calls');
select is((select count(*)::int from public.tecnicos), 2, 'A technician reads every technician''s public ranking fields');
select is((select count(*)::int from public.niveis), 5, 'A technician reads the levels');
select ok((select count(*) from public.acoes) > 0 and (select count(*) from public.badges) > 0 and (select count(*) from public.faixas_tier) = 5,
  'A technician reads the action, badge and tier catalogues');
select is((select count(*)::int from public.cidades join public.cidades_metricas on cidade_id = id), 1, 'A technician reads cities and their metrics');

select throws_ok(format($$insert into public.historico_pontos (usuario_id, chamado_id, acao, cidade_id, pontos_base, multiplicador_tier,
    multiplicador_densidade, multiplicador_nivel, pontos_final, tier, tecnicos_ativos, nivel_antes)
    values (%L, %L, 'checkin_pontual', 'rls', 10, 1, 1, 1, 1000, 1, 1, 'iniciante')$$, :'ana', :'chamado_ana'),
  '42501', null, 'A technician cannot write history directly');
select throws_ok($$update public.historico_pontos set pontos_final = 9999$$, '42501', null, 'A technician cannot change history');
select throws_ok(format($$insert into public.usuario_badges (usuario_id, badge_codigo) values (%L, 'maratonista_ouro')$$, :'ana'),
  '42501', null, 'A technician cannot award themself a badge');
select throws_ok(format($$update public.tecnicos set pontos_total = 99999 where id = %L$$, :'ana'),
  '42501', null, 'A technician cannot change their points');
select throws_ok(format($$insert into public.chamados (tecnico_id, cidade_id, latitude, longitude, agendado_para) values (%L, 'rls', -23.5, -46.6, now())$$, :'ana'),
  '42501', null, 'A technician cannot create calls');
select throws_ok($$insert into public.acoes (codigo, nome, descricao, pontos_base, status_exigidos) values ('bonus', 'Bônus', 'x', 1000, '{concluido}')$$,
  '42501', null, 'A technician cannot add actions to the catalogue');
select throws_ok($$select count(*) from gamificacao.totais_periodo$$, '42501', null, 'A technician cannot read the private totals');
select throws_ok($$select count(*) from gamificacao.quadros_categorias_blocos$$, '42501', null,
  'A technician cannot read the stored category boards (only through the API)');
select throws_ok($$select count(*) from gamificacao.quadros_categorias_usuarios$$, '42501', null, 'nor their index by technician');
select throws_ok($$select count(*) from gamificacao.faixas_cidades$$, '42501', null, 'nor the city boards'' rank buckets');
select is_empty(format($$update public.chamados set estrelas = 5 where id = %L returning id$$, :'chamado_bia'), 'A technician cannot change another''s call');
select is_empty($$update public.niveis set multiplicador = 3 returning slug$$, 'A technician cannot change the levels');
select results_eq(format($$update public.tecnicos set nome = 'Ana Souza', avatar_url = 'https://example.test/ana.png' where id = %L returning nome$$, :'ana'),
  array['Ana Souza'], 'A technician edits their own name and avatar');
select is_empty(format($$update public.tecnicos set nome = 'Bia Hackeada' where id = %L returning id$$, :'bia'), 'but not another technician''s');
reset role;

-- An administrator -----------------------------------------------------------------------------
select testes_gamificacao.entrar_como(:'admin', '{"role": "admin"}');
select is((select count(distinct usuario_id)::int from public.historico_pontos), 2, 'An administrator reads everyone''s history');
select is((select count(*)::int from public.chamados), 2, 'An administrator reads every call');
select lives_ok(format($$insert into public.chamados (tecnico_id, cidade_id, latitude, longitude, agendado_para) values (%L, 'rls', -23.5, -46.6, now())$$, :'bia'),
  'An administrator creates calls');
select results_eq($$update public.acoes set pontos_base = 12 where codigo = 'checkin_pontual' returning pontos_base$$, array[12], 'An administrator tunes the action catalogue');
select throws_ok(format($$insert into public.usuario_badges (usuario_id, badge_codigo) values (%L, 'maratonista_ouro')$$, :'bia'),
  '42501', null, 'An administrator cannot award badges by hand either');
reset role;

-- The service role -----------------------------------------------------------------------------
select testes_gamificacao.novo_usuario() as novo \gset
select testes_gamificacao.entrar_como_servico();
select lives_ok(format($$insert into public.tecnicos (id, nome, cidade_id) values (%L, 'Carla', 'rls')$$, :'novo'), 'The service role registers technicians');
select is((select count(*)::int from public.historico_pontos), 2, 'The service role reads all history');
select throws_ok(format($$update public.tecnicos set pontos_total = 5 where id = %L$$, :'novo'), '42501', null, 'The service role cannot set points by hand');
select throws_ok(format($$insert into public.historico_pontos (usuario_id, chamado_id, acao, cidade_id, pontos_base, multiplicador_tier,
    multiplicador_densidade, multiplicador_nivel, pontos_final, tier, tecnicos_ativos, nivel_antes)
    values (%L, %L, 'checkin_pontual', 'rls', 10, 1, 1, 1, 10, 1, 1, 'iniciante')$$, :'bia', :'chamado_bia'),
  '42501', null, 'The service role writes history only through scoring');
reset role;

-- Anonymous ------------------------------------------------------------------------------------
set local role anon;
select throws_ok($$select count(*) from public.tecnicos$$, '42501', null, 'Anonymous callers cannot read technicians');
select throws_ok($$select count(*) from public.historico_pontos$$, '42501', null, 'Anonymous callers cannot read history');
select throws_ok($$select public.gamificacao_ranking_nacional()$$, '42501', null, 'Anonymous callers cannot call the ranking RPCs');
reset role;

-- Append-only ledger ---------------------------------------------------------------------------
select throws_ok(format($$update public.historico_pontos set pontos_final = 1 where usuario_id = %L$$, :'ana'), '42501', null,
  'Not even the owner can update a history row');
select throws_ok(format($$delete from public.historico_pontos where usuario_id = %L$$, :'ana'), '42501', null,
  'Not even the owner can delete a history row');
select throws_ok(format($$delete from public.chamados where id = %L$$, :'chamado_ana'), '23503', null,
  'A call that earned points cannot be deleted on its own');
delete from auth.users where id = :'bia';
select is((select count(*)::int from public.historico_pontos where usuario_id = :'bia'), 0,
  'Deleting a technician''s account removes their history with it');

select * from finish();
rollback;
