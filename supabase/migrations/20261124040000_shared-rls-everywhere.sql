-- Row-level security on every table, private schemas included. These tables are read and written
-- only by security-definer functions owned by postgres (which bypasses RLS, as on hosted Supabase)
-- and by the service role, so nothing they serve changes: RLS here is the second wall, should a
-- grant ever be added by mistake. The two workflow catalogues that signed-in users' validation
-- reads get a read policy of their own.

alter table gamificacao.categorias enable row level security;
alter table gamificacao.contagem_acoes enable row level security;
alter table gamificacao.faixas_ranking enable row level security;
alter table gamificacao.limites_config enable row level security;
alter table gamificacao.limites_uso enable row level security;
alter table gamificacao.periodos enable row level security;
alter table gamificacao.ranking_categorias enable row level security;
alter table gamificacao.ranking_categorias_calculos enable row level security;
alter table gamificacao.ranking_snapshots enable row level security;
alter table gamificacao.totais_periodo enable row level security;
alter table workflows_private.environment_values enable row level security;
alter table workflows_private.secrets enable row level security;

alter table workflows_private.block_types enable row level security;
create policy "Signed-in users read the block catalogue" on workflows_private.block_types
  for select to authenticated using (true);

alter table workflows_private.schemas enable row level security;
create policy "Signed-in users read the config schemas" on workflows_private.schemas
  for select to authenticated using (true);
