-- Seed data for local development and tests. Domain seeds live in supabase/seeds/ (config.toml
-- [db.seed] sql_paths), one file per backend.
select 1;
