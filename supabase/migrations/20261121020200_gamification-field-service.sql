-- Gamification: the field-service data points are earned on.
--
-- Creates public.cidades (where calls happen, with the check-in radius), public.cidades_metricas
-- (each city's 90-day call volume, tier, active technicians and the multipliers they imply,
-- recomputed daily by pg_cron and frozen on every history row), public.tecnicos (one per
-- auth.users account: name, home city, avatar, running total and level) and public.chamados
-- (service calls: technician, place, schedule, check-in/out, status, cancellation, stars).
-- The back office (service role) and administrators manage cities, technicians and calls; a
-- technician reads every public ranking field, their own calls, and edits their name and avatar.

-- Cities ---------------------------------------------------------------------------------------
create table public.cidades (
  id text primary key check (id ~ '^[a-z0-9]+(-[a-z0-9]+)*$'),
  nome text not null,
  uf char(2) not null check (uf ~ '^[A-Z]{2}$'),
  raio_checkin_m integer not null default 300 check (raio_checkin_m between 10 and 5000),
  unique (nome, uf),
  constraint cidades_nome_no_control_characters check (shared_private.is_plain_text(nome))
);
comment on table public.cidades is 'Cities where calls take place.';
comment on column public.cidades.id is 'Slug such as sao-paulo-sp; the local ranking accepts it or the city name.';
comment on column public.cidades.nome is 'Display name (São Paulo).';
comment on column public.cidades.uf is 'State (SP).';
comment on column public.cidades.raio_checkin_m is 'Default check-in radius around a call''s location, in metres.';

create table public.cidades_metricas (
  cidade_id text primary key references public.cidades (id) on delete cascade,
  chamados_90d integer not null check (chamados_90d >= 0),
  tier smallint not null references public.faixas_tier (tier),
  multiplicador_tier numeric(3, 2) not null,
  tecnicos_ativos integer not null check (tecnicos_ativos >= 0),
  multiplicador_densidade numeric(3, 2) not null,
  calculado_em timestamptz not null
);
comment on table public.cidades_metricas is
  'Per-city scoring inputs, recomputed by the pg_cron job gamificacao-metricas-cidades; scoring copies them onto each history row.';
comment on column public.cidades_metricas.chamados_90d is 'Calls scheduled in the city over the trailing 90 days, cancelled ones excluded.';
comment on column public.cidades_metricas.tier is 'Tier band of chamados_90d (public.faixas_tier).';
comment on column public.cidades_metricas.multiplicador_tier is 'The tier multiplier.';
comment on column public.cidades_metricas.tecnicos_ativos is 'Technicians who concluded at least one call in the city in the trailing 30 days.';
comment on column public.cidades_metricas.multiplicador_densidade is '1 + max(0, (1 - N/10) x 0.5) with N = max(tecnicos_ativos, 1).';
comment on column public.cidades_metricas.calculado_em is 'When the job computed this row.';

-- Technicians ----------------------------------------------------------------------------------
create table public.tecnicos (
  id uuid primary key references auth.users (id) on delete cascade,
  nome text not null check (length(nome) between 1 and 120),
  cidade_id text not null references public.cidades (id),
  avatar_url text check (avatar_url ~ '^https?://'),
  ativo boolean not null default true,
  pontos_total integer not null default 0 check (pontos_total >= 0),
  nivel text not null default 'iniciante' references public.niveis (slug),
  badges_count integer not null default 0 check (badges_count >= 0),
  ultima_pontuacao_em timestamptz,
  criado_em timestamptz not null default now(),
  constraint tecnicos_nome_no_control_characters check (shared_private.is_plain_text(nome)),
  constraint tecnicos_avatar_url_no_control_characters check (shared_private.is_plain_text(avatar_url))
)
-- Every scoring updates the technician's row (points, last scoring, badges); room left on each page
-- keeps that update HOT (no new index entries) instead of a quarter of the time, as measured.
with (fillfactor = 80);
create index tecnicos_cidade_id_idx on public.tecnicos (cidade_id);
create index tecnicos_nivel_idx on public.tecnicos (nivel);
comment on table public.tecnicos is 'Field technicians, one per auth account (id = auth.users.id = usuario_id).';
comment on column public.tecnicos.nome is 'Name shown on rankings.';
comment on column public.tecnicos.cidade_id is 'Home city: the technician appears on this city''s local ranking.';
comment on column public.tecnicos.avatar_url is 'Picture shown on rankings (avatar_url).';
comment on column public.tecnicos.ativo is 'Inactive technicians cannot score.';
comment on column public.tecnicos.pontos_total is 'Lifetime points, maintained by the scoring function only.';
comment on column public.tecnicos.nivel is 'Current level (slug), maintained by the scoring function; never goes down.';
comment on column public.tecnicos.badges_count is 'Badges held, maintained when badges are awarded.';
comment on column public.tecnicos.ultima_pontuacao_em is 'When the technician last scored.';

-- Service calls --------------------------------------------------------------------------------
create table public.chamados (
  id uuid primary key default gen_random_uuid(),
  tecnico_id uuid not null references public.tecnicos (id) on delete cascade,
  cidade_id text not null references public.cidades (id),
  latitude double precision not null check (latitude between -90 and 90),
  longitude double precision not null check (longitude between -180 and 180),
  raio_checkin_m integer check (raio_checkin_m between 10 and 5000),
  urgente boolean not null default false,
  agendado_para timestamptz not null,
  aceito_em timestamptz,
  checkin_em timestamptz,
  checkin_latitude double precision check (checkin_latitude between -90 and 90),
  checkin_longitude double precision check (checkin_longitude between -180 and 180),
  checkout_em timestamptz,
  status text not null default 'agendado' check (status in ('agendado', 'em_andamento', 'concluido', 'cancelado')),
  cancelado_em timestamptz,
  cancelado_por text check (cancelado_por in ('tecnico', 'cliente', 'operacao')),
  estrelas smallint check (estrelas between 1 and 5),
  criado_em timestamptz not null default now(),
  atualizado_em timestamptz not null default clock_timestamp(),
  check (checkout_em is null or (checkin_em is not null and checkout_em >= checkin_em)),
  check (status <> 'concluido' or checkout_em is not null),
  check ((status = 'cancelado') = (cancelado_em is not null and cancelado_por is not null)),
  check (estrelas is null or status = 'concluido')
);
create index chamados_tecnico_agendado_idx on public.chamados (tecnico_id, agendado_para);
create index chamados_cidade_agendado_idx on public.chamados (cidade_id, agendado_para);
create index chamados_agendado_idx on public.chamados (agendado_para);
create index chamados_atualizado_em_idx on public.chamados (atualizado_em);
comment on table public.chamados is 'Service calls, managed by the back office; the source of category rankings and of scoring checks.';
comment on column public.chamados.tecnico_id is 'Technician assigned to the call; only they can score it.';
comment on column public.chamados.cidade_id is 'City where the call takes place (its metrics set the tier and densidade multipliers).';
comment on column public.chamados.latitude is 'Geocoded location of the service address.';
comment on column public.chamados.longitude is 'Geocoded location of the service address.';
comment on column public.chamados.raio_checkin_m is 'Check-in radius for this call in metres; null uses the city''s.';
comment on column public.chamados.urgente is 'Urgent / SLA-critical call.';
comment on column public.chamados.agendado_para is 'Scheduled time; punctuality and the call''s ranking period are measured from it.';
comment on column public.chamados.aceito_em is 'When the technician accepted the call (confiabilidade counts accepted calls).';
comment on column public.chamados.checkin_em is 'Check-in time recorded by the back office.';
comment on column public.chamados.checkin_latitude is 'Where the check-in was recorded.';
comment on column public.chamados.checkin_longitude is 'Where the check-in was recorded.';
comment on column public.chamados.checkout_em is 'Check-out time; a concluded call has one, never before the check-in.';
comment on column public.chamados.status is 'agendado, em_andamento, concluido or cancelado.';
comment on column public.chamados.cancelado_em is 'When the call was cancelled.';
comment on column public.chamados.cancelado_por is 'Who cancelled: tecnico, cliente or operacao (only tecnico counts against confiabilidade).';
comment on column public.chamados.estrelas is 'Customer rating, 1 to 5, on concluded calls.';
comment on column public.chamados.criado_em is 'When the call was created.';
comment on column public.chamados.atualizado_em is 'Last change; the category-ranking job skips work when no call changed.';

/**
 * Keeps chamados.atualizado_em current so the category-ranking job can tell whether calls changed.
 * The wall clock, not the transaction start, so a change made after a refresh in the same
 * transaction still reads as newer.
 */
create function gamificacao.tocar_chamado() returns trigger
language plpgsql set search_path = '' as $$
begin
  new.atualizado_em := clock_timestamp();
  return new;
end;
$$;
comment on function gamificacao.tocar_chamado() is 'Trigger: stamps chamados.atualizado_em on every update.';
create trigger chamados_atualizado_em before update on public.chamados
  for each row execute function gamificacao.tocar_chamado();

-- City metrics ---------------------------------------------------------------------------------

/** The tier band of a 90-day call volume: the band with the highest minimum not above it. */
create function gamificacao.faixa_tier(p_chamados_90d integer) returns public.faixas_tier
language sql stable set search_path = '' as $$
  select f.* from public.faixas_tier f
  where f.chamados_minimos <= p_chamados_90d
  order by f.chamados_minimos desc
  limit 1
$$;
comment on function gamificacao.faixa_tier(integer) is 'The tier band (tier and multiplier) of a 90-day call volume.';

/**
 * The densidade multiplier 1 + max(0, (1 - N/10) x 0.5). N counts at least 1: a technician scoring
 * in a city is active there even before the daily job sees their first call, so the maximum is 1.45.
 */
create function gamificacao.multiplicador_densidade(p_tecnicos_ativos integer) returns numeric
language sql immutable parallel safe set search_path = '' as $$
  select round(1 + greatest(0, (1 - greatest(p_tecnicos_ativos, 1) / 10.0) * 0.5), 2)
$$;
comment on function gamificacao.multiplicador_densidade(integer) is 'densidade = 1 + max(0, (1 - max(N,1)/10) x 0.5), 2 decimals.';

/**
 * Recomputes public.cidades_metricas as of `p_momento`, for one city or (null) all of them, and
 * returns how many rows it wrote. Run daily by pg_cron; scoring runs it for a city that has no
 * metrics yet.
 */
create function gamificacao.recalcular_metricas_cidades(p_cidade_id text default null, p_momento timestamptz default now())
returns integer
language plpgsql set search_path = '' as $$
declare
  v_linhas integer;
begin
  insert into public.cidades_metricas as m
    (cidade_id, chamados_90d, tier, multiplicador_tier, tecnicos_ativos, multiplicador_densidade, calculado_em)
  select c.id, coalesce(v.chamados, 0), (f).tier, (f).multiplicador, coalesce(a.tecnicos, 0),
    gamificacao.multiplicador_densidade(coalesce(a.tecnicos, 0)), p_momento
  from public.cidades c
  left join lateral (
    select count(*)::integer as chamados from public.chamados ch
    where ch.cidade_id = c.id and ch.status <> 'cancelado'
      and ch.agendado_para >= p_momento - interval '90 days' and ch.agendado_para < p_momento
  ) v on true
  left join lateral (
    select count(distinct ch.tecnico_id)::integer as tecnicos from public.chamados ch
    where ch.cidade_id = c.id and ch.status = 'concluido'
      and ch.checkout_em >= p_momento - interval '30 days' and ch.checkout_em < p_momento
  ) a on true
  cross join lateral (select gamificacao.faixa_tier(coalesce(v.chamados, 0)) as f) t
  where p_cidade_id is null or c.id = p_cidade_id
  on conflict (cidade_id) do update set
    chamados_90d = excluded.chamados_90d,
    tier = excluded.tier,
    multiplicador_tier = excluded.multiplicador_tier,
    tecnicos_ativos = excluded.tecnicos_ativos,
    multiplicador_densidade = excluded.multiplicador_densidade,
    calculado_em = excluded.calculado_em;
  get diagnostics v_linhas = row_count;
  return v_linhas;
end;
$$;
comment on function gamificacao.recalcular_metricas_cidades(text, timestamptz) is
  'Recomputes cidades_metricas (90-day volume, tier, active technicians, multipliers) for one or all cities.';

-- 03:10 UTC = 00:10 in Sao Paulo: daily, so multipliers move at most once a day and history rows
-- keep the values they were scored with.
select cron.schedule('gamificacao-metricas-cidades', '10 3 * * *', $$select gamificacao.recalcular_metricas_cidades()$$);

-- Privileges and RLS ---------------------------------------------------------------------------
revoke all on public.cidades, public.cidades_metricas, public.tecnicos, public.chamados from anon, authenticated, service_role;
grant select, insert, update, delete on public.cidades, public.chamados to authenticated, service_role;
grant select on public.cidades_metricas to authenticated, service_role;
grant select on public.tecnicos to authenticated;
-- Technicians edit their own name and picture; points, level and badges move only through scoring.
grant update (nome, avatar_url) on public.tecnicos to authenticated;
grant select, delete on public.tecnicos to service_role;
grant insert (id, nome, cidade_id, avatar_url, ativo), update (nome, cidade_id, avatar_url, ativo) on public.tecnicos to service_role;

alter table public.cidades enable row level security;
alter table public.cidades_metricas enable row level security;
alter table public.tecnicos enable row level security;
alter table public.chamados enable row level security;

create policy "Signed-in users can read the cities" on public.cidades for select to authenticated using (true);
create policy "Administrators can add cities" on public.cidades for insert to authenticated with check ((select gamificacao.eh_admin()));
create policy "Administrators can change cities" on public.cidades for update to authenticated using ((select gamificacao.eh_admin()));
create policy "Administrators can remove cities" on public.cidades for delete to authenticated using ((select gamificacao.eh_admin()));

create policy "Signed-in users can read city metrics" on public.cidades_metricas for select to authenticated using (true);

create policy "Signed-in users can read technicians'' ranking fields" on public.tecnicos
  for select to authenticated using (true);
create policy "Technicians can edit their own name and avatar" on public.tecnicos
  for update to authenticated using (id = (select auth.uid())) with check (id = (select auth.uid()));

create policy "Technicians read their calls and administrators read all" on public.chamados
  for select to authenticated using (tecnico_id = (select auth.uid()) or (select gamificacao.eh_admin()));
create policy "Administrators can create calls" on public.chamados for insert to authenticated with check ((select gamificacao.eh_admin()));
create policy "Administrators can change calls" on public.chamados for update to authenticated using ((select gamificacao.eh_admin()));
create policy "Administrators can remove calls" on public.chamados for delete to authenticated using ((select gamificacao.eh_admin()));
