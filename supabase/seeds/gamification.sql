-- Gamification demo data: 18 field technicians in 7 cities (tiers 1 to 5), a year of back-office
-- calls, the points those calls earned (replayed through the scoring function, so totals, levels,
-- badges and rank buckets are exactly what the API would have produced), a snapshot from a day
-- ago (so rankings show position changes) and computed category boards. Every ranking, history
-- and badge endpoint has data right after `npm start`.
--
-- Sign-in (local stacks only): every technician's e-mail is listed below with password
-- `tecnico123` (e.g. ana.souza@tecnicos.orbita.test, in São Paulo); the administrator
-- admin.gamificacao@orbita.test has password `admin123` and app_metadata.role = admin.
--
-- Idempotent: rows have fixed ids and `on conflict do nothing`; the replay runs only while no
-- seeded technician has history yet. São Paulo's back office has over a thousand calls in 90 days
-- (tier 1), but only its last two weeks are scored, which keeps the seed fast; Ana Souza, the
-- technician the docs sign in as, is the exception: her calls (about one every three days) span
-- the whole year and are all scored, so her 365-day history holds more than her 30-day one.

-- Cities ---------------------------------------------------------------------------------------
insert into public.cidades (id, nome, uf) values
  ('sao-paulo-sp', 'São Paulo', 'SP'),
  ('rio-de-janeiro-rj', 'Rio de Janeiro', 'RJ'),
  ('belem-pa', 'Belém', 'PA'),
  ('joinville-sc', 'Joinville', 'SC'),
  ('santos-sp', 'Santos', 'SP'),
  ('vitoria-es', 'Vitória', 'ES'),
  ('altamira-pa', 'Altamira', 'PA')
on conflict do nothing;

-- Technicians: who they are and how their call history looks ------------------------------------
-- chamados: calls over `dias` days; pontuados_dias: how far back calls were scored; pontualidade:
-- share of on-time check-ins (percent).
create temporary table seed_tecnicos (
  email text primary key, nome text, cidade_id text, avatar boolean,
  chamados integer, dias integer, pontuados_dias integer, pontualidade integer
);
-- City centres, around which calls are spread (about +-2 km).
create temporary table seed_centros (cidade_id text primary key, latitude double precision, longitude double precision);
insert into seed_centros values
  ('sao-paulo-sp', -23.5505, -46.6333), ('rio-de-janeiro-rj', -22.9068, -43.1729), ('belem-pa', -1.4558, -48.4902),
  ('joinville-sc', -26.3045, -48.8487), ('santos-sp', -23.9608, -46.3336), ('vitoria-es', -20.3155, -40.3128),
  ('altamira-pa', -3.2039, -52.2082);
insert into seed_tecnicos values
  ('ana.souza@tecnicos.orbita.test', 'Ana Souza', 'sao-paulo-sp', true, 110, 365, 365, 95),
  ('bruno.lima@tecnicos.orbita.test', 'Bruno Lima', 'sao-paulo-sp', true, 225, 90, 14, 85),
  ('carla.mendes@tecnicos.orbita.test', 'Carla Mendes', 'sao-paulo-sp', false, 220, 90, 14, 90),
  ('diego.rocha@tecnicos.orbita.test', 'Diego Rocha', 'sao-paulo-sp', true, 215, 90, 14, 70),
  ('elisa.prado@tecnicos.orbita.test', 'Elisa Prado', 'sao-paulo-sp', true, 210, 90, 14, 92),
  ('fabio.nunes@tecnicos.orbita.test', 'Fábio Nunes', 'sao-paulo-sp', false, 205, 90, 14, 80),
  ('gabriela.torres@tecnicos.orbita.test', 'Gabriela Torres', 'rio-de-janeiro-rj', true, 125, 90, 30, 93),
  ('henrique.alves@tecnicos.orbita.test', 'Henrique Alves', 'rio-de-janeiro-rj', true, 100, 90, 30, 75),
  ('isabela.castro@tecnicos.orbita.test', 'Isabela Castro', 'rio-de-janeiro-rj', false, 95, 90, 30, 88),
  ('joao.pereira@tecnicos.orbita.test', 'João Pereira', 'belem-pa', true, 40, 120, 120, 90),
  ('karina.duarte@tecnicos.orbita.test', 'Karina Duarte', 'belem-pa', true, 30, 120, 120, 82),
  ('quesia.moraes@tecnicos.orbita.test', 'Quésia Moraes', 'joinville-sc', true, 45, 200, 200, 96),
  ('rafael.pinto@tecnicos.orbita.test', 'Rafael Pinto', 'joinville-sc', false, 40, 90, 90, 78),
  ('lucas.martins@tecnicos.orbita.test', 'Lucas Martins', 'santos-sp', true, 75, 400, 400, 94),
  ('marina.ribeiro@tecnicos.orbita.test', 'Marina Ribeiro', 'santos-sp', true, 4, 60, 60, 88),
  ('nicolas.barros@tecnicos.orbita.test', 'Nicolas Barros', 'vitoria-es', true, 160, 400, 400, 97),
  ('olivia.cardoso@tecnicos.orbita.test', 'Olívia Cardoso', 'vitoria-es', true, 4, 60, 60, 85),
  ('paulo.freitas@tecnicos.orbita.test', 'Paulo Freitas', 'altamira-pa', false, 12, 200, 200, 90);

-- A stable id per e-mail, so re-running the seed finds the same rows.
create temporary table seed_usuarios as
select email, md5('orbita-seed-' || email)::uuid as id, 'tecnico123' as senha, '{}'::jsonb as app_metadata from seed_tecnicos
union all
select 'admin.gamificacao@orbita.test', md5('orbita-seed-admin.gamificacao@orbita.test')::uuid, 'admin123', '{"role": "admin"}'::jsonb;

insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at, raw_app_meta_data,
  raw_user_meta_data, created_at, updated_at, confirmation_token, recovery_token, email_change_token_new, email_change)
select '00000000-0000-0000-0000-000000000000', u.id, 'authenticated', 'authenticated', u.email,
  extensions.crypt(u.senha, extensions.gen_salt('bf')), now(),
  jsonb_build_object('provider', 'email', 'providers', jsonb_build_array('email')) || u.app_metadata,
  '{}', now(), now(), '', '', '', ''
from seed_usuarios u
on conflict do nothing;

insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
select u.id::text, u.id, jsonb_build_object('sub', u.id::text, 'email', u.email, 'email_verified', true, 'phone_verified', false),
  'email', now(), now(), now()
from seed_usuarios u
on conflict do nothing;

insert into public.tecnicos (id, nome, cidade_id, avatar_url)
select u.id, t.nome, t.cidade_id,
  case when t.avatar then 'https://api.dicebear.com/9.x/initials/svg?seed=' || replace(t.nome, ' ', '%20') end
from seed_tecnicos t join seed_usuarios u using (email)
on conflict do nothing;

-- Calls ----------------------------------------------------------------------------------------
-- Spread evenly over each technician's `dias`, scheduled between 8h and 17h. hashtext() gives
-- stable pseudo-random choices: lateness, duration, stars, cancellations and urgency.
insert into public.chamados (id, tecnico_id, cidade_id, latitude, longitude, urgente, agendado_para, aceito_em,
  checkin_em, checkin_latitude, checkin_longitude, checkout_em, status, cancelado_em, cancelado_por, estrelas)
select md5(c.semente)::uuid, u.id, t.cidade_id, c.latitude, c.longitude, c.sorte % 20 = 0, c.agendado, c.agendado - interval '1 day',
  case when not c.cancelado then c.agendado + c.atraso end,
  case when not c.cancelado then c.latitude + 0.0004 end,
  case when not c.cancelado then c.longitude end,
  case when not c.cancelado then c.agendado + c.atraso + c.duracao end,
  case when c.cancelado then 'cancelado' else 'concluido' end,
  case when c.cancelado then c.agendado - interval '2 hours' end,
  case when c.cancelado then case when c.sorte % 2 = 0 then 'tecnico' else 'cliente' end end,
  case when not c.cancelado and c.sorte % 33 <> 0 then case when c.sorte % 10 < 7 then 5 when c.sorte % 10 < 9 then 4 else 3 end end::smallint
from (select * from seed_tecnicos join seed_centros using (cidade_id)) t
join seed_usuarios u using (email)
cross join lateral generate_series(1, t.chamados) k
cross join lateral (select 'orbita-seed-chamado-' || t.email || '-' || k as semente) s
cross join lateral (select abs(hashtext(s.semente)) as sorte) h
cross join lateral (
  select s.semente, h.sorte,
    date_trunc('day', now() - make_interval(days => (k * t.dias) / t.chamados)) + make_interval(hours => 11 + h.sorte % 10) as agendado,
    h.sorte % 25 = 1 as cancelado,
    case when h.sorte % 100 < t.pontualidade then make_interval(mins => h.sorte % 23 - 10) else make_interval(mins => 16 + h.sorte % 30) end as atraso,
    make_interval(mins => 35 + h.sorte % 120) as duracao,
    t.latitude + (h.sorte % 200 - 100) / 5000.0 as latitude,
    t.longitude + (h.sorte % 300 - 150) / 5000.0 as longitude
) c
where c.agendado + c.atraso + c.duracao < now() - interval '1 hour'
on conflict do nothing;

-- Points ---------------------------------------------------------------------------------------
-- Each scorable action of each call, at the moment the app would have sent it, replayed in time
-- order through the scoring function; a snapshot is taken when the replay reaches a day ago.
do $$
declare
  v_acao record;
  v_snapshot_tirado boolean := false;
begin
  if exists (select 1 from public.historico_pontos h join seed_usuarios u on u.id = h.usuario_id) then
    return;
  end if;
  perform gamificacao.recalcular_metricas_cidades();

  for v_acao in
    with pontuaveis as (
      select ch.*, t.pontuados_dias from public.chamados ch
      join seed_usuarios u on u.id = ch.tecnico_id
      join seed_tecnicos t using (email)
      where ch.status = 'concluido' and ch.agendado_para > now() - make_interval(days => t.pontuados_dias)
    )
    select p.tecnico_id, p.id as chamado_id, a.acao, a.momento, a.metadata
    from pontuaveis p
    cross join lateral (values
      ('checkin_pontual', p.checkin_em + interval '2 minutes',
        jsonb_build_object('latitude', p.checkin_latitude, 'longitude', p.checkin_longitude, 'timestamp_checkin', p.checkin_em),
        p.checkin_em <= p.agendado_para + interval '15 minutes'),
      ('chamado_concluido', p.checkout_em + interval '1 minute', '{}'::jsonb, true),
      ('checkout_registrado', p.checkout_em + interval '2 minutes',
        jsonb_build_object('latitude', p.latitude, 'longitude', p.longitude + 0.0005, 'timestamp_checkin', p.checkout_em), true),
      ('avaliacao_5_estrelas', p.checkout_em + interval '3 hours', '{}'::jsonb, p.estrelas = 5),
      ('avaliacao_4_estrelas', p.checkout_em + interval '3 hours', '{}'::jsonb, p.estrelas = 4),
      ('chamado_urgente_atendido', p.checkout_em + interval '5 minutes', '{}'::jsonb, p.urgente)
    ) a (acao, momento, metadata, elegivel)
    where a.elegivel and a.momento < now()
    order by a.momento, p.id, a.acao
  loop
    if not v_snapshot_tirado and v_acao.momento > now() - interval '1 day' then
      perform gamificacao.capturar_snapshots();
      v_snapshot_tirado := true;
    end if;
    perform gamificacao.registrar_acao(v_acao.tecnico_id, v_acao.acao, v_acao.chamado_id, v_acao.metadata, v_acao.momento, v_acao.tecnico_id);
  end loop;

  perform gamificacao.atualizar_rankings_categorias(now(), true);
end;
$$;

drop table seed_tecnicos, seed_centros, seed_usuarios;
