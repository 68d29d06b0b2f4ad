-- Control characters in the gamification texts, written the way clients write them: a technician
-- renaming themselves, administrators editing cities and the level, action and badge catalogues.
-- Names, icons and avatar URLs refuse every control character; descriptions accept tabs and line
-- breaks only.
begin;
select plan(13);
select testes_gamificacao.limpar();

select testes_gamificacao.nova_cidade('texto');
select testes_gamificacao.novo_tecnico('texto', 'Ana') as ana \gset
select testes_gamificacao.novo_usuario('{"role": "admin"}') as admin \gset

select testes_gamificacao.entrar_como(:'ana');
select throws_ok(format($$ update public.tecnicos set nome = E'Ana\tSouza' where id = %L $$, :'ana'),
  '23514', 'new row for relation "tecnicos" violates check constraint "tecnicos_nome_no_control_characters"',
  'A technician cannot take a name with a tab (it shows on every ranking)');
select throws_ok(format($$ update public.tecnicos set avatar_url = E'https://cdn.test/ana.png\n' where id = %L $$, :'ana'),
  '23514', 'new row for relation "tecnicos" violates check constraint "tecnicos_avatar_url_no_control_characters"',
  'Nor an avatar URL with a line break');
select lives_ok(format($$ update public.tecnicos set nome = 'Ana Souza-Dória', avatar_url = 'https://cdn.test/ana.png' where id = %L $$, :'ana'),
  'An ordinary name and URL are accepted');
reset role;

select testes_gamificacao.entrar_como(:'admin', '{"role": "admin"}');
select throws_ok($$ insert into public.cidades (id, nome, uf) values ('belo-horizonte', E'Belo\u0007Horizonte', 'MG') $$,
  '23514', 'new row for relation "cidades" violates check constraint "cidades_nome_no_control_characters"',
  'An administrator cannot name a city with a bell character');
select throws_ok($$ update public.niveis set nome = E'Lenda\r' where slug = 'legend' $$,
  '23514', 'new row for relation "niveis" violates check constraint "niveis_nome_no_control_characters"',
  'Nor a level with a carriage return');
select throws_ok($$ update public.acoes set nome = E'Check-in\u0085' where codigo = 'checkin_pontual' $$,
  '23514', 'new row for relation "acoes" violates check constraint "acoes_nome_no_control_characters"',
  'Nor an action with a C1 control character');
select lives_ok($$ update public.acoes set descricao = E'Check-in no horário:\n\t- até 15 min antes' where codigo = 'checkin_pontual' $$,
  'An action description may span lines and hold tabs');
select throws_ok($$ update public.acoes set descricao = E'Check-in\u001b[31m' where codigo = 'checkin_pontual' $$,
  '23514', 'new row for relation "acoes" violates check constraint "acoes_descricao_no_control_characters"',
  'But not a terminal escape sequence');
select throws_ok($$ update public.badges set nome = E'Maratonista\nOuro' where codigo = 'maratonista_ouro' $$,
  '23514', 'new row for relation "badges" violates check constraint "badges_nome_no_control_characters"',
  'A badge name with a line break is refused');
select throws_ok($$ update public.badges set icone = E'trofeu\t' where codigo = 'maratonista_ouro' $$,
  '23514', 'new row for relation "badges" violates check constraint "badges_icone_no_control_characters"',
  'A badge icon with a tab is refused');
select lives_ok($$ update public.badges set descricao = E'Conclua 100 chamados.\nVale para todas as cidades.' where codigo = 'maratonista_ouro' $$,
  'A badge description may span lines');
reset role;

select is((select nome from public.tecnicos where id = :'ana'), 'Ana Souza-Dória', 'The refused renames changed nothing');
select is((select count(*)::integer from public.cidades where id = 'belo-horizonte'), 0, 'The refused city was not created');

select * from finish();
rollback;
