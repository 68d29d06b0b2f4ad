-- Gamification: daily ranking snapshots, position changes and month-close badges.
--
-- A pg_cron job at 03:05 UTC (00:05 in Sao Paulo) stores every technician's position on each
-- board of the current periods (and of the period that just closed) in
-- gamificacao.ranking_snapshots, one row per (period, technician). `variacao_posicao` compares the
-- live position with that row: it is the change since the start of the day, never a diff against
-- a snapshot that already holds the latest results (which would always read 0). The same job
-- awards the month-close ranking badges from the closed month's final positions.

create table gamificacao.ranking_snapshots (
  periodo text not null,
  periodo_inicio date not null,
  usuario_id uuid not null references public.tecnicos (id) on delete cascade,
  capturado_em timestamptz not null,
  cidade_id text,
  nivel_ordem smallint,
  pontos integer,
  posicao_nacional integer,
  posicao_nivel integer,
  posicao_local integer,
  posicao_pontualidade integer,
  posicao_qualidade integer,
  posicao_velocidade integer,
  posicao_atividade integer,
  posicao_confiabilidade integer,
  primary key (periodo, periodo_inicio, usuario_id)
);
comment on table gamificacao.ranking_snapshots is
  'Each technician''s positions on every board of a period, as of the last daily snapshot (the closed period''s last one is its final standing).';
comment on column gamificacao.ranking_snapshots.capturado_em is 'When the snapshot was taken.';
comment on column gamificacao.ranking_snapshots.cidade_id is 'Home city at snapshot time (posicao_local is on that city''s board).';
comment on column gamificacao.ranking_snapshots.nivel_ordem is 'Level at snapshot time (posicao_nivel is on that level''s board).';
comment on column gamificacao.ranking_snapshots.pontos is 'Points in the period at snapshot time (null: not on the points boards).';
comment on column gamificacao.ranking_snapshots.posicao_nacional is 'Position on the national board.';
comment on column gamificacao.ranking_snapshots.posicao_nivel is 'Position on the national board of their level.';
comment on column gamificacao.ranking_snapshots.posicao_local is 'Position on their city''s board.';
comment on column gamificacao.ranking_snapshots.posicao_pontualidade is 'Position on the pontualidade board (null: below the minimum sample).';
comment on column gamificacao.ranking_snapshots.posicao_qualidade is 'Position on the qualidade board.';
comment on column gamificacao.ranking_snapshots.posicao_velocidade is 'Position on the velocidade board.';
comment on column gamificacao.ranking_snapshots.posicao_atividade is 'Position on the atividade board.';
comment on column gamificacao.ranking_snapshots.posicao_confiabilidade is 'Position on the confiabilidade board.';
alter table gamificacao.ranking_snapshots enable row level security;

/** Stores every technician's positions on the boards of the period (kind and first day) as of now. */
create function gamificacao.capturar_snapshot_periodo(p_periodo text, p_inicio date, p_momento timestamptz) returns integer
language plpgsql set search_path = '' as $$
declare
  v_linhas integer;
begin
  insert into gamificacao.ranking_snapshots as s (
    periodo, periodo_inicio, usuario_id, capturado_em, cidade_id, nivel_ordem, pontos,
    posicao_nacional, posicao_nivel, posicao_local,
    posicao_pontualidade, posicao_qualidade, posicao_velocidade, posicao_atividade, posicao_confiabilidade)
  select p_periodo, p_inicio, coalesce(q.usuario_id, c.usuario_id), p_momento, coalesce(q.cidade_id, tc.cidade_id),
    coalesce(q.nivel_ordem, nv.ordem), q.pontos, q.nacional, q.nivel, q.local,
    c.pontualidade, c.qualidade, c.velocidade, c.atividade, c.confiabilidade
  from (
    select t.usuario_id, t.cidade_id, t.nivel_ordem, t.pontos,
      row_number() over (order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id) as nacional,
      row_number() over (partition by t.nivel_ordem order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id) as nivel,
      row_number() over (partition by t.cidade_id order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id) as local
    from gamificacao.totais_periodo t
    where t.periodo = p_periodo and t.periodo_inicio = p_inicio
  ) q
  full join (
    select r.usuario_id,
      max(r.posicao) filter (where r.categoria = 'pontualidade') as pontualidade,
      max(r.posicao) filter (where r.categoria = 'qualidade') as qualidade,
      max(r.posicao) filter (where r.categoria = 'velocidade') as velocidade,
      max(r.posicao) filter (where r.categoria = 'atividade') as atividade,
      max(r.posicao) filter (where r.categoria = 'confiabilidade') as confiabilidade
    from gamificacao.ranking_categorias r
    where r.periodo = p_periodo and r.periodo_inicio = p_inicio
    group by r.usuario_id
  ) c on c.usuario_id = q.usuario_id
  join public.tecnicos tc on tc.id = coalesce(q.usuario_id, c.usuario_id)
  join public.niveis nv on nv.slug = tc.nivel
  on conflict (periodo, periodo_inicio, usuario_id) do update set
    capturado_em = excluded.capturado_em, cidade_id = excluded.cidade_id, nivel_ordem = excluded.nivel_ordem,
    pontos = excluded.pontos, posicao_nacional = excluded.posicao_nacional, posicao_nivel = excluded.posicao_nivel,
    posicao_local = excluded.posicao_local, posicao_pontualidade = excluded.posicao_pontualidade,
    posicao_qualidade = excluded.posicao_qualidade, posicao_velocidade = excluded.posicao_velocidade,
    posicao_atividade = excluded.posicao_atividade, posicao_confiabilidade = excluded.posicao_confiabilidade;
  get diagnostics v_linhas = row_count;
  return v_linhas;
end;
$$;
comment on function gamificacao.capturar_snapshot_periodo(text, date, timestamptz) is
  'Snapshots every technician''s positions on the points and category boards of one period.';

/**
 * Awards the month-close ranking badges (regra_tipo ranking_mensal) from the closed month's final
 * snapshot; returns how many it awarded. A local board counts only with at least regra_amostra
 * technicians on it.
 */
create function gamificacao.premiar_fechamento_mensal(p_mes date, p_momento timestamptz) returns integer
language plpgsql set search_path = '' as $$
declare
  v_premiados integer;
begin
  with elegiveis as (
    select s.usuario_id, b.codigo
    from gamificacao.ranking_snapshots s
    join public.badges b on b.ativo and b.regra_tipo = 'ranking_mensal'
    where s.periodo = 'mensal' and s.periodo_inicio = p_mes
      and case b.regra_escopo
        when 'nacional' then s.posicao_nacional <= b.regra_minimo
        else s.posicao_local <= b.regra_minimo and (
          select count(*) from gamificacao.ranking_snapshots o
          where o.periodo = 'mensal' and o.periodo_inicio = p_mes and o.cidade_id = s.cidade_id and o.posicao_local is not null
        ) >= coalesce(b.regra_amostra, 1)
      end
  ), premiados as (
    insert into public.usuario_badges (usuario_id, badge_codigo, conquistado_em, periodo_inicio)
    select e.usuario_id, e.codigo, p_momento, p_mes from elegiveis e
    on conflict do nothing
    returning usuario_id
  ), contagem as (
    update public.tecnicos t set badges_count = t.badges_count + n.novos
    from (select p.usuario_id, count(*) as novos from premiados p group by p.usuario_id) n
    where t.id = n.usuario_id
    returning n.novos
  )
  select coalesce(sum(c.novos), 0) into v_premiados from contagem c;
  return v_premiados;
end;
$$;
comment on function gamificacao.premiar_fechamento_mensal(date, timestamptz) is
  'Awards the ranking_mensal badges from a closed month''s final positions.';

/**
 * The daily job: refreshes the category boards, snapshots every period kind's current period and,
 * when a period closed since yesterday, that period too; on the first day of a month it then
 * awards the month-close badges. Returns the snapshot rows written.
 */
create function gamificacao.capturar_snapshots(p_momento timestamptz default now()) returns integer
language plpgsql set search_path = '' as $$
declare
  v_periodo text;
  v_inicio date;
  v_linhas integer := 0;
  v_mes_fechado date := gamificacao.inicio_periodo('mensal', p_momento - interval '1 day');
begin
  perform gamificacao.atualizar_rankings_categorias(p_momento, true);
  for v_periodo, v_inicio in
    select distinct p.periodo, i.inicio
    from gamificacao.periodos p
    cross join lateral (values
      (gamificacao.inicio_periodo(p.periodo, p_momento)),
      (gamificacao.inicio_periodo(p.periodo, p_momento - interval '1 day'))) i (inicio)
    order by 1, 2
  loop
    v_linhas := v_linhas + gamificacao.capturar_snapshot_periodo(v_periodo, v_inicio, p_momento);
  end loop;
  if v_mes_fechado <> gamificacao.inicio_periodo('mensal', p_momento) then
    perform gamificacao.premiar_fechamento_mensal(v_mes_fechado, p_momento);
  end if;
  return v_linhas;
end;
$$;
comment on function gamificacao.capturar_snapshots(timestamptz) is
  'Daily job: category refresh, snapshots of the current and just-closed periods, month-close badges.';

select cron.schedule('gamificacao-snapshots', '5 3 * * *', $$select gamificacao.capturar_snapshots()$$);
