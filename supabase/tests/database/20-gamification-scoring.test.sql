-- Gamification scoring: multipliers and their bands, rounding, levels, idempotency, the checks on
-- the call and the check-in, who may score, the rate limit and the city-metrics job.
begin;
select plan(86);
select testes_gamificacao.limpar();

-- Multiplier bands -----------------------------------------------------------------------------
select is((gamificacao.faixa_tier(1532)).multiplicador, 1.00, 'A city with 1,532 calls in 90 days is tier 1 (1.00)');
select is((gamificacao.faixa_tier(1000)).tier, 1::smallint, '1,000 calls is still tier 1');
select is((gamificacao.faixa_tier(999)).multiplicador, 1.20, '999 calls falls to tier 2 (1.20)');
select is((gamificacao.faixa_tier(200)).tier, 2::smallint, '200 calls is tier 2');
select is((gamificacao.faixa_tier(199)).multiplicador, 1.50, '199 calls is tier 3 (1.50)');
select is((gamificacao.faixa_tier(50)).tier, 3::smallint, '50 calls is tier 3');
select is((gamificacao.faixa_tier(49)).multiplicador, 2.00, '49 calls is tier 4 (2.00)');
select is((gamificacao.faixa_tier(10)).tier, 4::smallint, '10 calls is tier 4');
select is((gamificacao.faixa_tier(9)).multiplicador, 3.00, '9 calls is tier 5 (3.00)');
select is((gamificacao.faixa_tier(0)).tier, 5::smallint, 'A city without calls is tier 5');

select is(gamificacao.multiplicador_densidade(1), 1.45, 'One active technician gives densidade 1.45');
select is(gamificacao.multiplicador_densidade(0), 1.45, 'Zero active technicians counts as one (the scorer is active)');
select is(gamificacao.multiplicador_densidade(3), 1.35, 'Three active technicians give 1.35');
select is(gamificacao.multiplicador_densidade(5), 1.25, 'Five active technicians give 1.25');
select is(gamificacao.multiplicador_densidade(9), 1.05, 'Nine active technicians give 1.05');
select is(gamificacao.multiplicador_densidade(10), 1.00, 'Ten active technicians give no density bonus');
select is(gamificacao.multiplicador_densidade(50), 1.00, 'Fifty active technicians give no density bonus');

-- Level multiplier, rounding, the score result ---------------------------------------------------
select testes_gamificacao.nova_cidade('capital', 1500, 50), testes_gamificacao.nova_cidade('vitoria', 30, 3),
  testes_gamificacao.nova_cidade('emergente', 5, 1);

select testes_gamificacao.novo_tecnico('capital', 'Iniciante', 0) as ini,
  testes_gamificacao.novo_tecnico('capital', 'Experiente', 1000) as exp,
  testes_gamificacao.novo_tecnico('capital', 'Expert', 5000) as xpt,
  testes_gamificacao.novo_tecnico('capital', 'Master', 15000) as mst,
  testes_gamificacao.novo_tecnico('capital', 'Legend', 40000) as leg,
  testes_gamificacao.novo_tecnico('vitoria', 'Vitória', 1000) as vit,
  testes_gamificacao.novo_tecnico('emergente', 'Emergente', 0) as emg \gset

select is((testes_gamificacao.pontuar(:'ini', 'chamado_concluido', testes_gamificacao.novo_chamado(:'ini')) ->> 'pontos_adicionados')::int, 50,
  'An Iniciante in a tier-1 dense city scores the base 50 (x1.00)');
select is((testes_gamificacao.pontuar(:'exp', 'chamado_concluido', testes_gamificacao.novo_chamado(:'exp')) ->> 'pontos_adicionados')::int, 53,
  'An Experiente scores 50 x 1.05 = 52.5, rounded half up to 53');
select is((testes_gamificacao.pontuar(:'xpt', 'chamado_concluido', testes_gamificacao.novo_chamado(:'xpt')) ->> 'pontos_adicionados')::int, 55,
  'An Expert scores 50 x 1.10 = 55');
select is((testes_gamificacao.pontuar(:'mst', 'chamado_concluido', testes_gamificacao.novo_chamado(:'mst')) ->> 'pontos_adicionados')::int, 58,
  'A Master Tech scores 50 x 1.15 = 57.5, rounded half up to 58');
select is((testes_gamificacao.pontuar(:'leg', 'chamado_concluido', testes_gamificacao.novo_chamado(:'leg')) ->> 'pontos_adicionados')::int, 60,
  'A Legend scores 50 x 1.20 = 60');

select is(testes_gamificacao.pontuar(:'vit', 'chamado_concluido', testes_gamificacao.novo_chamado(:'vit')) -> 'multiplicadores',
  '{"tier": 2.00, "densidade": 1.35, "nivel": 1.05}'::jsonb, 'Vitória (30 calls, 3 technicians) applies tier 2.00, densidade 1.35, nivel 1.05');
select is((select pontos_final from public.historico_pontos where usuario_id = :'vit'), 142,
  'and 50 x 2.00 x 1.35 x 1.05 = 141.75 is stored as 142');

select testes_gamificacao.novo_chamado(:'emg', 'concluido', now() - interval '2 hours', 5::smallint) as emg_chamado \gset
select is((testes_gamificacao.pontuar(:'emg', 'checkin_pontual', :'emg_chamado', testes_gamificacao.leitura(now() - interval '2 hours')) ->> 'pontos_adicionados')::int, 44,
  'An emerging city (x3.00 x1.45) turns a 10-point check-in into 43.5, rounded half up to 44');
select is((testes_gamificacao.pontuar(:'emg', 'chamado_concluido', :'emg_chamado') ->> 'pontos_adicionados')::int, 218,
  '50 points there are 217.5, rounded to 218');
select is((testes_gamificacao.pontuar(:'emg', 'avaliacao_5_estrelas', :'emg_chamado') ->> 'pontos_adicionados')::int, 109,
  '25 points there are 108.75, rounded to 109');
select is((select pontos_total from public.tecnicos where id = :'emg'), 371,
  'Each action is rounded on its own row: 44 + 218 + 109 = 371 (not round(369.75) = 370)');

select testes_gamificacao.novo_tecnico('capital', 'Resultado', 0) as res \gset
select testes_gamificacao.novo_chamado(:'res') as res_chamado \gset
select testes_gamificacao.entrar_como(:'res');
select public.gamificacao_registrar_acao(:'res', 'chamado_concluido', :'res_chamado') as resposta \gset
reset role;
select is((select array_agg(k order by k) from jsonb_object_keys((:'resposta'::jsonb) -> 'data') k),
  array['badges_conquistados', 'multiplicadores', 'nivel_atual', 'pontos_adicionados', 'pontos_total', 'posicao_ranking_local', 'posicao_ranking_nacional', 'subiu_nivel'],
  'The score result carries every field of the spec');
select is((:'resposta'::jsonb) ->> 'status', '200', 'A technician scoring their own concluded call gets status 200');
select is((:'resposta'::jsonb) #>> '{data,nivel_atual}', 'Iniciante', 'nivel_atual is the level name');
select is((:'resposta'::jsonb) #> '{data,badges_conquistados,0,codigo}', '"primeiro_chamado"', 'badges_conquistados lists the badge the action earned');
select is((select registrado_por from public.historico_pontos where usuario_id = :'res'), :'res'::uuid, 'The history row records who scored it');

-- Levels ---------------------------------------------------------------------------------------
select testes_gamificacao.novo_tecnico('capital', 'Quase', 950) as quase, testes_gamificacao.novo_tecnico('capital', 'Falta um', 949) as falta,
  testes_gamificacao.novo_tecnico('capital', 'Quase Expert', 4990) as qxp \gset
select testes_gamificacao.pontuar(:'quase', 'chamado_concluido', testes_gamificacao.novo_chamado(:'quase')) as subiu \gset
select is((:'subiu'::jsonb) ->> 'nivel_atual', 'Experiente', 'Reaching exactly 1,000 points makes an Iniciante Experiente');
select is((:'subiu'::jsonb) ->> 'subiu_nivel', 'true', 'and subiu_nivel is true');
select is((:'subiu'::jsonb) #>> '{multiplicadores,nivel}', '1.00', 'The action that levels up is multiplied by the level held before it');
select is((testes_gamificacao.pontuar(:'falta', 'chamado_concluido', testes_gamificacao.novo_chamado(:'falta')) ->> 'subiu_nivel'), 'false',
  '999 points stays Iniciante: subiu_nivel is false');
select is((testes_gamificacao.pontuar(:'qxp', 'chamado_concluido', testes_gamificacao.novo_chamado(:'qxp')) ->> 'nivel_atual'), 'Expert',
  'An Experiente at 4,990 scoring 53 reaches Expert');
update public.tecnicos set nivel = 'expert' where id = :'falta';
select is((testes_gamificacao.pontuar(:'falta', 'checkin_pontual', (select id from public.chamados where tecnico_id = :'falta'),
  testes_gamificacao.leitura(now() - interval '2 hours')) ->> 'nivel_atual'), 'Expert', 'A level is never lost, even when the total is below it');

-- Idempotency ----------------------------------------------------------------------------------
select testes_gamificacao.novo_tecnico('capital', 'Repetida', 0) as rep \gset
select testes_gamificacao.novo_chamado(:'rep') as rep_chamado \gset
select testes_gamificacao.entrar_como(:'rep');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'rep', 'chamado_concluido', :'rep_chamado')), '200', 'The first award is recorded');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'rep', 'chamado_concluido', :'rep_chamado')), '409 ACAO_DUPLICADA',
  'The same action on the same call again answers 409 ACAO_DUPLICADA');
reset role;
select is((select count(*)::int from public.historico_pontos where usuario_id = :'rep'), 1, 'and records no second history row');
select is((select pontos_total from public.tecnicos where id = :'rep'), 50, 'nor adds points to the total');
select is((select sum(pontos)::int from gamificacao.totais_periodo where usuario_id = :'rep'), 200, 'nor to any period total (4 periods x 50)');
select is((select quantidade from gamificacao.contagem_acoes where usuario_id = :'rep'), 1, 'nor to the action counter');
select throws_ok(
  format($$insert into public.historico_pontos (usuario_id, chamado_id, acao, cidade_id, pontos_base, multiplicador_tier, multiplicador_densidade,
    multiplicador_nivel, pontos_final, tier, tecnicos_ativos, nivel_antes) values (%L, %L, 'chamado_concluido', 'capital', 50, 1, 1, 1, 50, 1, 50, 'iniciante')$$,
    :'rep', :'rep_chamado'),
  '23505', null, 'A unique index on (usuario_id, chamado_id, acao) backs the check against races');
select is((testes_gamificacao.pontuar(:'rep', 'checkin_pontual', :'rep_chamado', testes_gamificacao.leitura(now() - interval '2 hours')) ->> 'pontos_adicionados')::int, 10,
  'Another action on the same call is a different award');

-- Checks on the call ---------------------------------------------------------------------------
select testes_gamificacao.novo_tecnico('capital', 'Checada', 0) as chk, testes_gamificacao.novo_tecnico('capital', 'Outra', 0) as outra \gset
select testes_gamificacao.novo_chamado(:'chk', 'agendado', now() + interval '1 hour') as agendado,
  testes_gamificacao.novo_chamado(:'chk', 'concluido', now() - interval '2 hours', 4::smallint) as quatro_estrelas,
  testes_gamificacao.novo_chamado(:'outra') as alheio,
  testes_gamificacao.novo_chamado(:'chk', 'em_andamento', now() - interval '5 minutes') as andamento \gset
select testes_gamificacao.entrar_como(:'chk');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'pular_fila', :'quatro_estrelas')), '422 ACAO_INVALIDA',
  'An unknown action code answers 422 ACAO_INVALIDA');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'chamado_concluido', gen_random_uuid())), '404 CHAMADO_NAO_ENCONTRADO',
  'An unknown call answers 404 CHAMADO_NAO_ENCONTRADO');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'chamado_concluido', :'alheio')), '403 CHAMADO_DE_OUTRO_TECNICO',
  'Another technician''s call answers 403 CHAMADO_DE_OUTRO_TECNICO');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'outra', 'chamado_concluido', :'alheio')), '403 SEM_PERMISSAO',
  'A technician cannot score another technician (403 SEM_PERMISSAO)');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'chamado_concluido', :'agendado')), '422 CHAMADO_ESTADO_INVALIDO',
  'chamado_concluido on a call that is not concluded answers 422 CHAMADO_ESTADO_INVALIDO');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'avaliacao_5_estrelas', :'quatro_estrelas')), '422 CHAMADO_ESTADO_INVALIDO',
  'avaliacao_5_estrelas on a 4-star call is refused');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'chamado_urgente_atendido', :'quatro_estrelas')), '422 CHAMADO_ESTADO_INVALIDO',
  'chamado_urgente_atendido on a call that is not urgent is refused');
reset role;
update public.acoes set ativo = false where codigo = 'avaliacao_4_estrelas';
select testes_gamificacao.entrar_como(:'chk');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'avaliacao_4_estrelas', :'quatro_estrelas')), '422 ACAO_INVALIDA',
  'An inactive action answers 422 ACAO_INVALIDA');

-- Checks on the check-in -----------------------------------------------------------------------
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'checkin_pontual', :'andamento', '{}')), '422 METADATA_INCOMPLETA',
  'A check-in without coordinates and time answers 422 METADATA_INCOMPLETA');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'checkin_pontual', :'andamento',
  testes_gamificacao.leitura(now()) || '{"latitude": 91}')), '422 COORDENADAS_INVALIDAS', 'Latitude 91 answers 422 COORDENADAS_INVALIDAS');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'checkin_pontual', :'andamento',
  testes_gamificacao.leitura(now()) || '{"longitude": -180.5}')), '422 COORDENADAS_INVALIDAS', 'Longitude -180.5 is refused');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'checkin_pontual', :'andamento',
  testes_gamificacao.leitura(now()) || '{"latitude": 0, "longitude": 0}')), '422 COORDENADAS_INVALIDAS', 'The null island (0, 0) is refused');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'checkin_pontual', :'andamento',
  testes_gamificacao.leitura(now()) || '{"latitude": "-23.55"}')), '422 COORDENADAS_INVALIDAS', 'A latitude sent as text is refused');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'checkin_pontual', :'andamento',
  testes_gamificacao.leitura(now() + interval '6 minutes'))), '422 TIMESTAMP_INVALIDO', 'A check-in 6 minutes in the future answers 422 TIMESTAMP_INVALIDO');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'checkin_pontual', :'quatro_estrelas',
  testes_gamificacao.leitura(now() - interval '25 hours'))), '422 TIMESTAMP_INVALIDO', 'A check-in older than 24 hours is refused');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'checkin_pontual', :'andamento',
  testes_gamificacao.leitura(now()) || '{"timestamp_checkin": "ontem às 10h"}')), '422 TIMESTAMP_INVALIDO', 'A malformed timestamp is refused');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'checkin_pontual', :'andamento',
  testes_gamificacao.leitura(now(), 400))), '422 FORA_DO_RAIO', 'A check-in 400 m from the call (radius 300 m) answers 422 FORA_DO_RAIO');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'checkin_pontual', :'quatro_estrelas',
  testes_gamificacao.leitura(now() - interval '2 hours' + interval '20 minutes'))), '422 CHECKIN_FORA_DO_HORARIO',
  'A check-in 20 minutes after the scheduled time is not punctual (422 CHECKIN_FORA_DO_HORARIO)');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'checkin_pontual', :'quatro_estrelas',
  testes_gamificacao.leitura(now() - interval '2 hours' - interval '31 minutes'))), '422 CHECKIN_FORA_DO_HORARIO',
  'A check-in 31 minutes before the scheduled time is refused too');
reset role;
select is((select count(*)::int from public.historico_pontos where usuario_id = :'chk'), 0, 'None of the refused actions recorded anything');
select testes_gamificacao.entrar_como(:'chk');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'checkin_pontual', :'andamento',
  testes_gamificacao.leitura(now() - interval '1 minute', 250))), '200', 'A check-in 250 m away, on time, is scored');
reset role;
update public.chamados set raio_checkin_m = 500 where id = :'quatro_estrelas';
select testes_gamificacao.entrar_como(:'chk');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'chk', 'checkin_pontual', :'quatro_estrelas',
  testes_gamificacao.leitura(now() - interval '2 hours' + interval '14 minutes', 400))), '200', 'A call''s own radius (500 m) overrides the city''s');
select is((select distancia_m from public.historico_pontos where chamado_id = :'quatro_estrelas'), 400, 'The distance of the reading is kept on the history row');

-- Who may score --------------------------------------------------------------------------------
reset role;
select testes_gamificacao.novo_tecnico('capital', 'Inativa', 0) as inativa \gset
select testes_gamificacao.novo_chamado(:'inativa') as inativa_chamado \gset
update public.tecnicos set ativo = false where id = :'inativa';
select testes_gamificacao.entrar_como_servico();
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'inativa', 'chamado_concluido', :'inativa_chamado')), '403 TECNICO_INATIVO',
  'An inactive technician cannot score (403 TECNICO_INATIVO)');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(gen_random_uuid(), 'chamado_concluido', :'inativa_chamado')), '404 TECNICO_NAO_ENCONTRADO',
  'Scoring someone who is not a technician answers 404 TECNICO_NAO_ENCONTRADO');
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'outra', 'chamado_concluido', :'alheio')), '200',
  'The service role (back office) may score any technician');
select is(public.gamificacao_registrar_acao(:'outra', 'checkin_pontual', :'alheio', testes_gamificacao.leitura(now() - interval '2 hours')) -> 'limite', 'null',
  'and is not rate-limited here');
reset role;
select is((select registrado_por from public.historico_pontos where chamado_id = :'alheio' and acao = 'chamado_concluido'), null, 'Back-office awards record no author');
select set_config('request.jwt.claims', '', true);
select is(testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'outra', 'chamado_concluido', :'alheio')), '401 NAO_AUTENTICADO',
  'A call without a user or the service role answers 401 NAO_AUTENTICADO');
select throws_ok($$set local role anon; select public.gamificacao_registrar_acao(gen_random_uuid(), 'chamado_concluido', gen_random_uuid())$$,
  '42501', null, 'The anon role cannot call the scoring RPC at all');
reset role;

-- Rate limit -----------------------------------------------------------------------------------
select testes_gamificacao.novo_tecnico('capital', 'Apressada', 0) as pressa \gset
select testes_gamificacao.entrar_como(:'pressa');
select is((select count(*)::int from generate_series(1, 60) i
           where testes_gamificacao.resultado(public.gamificacao_registrar_acao(:'pressa', 'chamado_concluido', gen_random_uuid())) = '404 CHAMADO_NAO_ENCONTRADO'),
  60, 'Sixty requests in a minute are served, failed ones included');
select public.gamificacao_registrar_acao(:'pressa', 'chamado_concluido', gen_random_uuid()) as limitada \gset
select is(testes_gamificacao.resultado(:'limitada'), '429 LIMITE_EXCEDIDO', 'The 61st answers 429 LIMITE_EXCEDIDO');
select ok(((:'limitada'::jsonb) #>> '{limite,retry_after}')::int between 1 and 2, 'with a retry-after of about one second (one token refills per second)');
reset role;
update gamificacao.limites_uso set atualizado_em = atualizado_em - interval '10 seconds' where usuario_id = :'pressa';
select testes_gamificacao.entrar_como(:'pressa');
select is((public.gamificacao_registrar_acao(:'pressa', 'chamado_concluido', gen_random_uuid())) #>> '{limite,restante}', '9',
  'Ten seconds later ten tokens are back (one spent now)');
reset role;

-- City metrics job -----------------------------------------------------------------------------
select testes_gamificacao.nova_cidade('medida', 0, 0);
select testes_gamificacao.novo_tecnico('medida', 'Medida A', 0) as ma, testes_gamificacao.novo_tecnico('medida', 'Medida B', 0) as mb \gset
select testes_gamificacao.novo_chamado(:'ma', 'concluido', now() - make_interval(days => i)) from generate_series(1, 8) i;
select testes_gamificacao.novo_chamado(:'mb', 'concluido', now() - make_interval(days => i)) from generate_series(1, 4) i;
select testes_gamificacao.novo_chamado(:'mb', 'cancelado', now() - interval '1 day');
select testes_gamificacao.novo_chamado(:'mb', 'concluido', now() - interval '100 days');
select testes_gamificacao.novo_chamado(:'mb', 'concluido', now() - interval '40 days');
select is(gamificacao.recalcular_metricas_cidades('medida'), 1, 'The metrics job recomputes one city on request');
select is((select row(chamados_90d, tier, multiplicador_tier, tecnicos_ativos, multiplicador_densidade)::text from public.cidades_metricas where cidade_id = 'medida'),
  '(13,4,2.00,2,1.40)', 'It counts 13 non-cancelled calls in 90 days (tier 4, 2.00) and 2 technicians active in 30 days (1.40)');

select testes_gamificacao.nova_cidade('sem-metricas', 1500, 50);
delete from public.cidades_metricas where cidade_id = 'sem-metricas';
select testes_gamificacao.novo_tecnico('sem-metricas', 'Nova', 0) as nova \gset
select is((testes_gamificacao.pontuar(:'nova', 'chamado_concluido', testes_gamificacao.novo_chamado(:'nova')) -> 'multiplicadores') - 'nivel',
  '{"tier": 3.00, "densidade": 1.45}'::jsonb, 'A city without metrics gets them computed at its first scoring');
update public.cidades_metricas set multiplicador_tier = 1.00 where cidade_id = 'sem-metricas';
select is((select multiplicador_tier from public.historico_pontos where usuario_id = :'nova'), 3.00, 'History rows keep the multipliers they were scored with');

select is((select array_agg(jobname::text order by jobname) from cron.job where jobname like 'gamificacao-%'),
  array['gamificacao-metricas-cidades', 'gamificacao-rankings-categorias', 'gamificacao-rankings-categorias-longos', 'gamificacao-snapshots'],
  'pg_cron runs the four gamification jobs');

select * from finish();
rollback;
