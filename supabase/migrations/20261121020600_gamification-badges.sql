-- Gamification: evaluating badge rules when an action is scored.
--
-- Event-driven badges are evaluated inside the scoring transaction, right after the history row
-- and the counters are written, so the POST can answer with `badges_conquistados`. A rule is
-- evaluated only when the action changed an input it reads (its action's count, the level, the
-- week's days, the early readings, the ratings), and only for badges the technician does not hold
-- yet: every scoring evaluates what it changed, so a rule that reads nothing new cannot have become
-- true since the last evaluation. The caveat: a rule whose threshold is lowered (or a badge turned
-- active) takes effect at the next scoring that changes one of its inputs. Month-close ranking
-- badges (`ranking_mensal`) are awarded by the snapshot job instead.

/**
 * Whether `p_badge`'s rule holds for the technician right after the scored action `p_historico`
 * (already inserted, its period totals already updated), for the rule kinds that read history or
 * calls: acao_antes_da_hora, dias_na_semana and media_avaliacoes (gamificacao.avaliar_badges
 * checks the others inline).
 */
create function gamificacao.badge_conquistado(p_badge public.badges, p_historico public.historico_pontos, p_acao public.acoes)
returns boolean
language plpgsql stable set search_path = '' as $$
declare
  v_leitura timestamptz;
  v_quantidade bigint;
  v_media numeric;
begin
  case p_badge.regra_tipo
    when 'acao_antes_da_hora' then
      v_leitura := (p_historico.metadata ->> 'timestamp_checkin')::timestamptz;
      if v_leitura is null or extract(hour from gamificacao.hora_local(v_leitura)) >= p_badge.regra_hora then
        return false;
      end if;
      select count(*) into v_quantidade from public.historico_pontos h
      where h.usuario_id = p_historico.usuario_id and h.acao = p_badge.regra_acao
        and extract(hour from gamificacao.hora_local((h.metadata ->> 'timestamp_checkin')::timestamptz)) < p_badge.regra_hora;
      return v_quantidade >= p_badge.regra_minimo;

    when 'dias_na_semana' then
      -- The week's days change only with the day's first such action: a later one the same local
      -- day adds no day, and the first was evaluated when it was scored (one index probe).
      if exists (select 1 from public.historico_pontos h
                 where h.usuario_id = p_historico.usuario_id and h.id <> p_historico.id and h.acao = p_badge.regra_acao
                   and h.data_acao >= gamificacao.meia_noite_local(gamificacao.hora_local(p_historico.data_acao)::date)
                   and h.data_acao <= p_historico.data_acao) then
        return false;
      end if;
      -- Fewer scorings this week (of any action) than the days the rule asks for cannot make it:
      -- one read of the week's totals row spares most calls the scan of the week's history.
      select t.acoes into v_quantidade from gamificacao.totais_periodo t
      where t.usuario_id = p_historico.usuario_id and t.periodo = 'semanal'
        and t.periodo_inicio = gamificacao.inicio_periodo('semanal', p_historico.data_acao);
      if coalesce(v_quantidade, 0) < p_badge.regra_minimo then
        return false;
      end if;
      select count(distinct gamificacao.hora_local(h.data_acao)::date) into v_quantidade from public.historico_pontos h
      where h.usuario_id = p_historico.usuario_id and h.acao = p_badge.regra_acao
        and h.data_acao >= gamificacao.meia_noite_local(gamificacao.inicio_periodo('semanal', p_historico.data_acao))
        and h.data_acao <= p_historico.data_acao;
      return v_quantidade >= p_badge.regra_minimo;

    when 'media_avaliacoes' then
      -- Ratings live on the calls (the back office records them); only a rating action can move the average.
      if p_acao.estrelas_exigidas is null then
        return false;
      end if;
      select count(ch.estrelas), avg(ch.estrelas) into v_quantidade, v_media from public.chamados ch
      where ch.tecnico_id = p_historico.usuario_id and ch.estrelas is not null
        and ch.checkout_em > p_historico.data_acao - make_interval(days => p_badge.regra_janela_dias)
        and ch.checkout_em <= p_historico.data_acao;
      return v_quantidade >= coalesce(p_badge.regra_amostra, 1) and v_media >= p_badge.regra_minimo;

    else
      return false;
  end case;
end;
$$;
comment on function gamificacao.badge_conquistado(public.badges, public.historico_pontos, public.acoes) is
  'Evaluates a badge rule that reads history or calls (acao_antes_da_hora, dias_na_semana, media_avaliacoes).';

/**
 * The badges that scoring `p_historico` (action `p_acao`, level ordem `p_nivel_antes` before it and
 * `p_nivel_depois` after it, the action's count `p_contagem` after it) awards and the technician
 * lacks: inserted into public.usuario_badges and returned as a JSON array (empty when none). Only
 * the rules whose input the action changed are evaluated (see the header). The caller adds their
 * number to public.tecnicos.badges_count in its own update of the technician.
 */
create function gamificacao.avaliar_badges(
  p_historico public.historico_pontos, p_acao public.acoes, p_nivel_antes smallint, p_nivel_depois smallint, p_contagem integer
) returns jsonb
language plpgsql set search_path = '' as $$
declare
  v_novos jsonb;
begin
  -- One statement: the held badges are a primary-key probe per candidate, not a read of them all.
  with premiados as (
    insert into public.usuario_badges (usuario_id, badge_codigo, conquistado_em, historico_id)
    select p_historico.usuario_id, b.codigo, p_historico.data_acao, p_historico.id
    from public.badges b
    where b.ativo and b.regra_tipo <> 'ranking_mensal'
      and (b.regra_acao is null or b.regra_acao = p_historico.acao)
      -- A level rule reads the level alone, which most scorings leave as it was.
      and (b.regra_tipo <> 'nivel' or p_nivel_depois > p_nivel_antes)
      and not exists (select 1 from public.usuario_badges ub where ub.usuario_id = p_historico.usuario_id and ub.badge_codigo = b.codigo)
      and case b.regra_tipo
        when 'contagem_acao' then p_contagem >= b.regra_minimo
        when 'tier_cidade' then p_historico.tier >= b.regra_minimo
        -- The scorer is active in the city even if the daily job has not counted them yet.
        when 'tecnicos_ativos' then greatest(p_historico.tecnicos_ativos, 1) <= b.regra_minimo
        when 'nivel' then p_nivel_depois >= b.regra_minimo
        when 'media_avaliacoes' then case when p_acao.estrelas_exigidas is null then false else gamificacao.badge_conquistado(b, p_historico, p_acao) end
        else gamificacao.badge_conquistado(b, p_historico, p_acao)
      end
    on conflict do nothing
    returning badge_codigo
  )
  select jsonb_agg(jsonb_build_object(
      'codigo', b.codigo, 'nome', b.nome, 'categoria', b.categoria, 'descricao', b.descricao,
      'icone', b.icone, 'conquistado_em', p_historico.data_acao) order by b.codigo)
  into v_novos
  from premiados p join public.badges b on b.codigo = p.badge_codigo;
  return coalesce(v_novos, '[]'::jsonb);
end;
$$;
comment on function gamificacao.avaliar_badges(public.historico_pontos, public.acoes, smallint, smallint, integer) is
  'Awards the badges an action earns (usuario_badges), evaluating only the rules whose input it changed, and returns them; the caller counts them on the technician.';
