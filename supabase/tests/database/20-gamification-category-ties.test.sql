-- Gamification category boards on a generated data set full of ties: the boards the incremental
-- job ranks from its kept statistics equal the reference recount from every call
-- (gamificacao.recalcular_quadros_categorias) on every current period, when built and after
-- changes that make, keep and break ties. Technicians share one of twelve call patterns, so whole
-- groups tie exactly (same value, sample and last completion: usuario_id decides), patterns
-- repeated two and three times tie on the value with a larger sample, and a few seconds on one
-- call separate values that round to the same displayed valor.
begin;
select plan(15);
select testes_gamificacao.limpar();

create temporary table momentos as
select gamificacao.meia_noite_local(gamificacao.inicio_periodo('semanal', now())) as semana;

select testes_gamificacao.nova_cidade('empates-a', 1500, 50), testes_gamificacao.nova_cidade('empates-b', 1500, 50);
create temporary table tec as
select i, testes_gamificacao.novo_tecnico(case when i % 2 = 0 then 'empates-a' else 'empates-b' end, 'Empate ' || i) as id
from generate_series(1, 96) i;

/**
 * The calls of pattern `p_perfil` (0–11) for one technician, from `p_de` on, three hours apart and
 * at the same times for every technician of the pattern: a cycle of six calls (late check-ins,
 * 30–50 minute durations, ratings 1–5, a cancellation by the technician or the customer) repeated
 * 1 + p_perfil % 3 times, the cycle chosen by p_perfil / 3; odd patterns add 6 seconds to the
 * first call of each cycle.
 */
create function pg_temp.chamados_do_perfil(p_tecnico uuid, p_perfil integer, p_de timestamptz) returns void
language sql as $$
  insert into public.chamados (tecnico_id, cidade_id, latitude, longitude, agendado_para, aceito_em, checkin_em, checkout_em,
    status, cancelado_em, cancelado_por, estrelas)
  select tc.id, tc.cidade_id, -23.55, -46.63, c.agendado, c.agendado - interval '1 day',
    case when c.status = 'concluido' then c.checkin end,
    case when c.status = 'concluido' then c.checkin + (30 + 10 * ((c.k + c.b) % 3)) * interval '1 minute'
      + case when c.k = 0 and p_perfil % 2 = 1 then interval '6 seconds' else interval '0' end end,
    c.status,
    case when c.status = 'cancelado' then c.agendado end,
    case when c.status = 'cancelado' then case when c.b = 2 then 'cliente' else 'tecnico' end end,
    case when c.status = 'concluido' then (1 + (c.k + 2 * c.b) % 5)::smallint end
  from public.tecnicos tc
  cross join generate_series(1, 6 * (1 + p_perfil % 3)) j
  cross join lateral (select j % 6 as k, p_perfil / 3 as b, p_de + j * interval '3 hours' as agendado) x
  cross join lateral (select x.*,
    case when (x.k = 5 and x.b in (1, 3)) or (x.k = 4 and x.b = 2) then 'cancelado' else 'concluido' end as status,
    x.agendado + case when x.k < x.b then interval '30 minutes' else interval '5 minutes' end as checkin) c
  where tc.id = p_tecnico
$$;

/** One period's boards and rating mean, as a comparable set of rows. */
create function pg_temp.quadros(p_periodo text, p_inicio date) returns table (categoria text, posicao integer, usuario_id uuid, valor numeric, amostras integer)
language sql as $$
  select r.categoria, r.posicao, r.usuario_id, r.valor, r.amostras from gamificacao.ranking_categorias r
  where r.periodo = p_periodo and r.periodo_inicio = p_inicio
  union all
  select 'media_estrelas', 0, null, c.media_estrelas, 0 from gamificacao.ranking_categorias_calculos c
  where c.periodo = p_periodo and c.periodo_inicio = p_inicio
$$;

/** Rows in which the current periods' boards as the job left them differ from the reference recount (both ways). */
create function pg_temp.diferencas_atuais() returns bigint
language plpgsql as $$
declare
  v_periodo text;
  v_inicio date;
  v_diferencas bigint := 0;
  v_linhas bigint;
begin
  for v_periodo in select p.periodo from gamificacao.periodos p loop
    v_inicio := gamificacao.inicio_periodo(v_periodo, now());
    create temporary table quadros_do_job on commit drop as select * from pg_temp.quadros(v_periodo, v_inicio);
    perform gamificacao.recalcular_quadros_categorias(v_periodo, v_inicio, now());
    select count(*) into v_linhas from (
      (select * from quadros_do_job except all select * from pg_temp.quadros(v_periodo, v_inicio))
      union all
      (select * from pg_temp.quadros(v_periodo, v_inicio) except all select * from quadros_do_job)) d;
    drop table quadros_do_job;
    v_diferencas := v_diferencas + v_linhas;
  end loop;
  return v_diferencas;
end;
$$;

/** Groups of two or more technicians on one week board sharing valor and sample (only usuario_id, or atividade's last completion, orders them). */
create function pg_temp.empates_exatos(p_categoria text) returns integer
language sql as $$
  select count(*)::int from (
    select 1 from gamificacao.ranking_categorias r
    where r.categoria = p_categoria and r.periodo = 'semanal' and r.periodo_inicio = gamificacao.inicio_periodo('semanal', now())
    group by r.valor, r.amostras having count(*) > 1) g
$$;

/** Displayed values on one week board shared by technicians with different samples (the sample, or the unrounded value, orders them). */
create function pg_temp.empates_de_valor(p_categoria text) returns integer
language sql as $$
  select count(*)::int from (
    select 1 from gamificacao.ranking_categorias r
    where r.categoria = p_categoria and r.periodo = 'semanal' and r.periodo_inicio = gamificacao.inicio_periodo('semanal', now())
    group by r.valor having count(distinct r.amostras) > 1) g
$$;

select pg_temp.chamados_do_perfil(t.id, t.i % 12, m.semana) from tec t cross join momentos m;

-- Built from the calls -------------------------------------------------------------------------
select is(gamificacao.atualizar_rankings_categorias(), 4, 'The first run builds and ranks every current period');
select is((select count(distinct r.usuario_id)::int from gamificacao.ranking_categorias r
  where r.periodo = 'semanal' and r.periodo_inicio = gamificacao.inicio_periodo('semanal', now())), 96,
  'Every technician is on the week''s boards');
select ok(pg_temp.empates_exatos('pontualidade') >= 8 and pg_temp.empates_exatos('velocidade') >= 8
  and pg_temp.empates_exatos('confiabilidade') >= 6 and pg_temp.empates_exatos('qualidade') >= 8,
  'Whole groups tie exactly on value and sample');
create temporary table atividade_semana as
select r.valor, e.ultima_conclusao from gamificacao.ranking_categorias r join gamificacao.estatisticas_categorias e
  on e.periodo = r.periodo and e.periodo_inicio = r.periodo_inicio and e.usuario_id = r.usuario_id
where r.categoria = 'atividade' and r.periodo = 'semanal' and r.periodo_inicio = gamificacao.inicio_periodo('semanal', now());
select ok((select count(*) from (select 1 from atividade_semana group by valor, ultima_conclusao having count(*) > 1) g) >= 8
  and (select count(*) from (select 1 from atividade_semana group by valor having count(distinct ultima_conclusao) > 1) g) >= 2,
  'Atividade groups tie on concluded calls, some broken by the last completion and some only by usuario_id');
select ok(pg_temp.empates_de_valor('pontualidade') >= 2 and pg_temp.empates_de_valor('confiabilidade') >= 1
  and pg_temp.empates_de_valor('velocidade') >= 2,
  'Technicians with different samples share a displayed value');
select ok((select count(*) from gamificacao.ranking_categorias r
    where r.categoria = 'velocidade' and r.periodo = 'semanal' and r.periodo_inicio = gamificacao.inicio_periodo('semanal', now())
      and r.valor = 40.0) >= 20,
  'Velocidade values a few seconds apart round to one displayed value');
select is(pg_temp.diferencas_atuais(), 0::bigint, 'The built boards equal the reference recount on every current period');

-- Changes that make, keep and break ties -------------------------------------------------------
-- Technician 1 (pattern 1) takes pattern 5's calls and joins that group's tie.
delete from public.chamados where tecnico_id = (select id from tec where i = 1);
select pg_temp.chamados_do_perfil(t.id, 5, m.semana) from tec t cross join momentos m where t.i = 1;
-- Every technician of pattern 4 rates one call higher: the group moves together and stays tied.
update public.chamados ch set estrelas = 5
from tec t, momentos m where ch.tecnico_id = t.id and t.i % 12 = 4 and ch.agendado_para = m.semana + interval '3 hours';
-- One technician of pattern 7 checks in late once more and one of pattern 8 loses a conclusion:
-- each leaves its group's tie.
update public.chamados ch set checkin_em = ch.agendado_para + interval '40 minutes', checkout_em = ch.agendado_para + interval '80 minutes'
from momentos m where ch.tecnico_id = (select id from tec where i = 7) and ch.agendado_para = m.semana + interval '6 hours';
update public.chamados ch set status = 'cancelado', cancelado_em = ch.agendado_para, cancelado_por = 'tecnico',
  checkin_em = null, checkout_em = null, estrelas = null
from momentos m where ch.tecnico_id = (select id from tec where i = 8) and ch.agendado_para = m.semana + interval '9 hours';
-- One technician of pattern 9 loses their last call: a new last completion decides atividade.
delete from public.chamados ch
where ch.tecnico_id = (select id from tec where i = 9) and ch.agendado_para = (select max(c.agendado_para) from public.chamados c
  where c.tecnico_id = ch.tecnico_id);

select is(gamificacao.atualizar_rankings_categorias(), 4, 'After the changes the job ranks every current period again');
select is(pg_temp.diferencas_atuais(), 0::bigint, 'and the boards equal the reference recount on every current period');
select is((select count(*)::int from gamificacao.ranking_categorias r
  where r.categoria = 'pontualidade' and r.periodo = 'semanal' and r.periodo_inicio = gamificacao.inicio_periodo('semanal', now())
    and (r.valor, r.amostras) = (select r5.valor, r5.amostras from gamificacao.ranking_categorias r5
      where r5.categoria = 'pontualidade' and r5.periodo = r.periodo and r5.periodo_inicio = r.periodo_inicio
        and r5.usuario_id = (select id from tec where i = 5))),
  9, 'Technician 1 now ties with the eight technicians of pattern 5');
select ok(pg_temp.empates_exatos('qualidade') >= 6, 'Groups still tie exactly after the changes');

-- A new rating mean -------------------------------------------------------------------------------
-- Pattern 0's technicians rate every call at 3 and pattern 3's at 4: the mean C moves, and so
-- does every qualidade value, while the tied groups stay tied.
update public.chamados ch set estrelas = 3 from tec t where ch.tecnico_id = t.id and t.i % 12 = 0 and ch.status = 'concluido';
update public.chamados ch set estrelas = 4 from tec t where ch.tecnico_id = t.id and t.i % 12 = 3 and ch.status = 'concluido';
select is(gamificacao.atualizar_rankings_categorias(), 4, 'A change to the ratings ranks every current period again');
select is(pg_temp.diferencas_atuais(), 0::bigint, 'and the boards equal the reference recount');

-- A run with nothing changed ---------------------------------------------------------------------
select is(gamificacao.atualizar_rankings_categorias(), 0, 'A run with nothing changed ranks nothing');
select ok((select count(*) from gamificacao.ranking_categorias r
  where r.periodo = 'semanal' and r.periodo_inicio = gamificacao.inicio_periodo('semanal', now())) > 300,
  'The week''s boards stay well filled');

select * from finish();
rollback;
