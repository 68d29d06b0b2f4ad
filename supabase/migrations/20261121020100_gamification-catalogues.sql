-- Gamification: the catalogues that drive scoring, all tunable data rather than code.
--
-- Creates public.niveis (levels and their multipliers), public.faixas_tier (call-volume bands of a
-- city and their multipliers), public.acoes (scorable actions, base points and what each requires
-- of the call) and public.badges (badges and their award rules), with their reference rows: the
-- scoring function cannot work without them, so they ship with the schema, not with the seed.
-- Everyone signed in reads them; administrators (JWT app_metadata.role) and the service role
-- manage them.

-- Levels ---------------------------------------------------------------------------------------
create table public.niveis (
  slug text primary key check (slug ~ '^[a-z][a-z0-9_]*$'),
  nome text not null unique,
  ordem smallint not null unique check (ordem > 0),
  pontos_minimos integer not null unique check (pontos_minimos >= 0),
  multiplicador numeric(3, 2) not null check (multiplicador >= 1),
  constraint niveis_nome_no_control_characters check (shared_private.is_plain_text(nome))
);
comment on table public.niveis is 'Technician levels, reached by lifetime points and never lost.';
comment on column public.niveis.slug is 'Lowercase, accent-free key; the national ranking filters by it (categoria=experiente).';
comment on column public.niveis.nome is 'Display name returned as nivel_atual / nivel.';
comment on column public.niveis.ordem is 'Rank of the level, 1 = first; subiu_nivel compares it.';
comment on column public.niveis.pontos_minimos is 'Lifetime points (pontos_total) needed to hold the level.';
comment on column public.niveis.multiplicador is 'The nivel multiplier applied to actions scored while holding the level.';

insert into public.niveis (slug, nome, ordem, pontos_minimos, multiplicador) values
  ('iniciante', 'Iniciante', 1, 0, 1.00),
  ('experiente', 'Experiente', 2, 1000, 1.05),
  ('expert', 'Expert', 3, 5000, 1.10),
  ('master_tech', 'Master Tech', 4, 15000, 1.15),
  ('legend', 'Legend', 5, 40000, 1.20);

-- City tiers -----------------------------------------------------------------------------------
create table public.faixas_tier (
  tier smallint primary key check (tier between 1 and 9),
  chamados_minimos integer not null unique check (chamados_minimos >= 0),
  multiplicador numeric(3, 2) not null check (multiplicador >= 1)
);
comment on table public.faixas_tier is
  'Tier bands by a city''s call volume over the trailing 90 days: fewer calls, fewer chances to score, so a higher multiplier.';
comment on column public.faixas_tier.tier is 'Tier number, 1 = busiest cities.';
comment on column public.faixas_tier.chamados_minimos is 'Least 90-day call volume that falls in this tier (the band runs up to the next tier''s minimum).';
comment on column public.faixas_tier.multiplicador is 'The tier multiplier.';

insert into public.faixas_tier (tier, chamados_minimos, multiplicador) values
  (1, 1000, 1.00), (2, 200, 1.20), (3, 50, 1.50), (4, 10, 2.00), (5, 0, 3.00);

-- Actions --------------------------------------------------------------------------------------
create table public.acoes (
  codigo text primary key check (codigo ~ '^[a-z][a-z0-9_]*$'),
  nome text not null,
  descricao text not null,
  pontos_base integer not null check (pontos_base >= 0),
  status_exigidos text[] not null check (status_exigidos <@ array['agendado', 'em_andamento', 'concluido']::text[]),
  exige_geolocalizacao boolean not null default false,
  janela_antes_min integer check (janela_antes_min >= 0),
  janela_depois_min integer check (janela_depois_min >= 0),
  estrelas_exigidas smallint check (estrelas_exigidas between 1 and 5),
  exige_urgente boolean not null default false,
  ativo boolean not null default true,
  check ((janela_antes_min is null) = (janela_depois_min is null)),
  constraint acoes_nome_no_control_characters check (shared_private.is_plain_text(nome)),
  constraint acoes_descricao_no_control_characters check (shared_private.is_plain_text(descricao, true))
);
comment on table public.acoes is 'Scorable actions. Each is awarded at most once per (technician, call).';
comment on column public.acoes.codigo is 'The `acao` code clients send.';
comment on column public.acoes.pontos_base is 'Points before multipliers.';
comment on column public.acoes.status_exigidos is 'Call states in which the action may be scored.';
comment on column public.acoes.exige_geolocalizacao is
  'metadata must carry latitude, longitude and timestamp_checkin, within the call''s radius and the time window.';
comment on column public.acoes.janela_antes_min is 'Punctuality: the reading may be at most this many minutes before the scheduled time (null: no punctuality rule).';
comment on column public.acoes.janela_depois_min is 'Punctuality: the reading may be at most this many minutes after the scheduled time.';
comment on column public.acoes.estrelas_exigidas is 'The customer rating the call must have (null: any).';
comment on column public.acoes.exige_urgente is 'Only urgent calls earn the action.';
comment on column public.acoes.ativo is 'Inactive actions answer ACAO_INVALIDA.';

insert into public.acoes (codigo, nome, descricao, pontos_base, status_exigidos, exige_geolocalizacao, janela_antes_min, janela_depois_min, estrelas_exigidas, exige_urgente) values
  ('checkin_pontual', 'Check-in pontual', 'Check-in no local do chamado entre 30 min antes e 15 min depois do horário agendado.',
    10, array['agendado', 'em_andamento', 'concluido'], true, 30, 15, null, false),
  ('checkout_registrado', 'Check-out registrado', 'Check-out com GPS no local de um chamado concluído.',
    5, array['concluido'], true, null, null, null, false),
  ('chamado_concluido', 'Chamado concluído', 'Chamado concluído, com check-out depois do check-in.',
    50, array['concluido'], false, null, null, null, false),
  ('avaliacao_5_estrelas', 'Avaliação 5 estrelas', 'O cliente avaliou o chamado com 5 estrelas.',
    25, array['concluido'], false, null, null, 5, false),
  ('avaliacao_4_estrelas', 'Avaliação 4 estrelas', 'O cliente avaliou o chamado com 4 estrelas.',
    10, array['concluido'], false, null, null, 4, false),
  ('chamado_urgente_atendido', 'Chamado urgente atendido', 'Chamado marcado como urgente e concluído.',
    30, array['concluido'], false, null, null, null, true);

-- Badges ---------------------------------------------------------------------------------------
-- Rule kinds (regra_tipo), evaluated by gamificacao.avaliar_badges() when an action is scored:
--   contagem_acao       the technician has scored `regra_acao` at least `regra_minimo` times
--   acao_antes_da_hora  as above, counting only readings (timestamp_checkin) before `regra_hora` local time
--   dias_na_semana      `regra_acao` scored on at least `regra_minimo` distinct local days of one ISO week
--   media_avaliacoes    average customer stars over the last `regra_janela_dias` days >= `regra_minimo`,
--                       with at least `regra_amostra` rated calls
--   tier_cidade         `regra_acao` scored in a city whose frozen tier is >= `regra_minimo`
--   tecnicos_ativos     `regra_acao` scored in a city with at most `regra_minimo` active technicians
--   nivel               reached the level with ordem >= `regra_minimo`
--   ranking_mensal      closed a month at position <= `regra_minimo` of the board in `regra_escopo`
--                       (local boards need `regra_amostra` technicians); awarded by the month-close job
create table public.badges (
  codigo text primary key check (codigo ~ '^[a-z][a-z0-9_]*$'),
  nome text not null,
  categoria text not null check (categoria in ('atividade', 'pontualidade', 'qualidade', 'velocidade', 'confiabilidade', 'especial', 'ranking', 'nivel')),
  descricao text not null,
  icone text not null,
  regra_tipo text not null check (regra_tipo in ('contagem_acao', 'acao_antes_da_hora', 'dias_na_semana', 'media_avaliacoes', 'tier_cidade', 'tecnicos_ativos', 'nivel', 'ranking_mensal')),
  regra_acao text references public.acoes (codigo),
  regra_minimo numeric not null,
  regra_amostra integer,
  regra_janela_dias integer,
  regra_hora smallint check (regra_hora between 0 and 23),
  regra_escopo text check (regra_escopo in ('local', 'nacional')),
  ativo boolean not null default true,
  check ((regra_tipo in ('contagem_acao', 'acao_antes_da_hora', 'dias_na_semana', 'tier_cidade', 'tecnicos_ativos')) = (regra_acao is not null)),
  check ((regra_tipo = 'acao_antes_da_hora') = (regra_hora is not null)),
  check ((regra_tipo = 'media_avaliacoes') = (regra_janela_dias is not null)),
  check ((regra_tipo = 'ranking_mensal') = (regra_escopo is not null)),
  constraint badges_nome_no_control_characters check (shared_private.is_plain_text(nome)),
  constraint badges_icone_no_control_characters check (shared_private.is_plain_text(icone)),
  constraint badges_descricao_no_control_characters check (shared_private.is_plain_text(descricao, true))
);
create index badges_regra_acao_idx on public.badges (regra_acao);
comment on table public.badges is 'Badge catalogue; each badge is awarded once per technician when its rule is met.';
comment on column public.badges.codigo is 'Stable key of the badge.';
comment on column public.badges.categoria is 'Theme of the badge, returned as `categoria`.';
comment on column public.badges.icone is 'Icon name for clients.';
comment on column public.badges.regra_tipo is 'Kind of rule; see the migration header for each kind.';
comment on column public.badges.regra_acao is 'Action the rule counts (for action-based kinds).';
comment on column public.badges.regra_minimo is 'Threshold of the rule (count, stars, tier, technicians, level ordem or position).';
comment on column public.badges.regra_amostra is 'Least sample (ratings, or technicians on the board) for the rule to apply.';
comment on column public.badges.regra_janela_dias is 'Rolling window of the rule, in days.';
comment on column public.badges.regra_hora is 'Local hour before which a reading counts (acao_antes_da_hora).';
comment on column public.badges.regra_escopo is 'Board of a ranking_mensal rule: local (the technician''s city) or nacional.';
comment on column public.badges.ativo is 'Inactive badges are no longer awarded.';

insert into public.badges (codigo, nome, categoria, descricao, icone, regra_tipo, regra_acao, regra_minimo, regra_amostra, regra_janela_dias, regra_hora, regra_escopo) values
  ('primeiro_chamado', 'Primeiro Chamado', 'atividade', 'Concluiu o primeiro chamado na plataforma.', 'flag', 'contagem_acao', 'chamado_concluido', 1, null, null, null, null),
  ('maratonista_bronze', 'Maratonista Bronze', 'atividade', 'Concluiu 50 chamados.', 'medal-bronze', 'contagem_acao', 'chamado_concluido', 50, null, null, null, null),
  ('maratonista_prata', 'Maratonista Prata', 'atividade', 'Concluiu 200 chamados.', 'medal-silver', 'contagem_acao', 'chamado_concluido', 200, null, null, null, null),
  ('maratonista_ouro', 'Maratonista Ouro', 'atividade', 'Concluiu 500 chamados.', 'medal-gold', 'contagem_acao', 'chamado_concluido', 500, null, null, null, null),
  ('semana_cheia', 'Semana Cheia', 'atividade', 'Concluiu chamados em 5 dias diferentes da mesma semana.', 'calendar-check', 'dias_na_semana', 'chamado_concluido', 5, null, null, null, null),
  ('sempre_no_horario', 'Sempre no Horário', 'pontualidade', 'Fez 10 check-ins pontuais.', 'clock', 'contagem_acao', 'checkin_pontual', 10, null, null, null, null),
  ('madrugador', 'Madrugador', 'pontualidade', 'Fez 10 check-ins pontuais antes das 8h.', 'sunrise', 'acao_antes_da_hora', 'checkin_pontual', 10, null, null, 8, null),
  ('cinco_estrelas', 'Cinco Estrelas', 'qualidade', 'Recebeu 10 avaliações de 5 estrelas.', 'star', 'contagem_acao', 'avaliacao_5_estrelas', 10, null, null, null, null),
  ('cliente_encantado', 'Cliente Encantado', 'qualidade', 'Média de pelo menos 4,8 estrelas em 30 dias, com pelo menos 15 avaliações.', 'heart', 'media_avaliacoes', null, 4.8, 15, 30, null, null),
  ('desbravador', 'Desbravador', 'especial', 'Concluiu um chamado em cidade de tier 4 ou 5.', 'compass', 'tier_cidade', 'chamado_concluido', 4, null, null, null, null),
  ('pioneiro_regional', 'Pioneiro Regional', 'especial', 'Concluiu um chamado como único técnico ativo da cidade.', 'map-pin', 'tecnicos_ativos', 'chamado_concluido', 1, null, null, null, null),
  ('nivel_experiente', 'Experiente', 'nivel', 'Alcançou o nível Experiente.', 'level-2', 'nivel', null, 2, null, null, null, null),
  ('nivel_expert', 'Expert', 'nivel', 'Alcançou o nível Expert.', 'level-3', 'nivel', null, 3, null, null, null, null),
  ('nivel_master_tech', 'Master Tech', 'nivel', 'Alcançou o nível Master Tech.', 'level-4', 'nivel', null, 4, null, null, null, null),
  ('nivel_legend', 'Legend', 'nivel', 'Alcançou o nível Legend.', 'level-5', 'nivel', null, 5, null, null, null, null),
  ('podio_cidade', 'Pódio da Cidade', 'ranking', 'Terminou um mês entre os 3 primeiros do ranking da sua cidade (com pelo menos 5 técnicos).', 'podium', 'ranking_mensal', null, 3, 5, null, null, 'local'),
  ('campeao_nacional', 'Campeão Nacional', 'ranking', 'Terminou um mês em 1º lugar no ranking nacional.', 'trophy', 'ranking_mensal', null, 1, null, null, null, 'nacional');

-- Privileges and RLS ---------------------------------------------------------------------------
revoke all on public.niveis, public.faixas_tier, public.acoes, public.badges from anon, authenticated, service_role;
grant select, insert, update, delete on public.niveis, public.faixas_tier, public.acoes, public.badges to authenticated, service_role;

alter table public.niveis enable row level security;
alter table public.faixas_tier enable row level security;
alter table public.acoes enable row level security;
alter table public.badges enable row level security;

create policy "Signed-in users can read the levels" on public.niveis for select to authenticated using (true);
create policy "Administrators can add levels" on public.niveis for insert to authenticated with check ((select gamificacao.eh_admin()));
create policy "Administrators can change levels" on public.niveis for update to authenticated using ((select gamificacao.eh_admin()));
create policy "Administrators can remove levels" on public.niveis for delete to authenticated using ((select gamificacao.eh_admin()));

create policy "Signed-in users can read the tier bands" on public.faixas_tier for select to authenticated using (true);
create policy "Administrators can add tier bands" on public.faixas_tier for insert to authenticated with check ((select gamificacao.eh_admin()));
create policy "Administrators can change tier bands" on public.faixas_tier for update to authenticated using ((select gamificacao.eh_admin()));
create policy "Administrators can remove tier bands" on public.faixas_tier for delete to authenticated using ((select gamificacao.eh_admin()));

create policy "Signed-in users can read the actions" on public.acoes for select to authenticated using (true);
create policy "Administrators can add actions" on public.acoes for insert to authenticated with check ((select gamificacao.eh_admin()));
create policy "Administrators can change actions" on public.acoes for update to authenticated using ((select gamificacao.eh_admin()));
create policy "Administrators can remove actions" on public.acoes for delete to authenticated using ((select gamificacao.eh_admin()));

create policy "Signed-in users can read the badges" on public.badges for select to authenticated using (true);
create policy "Administrators can add badges" on public.badges for insert to authenticated with check ((select gamificacao.eh_admin()));
create policy "Administrators can change badges" on public.badges for update to authenticated using ((select gamificacao.eh_admin()));
create policy "Administrators can remove badges" on public.badges for delete to authenticated using ((select gamificacao.eh_admin()));
