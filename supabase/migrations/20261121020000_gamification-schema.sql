-- Gamification: the private schema and the small helpers every other gamification migration uses.
--
-- Creates schema `gamificacao` (internals: running totals, rank buckets, snapshots, rate limits,
-- scoring and ranking logic), which PostgREST does not expose. The API surface (catalogue and
-- field-service tables under RLS, and the `gamificacao_*` RPCs the `api` edge function calls)
-- lives in `public`. Helpers here: who the caller is, calendar periods in America/Sao_Paulo, and
-- the typed error every gamification function raises.

-- Default deny ---------------------------------------------------------------------------------
create schema gamificacao;
comment on schema gamificacao is
  'Gamification internals (totals, rank buckets, snapshots, rate limits, scoring). Not exposed by PostgREST.';

revoke all on schema gamificacao from public;
-- RLS policies on public tables call gamificacao.eh_admin(), so the API roles need to resolve names
-- in the schema; execute is granted function by function below, and no table here is granted.
grant usage on schema gamificacao to authenticated, service_role;
alter default privileges for role postgres in schema gamificacao revoke execute on functions from public;

-- Caller ---------------------------------------------------------------------------------------

/**
 * True when the caller's JWT marks them as an administrator: `app_metadata.role` is `admin` or
 * `super_admin`. app_metadata is writable only with the service role, so users cannot grant it
 * to themselves.
 */
create function gamificacao.eh_admin() returns boolean
language sql stable security invoker set search_path = '' as $$
  select coalesce((select auth.jwt()) -> 'app_metadata' ->> 'role', '') in ('admin', 'super_admin')
$$;
comment on function gamificacao.eh_admin() is 'Whether the caller''s JWT carries app_metadata.role admin or super_admin.';
grant execute on function gamificacao.eh_admin() to authenticated, service_role;

/** True when the request runs with the service_role key (the field-service back office). */
create function gamificacao.eh_servico() returns boolean
language plpgsql stable security invoker set search_path = '' as $$
begin
  return coalesce(auth.role(), '') = 'service_role';
end;
$$;
comment on function gamificacao.eh_servico() is 'Whether the request carries the service_role key (the back office).';

-- Periods --------------------------------------------------------------------------------------
-- Rankings use calendar periods in America/Sao_Paulo (no DST since 2019, so UTC-3 today; the zone
-- name keeps historic dates right). A period is identified by its kind and its first local day;
-- `geral` (all time) uses -infinity so every kind fits one (periodo, periodo_inicio) key.

create table gamificacao.periodos (
  periodo text primary key check (periodo in ('semanal', 'mensal', 'anual', 'geral')),
  largura_faixa integer not null check (largura_faixa > 0)
);
comment on table gamificacao.periodos is 'The ranking period kinds and the points width of their national rank buckets.';
comment on column gamificacao.periodos.periodo is 'semanal (ISO week from Monday), mensal, anual (calendar) or geral (all time).';
comment on column gamificacao.periodos.largura_faixa is
  'Points per fine rank bucket (gamificacao.faixas_ranking; coarse buckets hold 32 fine ones). Narrow enough that a fine bucket holds few technicians; change it only together with gamificacao.reconstruir_faixas().';
alter table gamificacao.periodos enable row level security;

insert into gamificacao.periodos (periodo, largura_faixa) values
  ('semanal', 10), ('mensal', 10), ('anual', 25), ('geral', 25);

/** The moment as a local wall-clock time in America/Sao_Paulo. */
create function gamificacao.hora_local(p_momento timestamptz) returns timestamp
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  return p_momento at time zone 'America/Sao_Paulo';
end;
$$;
comment on function gamificacao.hora_local(timestamptz) is 'The moment as wall-clock time in America/Sao_Paulo.';

/** First local day of the period of kind `p_periodo` that contains `p_momento` (-infinity for geral). */
create function gamificacao.inicio_periodo(p_periodo text, p_momento timestamptz) returns date
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  return case p_periodo
    when 'semanal' then date_trunc('week', gamificacao.hora_local(p_momento))::date
    when 'mensal' then date_trunc('month', gamificacao.hora_local(p_momento))::date
    when 'anual' then date_trunc('year', gamificacao.hora_local(p_momento))::date
    when 'geral' then '-infinity'::date
  end;
end;
$$;
comment on function gamificacao.inicio_periodo(text, timestamptz) is 'First local day of the period containing the moment (-infinity for geral).';

/** First local day after the period that starts on `p_inicio` (infinity for geral). */
create function gamificacao.fim_periodo(p_periodo text, p_inicio date) returns date
language sql immutable parallel safe set search_path = '' as $$
  select case p_periodo
    when 'semanal' then p_inicio + 7
    when 'mensal' then (p_inicio + interval '1 month')::date
    when 'anual' then (p_inicio + interval '1 year')::date
    when 'geral' then 'infinity'::date
  end
$$;
comment on function gamificacao.fim_periodo(text, date) is 'First local day after the period (exclusive end; infinity for geral).';

/** Local midnight of `p_dia` in America/Sao_Paulo as an instant. */
create function gamificacao.meia_noite_local(p_dia date) returns timestamptz
language plpgsql immutable parallel safe set search_path = '' as $$
begin
  return p_dia::timestamp at time zone 'America/Sao_Paulo';
end;
$$;
comment on function gamificacao.meia_noite_local(date) is 'Local midnight of the day in America/Sao_Paulo, as an instant.';

-- Errors ---------------------------------------------------------------------------------------
-- Every expected failure is raised with SQLSTATE GM000: message = the envelope's `codigo`, detail
-- = `mensagem`, hint = {"status": <http>, "detalhes": ...}. The public RPCs catch exactly this
-- state and turn it into the error envelope; anything else is a bug and propagates as a 500.

/** Raises the gamification error `p_codigo` with its HTTP status, message and optional details. */
create function gamificacao.falhar(p_status integer, p_codigo text, p_mensagem text, p_detalhes jsonb default null)
returns void
language plpgsql volatile set search_path = '' as $$
begin
  raise exception using
    errcode = 'GM000',
    message = p_codigo,
    detail = p_mensagem,
    hint = jsonb_build_object('status', p_status, 'detalhes', p_detalhes)::text;
end;
$$;
comment on function gamificacao.falhar(integer, text, text, jsonb) is
  'Raises an expected gamification failure (SQLSTATE GM000) carrying codigo, mensagem, HTTP status and detalhes.';
