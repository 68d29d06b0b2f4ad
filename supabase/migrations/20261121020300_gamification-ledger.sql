-- Gamification: the points ledger, badge awards and the running totals rankings read.
--
-- Creates public.historico_pontos (append-only: one row per scored action, multipliers and city
-- metrics frozen on it, unique per technician, call and action), public.usuario_badges (awards),
-- and, in the private schema, the structures that keep rankings fast at 100k technicians:
-- gamificacao.totais_periodo (points per technician per calendar period, indexed for every board),
-- gamificacao.faixas_ranking (how many technicians sit in each points bucket of the national
-- boards, so a national position is a short sum instead of a count over the whole board) and
-- gamificacao.contagem_acoes (per-technician action counters for badge rules).
-- All of them are written only by the scoring function and the jobs; technicians read their own
-- history and badges.

-- History --------------------------------------------------------------------------------------
create table public.historico_pontos (
  id bigint generated always as identity primary key,
  usuario_id uuid not null references public.tecnicos (id) on delete cascade,
  -- No cascade: a call that earned points cannot be deleted on its own (it can with its technician).
  chamado_id uuid not null references public.chamados (id),
  acao text not null references public.acoes (codigo),
  cidade_id text not null references public.cidades (id),
  pontos_base integer not null check (pontos_base >= 0),
  multiplicador_tier numeric(3, 2) not null,
  multiplicador_densidade numeric(3, 2) not null,
  multiplicador_nivel numeric(3, 2) not null,
  pontos_final integer not null check (pontos_final >= 0),
  tier smallint not null,
  tecnicos_ativos integer not null,
  nivel_antes text not null references public.niveis (slug),
  distancia_m integer,
  metadata jsonb not null default '{}',
  registrado_por uuid,
  data_acao timestamptz not null default now(),
  -- Idempotency on business identity (decisions.md, Gamification 3): a retry or a replay of the
  -- same award hits this index, whatever the timing.
  unique (usuario_id, chamado_id, acao)
);
create index historico_pontos_usuario_data_idx on public.historico_pontos (usuario_id, data_acao desc, id desc);
create index historico_pontos_chamado_idx on public.historico_pontos (chamado_id);
comment on table public.historico_pontos is
  'Append-only points ledger: rows are never updated or deleted (corrections are new rows); written only by the scoring function.';
comment on column public.historico_pontos.usuario_id is 'The technician who earned the points.';
comment on column public.historico_pontos.chamado_id is 'The call the action concerns.';
comment on column public.historico_pontos.acao is 'Action code (public.acoes).';
comment on column public.historico_pontos.cidade_id is 'City of the call at scoring time.';
comment on column public.historico_pontos.pontos_base is 'Base points of the action at scoring time.';
comment on column public.historico_pontos.multiplicador_tier is 'Tier multiplier of the call''s city, frozen.';
comment on column public.historico_pontos.multiplicador_densidade is 'Density multiplier of the call''s city, frozen.';
comment on column public.historico_pontos.multiplicador_nivel is 'Multiplier of the level held before the action, frozen.';
comment on column public.historico_pontos.pontos_final is 'round_half_up(pontos_base x tier x densidade x nivel).';
comment on column public.historico_pontos.tier is 'Tier of the call''s city, frozen.';
comment on column public.historico_pontos.tecnicos_ativos is 'Active technicians in the call''s city, frozen.';
comment on column public.historico_pontos.nivel_antes is 'Level held before the action.';
comment on column public.historico_pontos.distancia_m is 'Distance from the reading to the call''s location, for geolocated actions.';
comment on column public.historico_pontos.metadata is 'The request''s metadata (latitude, longitude, timestamp_checkin, ...).';
comment on column public.historico_pontos.registrado_por is 'Who scored it: the technician''s id, or null for the back office (service role).';
comment on column public.historico_pontos.data_acao is 'When the action was scored; it decides the ranking periods it counts in.';

/**
 * Keeps the ledger append-only. The one deletion allowed is the cascade from deleting the
 * technician's account: the trigger then runs nested inside the foreign-key trigger, at depth 2.
 */
create function gamificacao.historico_somente_insercao() returns trigger
language plpgsql set search_path = '' as $$
begin
  if tg_op = 'DELETE' and pg_trigger_depth() > 1 then
    return old;
  end if;
  raise exception 'historico_pontos is append-only: record a compensating row instead of % ', lower(tg_op)
    using errcode = '42501';
end;
$$;
comment on function gamificacao.historico_somente_insercao() is 'Trigger: refuses updates and direct deletes on the points ledger.';
create trigger historico_pontos_somente_insercao before update or delete on public.historico_pontos
  for each row execute function gamificacao.historico_somente_insercao();

-- Badge awards ---------------------------------------------------------------------------------
create table public.usuario_badges (
  usuario_id uuid not null references public.tecnicos (id) on delete cascade,
  badge_codigo text not null references public.badges (codigo),
  conquistado_em timestamptz not null default now(),
  historico_id bigint references public.historico_pontos (id) on delete cascade,
  periodo_inicio date,
  primary key (usuario_id, badge_codigo)
);
create index usuario_badges_badge_idx on public.usuario_badges (badge_codigo);
comment on table public.usuario_badges is 'Badges earned, at most once each per technician.';
comment on column public.usuario_badges.usuario_id is 'The technician.';
comment on column public.usuario_badges.badge_codigo is 'The badge (public.badges).';
comment on column public.usuario_badges.conquistado_em is 'When it was earned.';
comment on column public.usuario_badges.historico_id is 'The scored action that met the rule (null for month-close ranking badges).';
comment on column public.usuario_badges.periodo_inicio is 'For ranking badges: the month that earned it.';

-- Running totals -------------------------------------------------------------------------------
create table gamificacao.totais_periodo (
  usuario_id uuid not null references public.tecnicos (id) on delete cascade,
  periodo text not null references gamificacao.periodos (periodo),
  periodo_inicio date not null,
  cidade_id text not null,
  nivel_ordem smallint not null,
  pontos integer not null check (pontos >= 0),
  acoes integer not null check (acoes >= 0),
  ultima_pontuacao_em timestamptz not null,
  primary key (usuario_id, periodo, periodo_inicio)
)
-- Vacuumed after 0.5% of rows changed, not 20%: positions count board-index entries with
-- index-only scans, and every scoring dirties four rows (docs/gamification.md).
with (autovacuum_vacuum_scale_factor = 0.005, autovacuum_vacuum_insert_scale_factor = 0.005);
-- One index per board, each in the board's order (points desc, then whoever reached the score
-- first, then usuario_id), so a page is an index range and ties break the same way everywhere.
create index totais_nacional_idx on gamificacao.totais_periodo (periodo, periodo_inicio, pontos desc, ultima_pontuacao_em, usuario_id);
create index totais_nivel_idx on gamificacao.totais_periodo (periodo, periodo_inicio, nivel_ordem, pontos desc, ultima_pontuacao_em, usuario_id);
create index totais_local_idx on gamificacao.totais_periodo (periodo, periodo_inicio, cidade_id, pontos desc, ultima_pontuacao_em, usuario_id);
comment on table gamificacao.totais_periodo is
  'Points per technician per calendar period (semanal, mensal, anual, geral), maintained by scoring; one row means the technician is on that period''s boards.';
comment on column gamificacao.totais_periodo.periodo is 'Kind of period.';
comment on column gamificacao.totais_periodo.periodo_inicio is 'First local day of the period (-infinity for geral).';
comment on column gamificacao.totais_periodo.cidade_id is 'The technician''s home city (local board), kept in step with public.tecnicos.';
comment on column gamificacao.totais_periodo.nivel_ordem is 'The technician''s current level (national board filtered by level), kept in step with public.tecnicos.';
comment on column gamificacao.totais_periodo.pontos is 'Points scored in the period.';
comment on column gamificacao.totais_periodo.acoes is 'Actions scored in the period.';
comment on column gamificacao.totais_periodo.ultima_pontuacao_em is 'Last scoring in the period: on equal points, the earlier one ranks higher.';
alter table gamificacao.totais_periodo enable row level security;

create table gamificacao.faixas_ranking (
  periodo text not null,
  periodo_inicio date not null,
  nivel smallint not null,
  escala smallint not null check (escala in (0, 1, 2)),
  faixa integer not null,
  -- No check (quantidade >= 0): an upsert carrying a -1 delta for an existing bucket would fail it
  -- on the proposed row before the conflict turns it into an update.
  quantidade integer not null,
  primary key (periodo, periodo_inicio, nivel, escala, faixa)
)
-- A few hundred rows, each updated by most scorings: room on every page keeps the updates HOT, so
-- the primary key gains no entry per update and the positions' range reads stay short.
with (fillfactor = 50);
comment on table gamificacao.faixas_ranking is
  'Technicians per points bucket of each national board, at three scales: position = 1 + technicians in higher coarse buckets + in higher fine buckets of the same coarse one + those ahead inside the fine bucket (on the board of all levels: higher exact points, then the tie keys).';
comment on column gamificacao.faixas_ranking.nivel is 'Level ordem of the filtered board, 0 for the board of all levels.';
comment on column gamificacao.faixas_ranking.escala is
  '0: fine buckets (periodos.largura_faixa points); 1: coarse buckets of 32 fine ones; 2: exact points (board of all levels only).';
comment on column gamificacao.faixas_ranking.faixa is 'pontos / largura_faixa (fine), that / 32 (coarse), or pontos (exact points), integer division.';
comment on column gamificacao.faixas_ranking.quantidade is 'Technicians whose period points fall in the bucket.';
alter table gamificacao.faixas_ranking enable row level security;

create table gamificacao.contagem_acoes (
  usuario_id uuid not null references public.tecnicos (id) on delete cascade,
  acao text not null,
  quantidade integer not null check (quantidade >= 0),
  primary key (usuario_id, acao)
);
comment on table gamificacao.contagem_acoes is 'How many times each technician has scored each action (count-based badge rules read it).';
alter table gamificacao.contagem_acoes enable row level security;

-- Privileges and RLS ---------------------------------------------------------------------------
revoke all on public.historico_pontos, public.usuario_badges from anon, authenticated, service_role;
grant select on public.historico_pontos, public.usuario_badges to authenticated, service_role;

alter table public.historico_pontos enable row level security;
alter table public.usuario_badges enable row level security;

create policy "Technicians read their own history and administrators read all" on public.historico_pontos
  for select to authenticated using (usuario_id = (select auth.uid()) or (select gamificacao.eh_admin()));
create policy "Technicians read their own badges and administrators read all" on public.usuario_badges
  for select to authenticated using (usuario_id = (select auth.uid()) or (select gamificacao.eh_admin()));
