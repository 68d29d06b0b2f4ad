/**
 * Positions are a full sort's rank, on every date: random boards with ties, scored at random
 * instants clustered around period boundaries (first and last second of a week, month and year,
 * New Year, 29 February, and the days São Paulo's clocks moved in 2018 and 2019), compared with
 * `row_number()` over the board's own order (points desc, last scoring asc, usuario_id asc):
 * - every scoring answer's monthly national and local position, right after it is scored, as the
 *   board shows it an instant later;
 * - every technician's position on every board the run touched (week, month, year, all time; the
 *   national, level and home-city boards), and the board pages themselves.
 *
 * The scorings run in the database at the drawn instants (`gamificacao.registrar_acao` takes the
 * moment as its clock), in one transaction per run that is rolled back, so nothing is left
 * behind. The run first takes the rank-bucket tables in the order every scoring writes them, so
 * the other suites' scorings wait for it instead of deadlocking against its held bucket rows.
 */
import fc from "fast-check";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { env } from "../helpers/env.ts";

const sql = postgres(env.dbUrl, { max: 1, onnotice: () => {} });

afterAll(async () => {
  await sql.end();
});

/** Local wall-clock instants (America/Sao_Paulo) where a period, a day or the clock itself changes. */
const ANCHORS = [
  "2030-12-31 23:59:59", // the last second of a month and a year
  "2031-01-01 00:00:00", // New Year
  "2028-02-29 00:00:00", // 29 February of a leap year
  "2028-03-01 00:00:00", // the month after it
  "2027-03-01 00:00:00", // a Monday that starts a week and a month
  "2018-11-04 01:00:00", // São Paulo's clocks jumped from 00:00 to 01:00 (DST began)
  "2019-02-16 23:30:00", // and fell back from 00:00 to 23:00 (DST ended; a 25-hour day)
  "2018-02-17 23:59:59", // the previous DST end, the last second before it
] as const;

/** One scoring: who, which action (so points tie and differ), and when relative to the anchor. */
interface Scoring {
  technician: number;
  action: number;
  offsetSeconds: number;
}

const ACTIONS = [
  { codigo: "chamado_concluido", estrelas: null, urgente: false },
  { codigo: "avaliacao_5_estrelas", estrelas: 5, urgente: false },
  { codigo: "avaliacao_4_estrelas", estrelas: 4, urgente: false },
  { codigo: "chamado_urgente_atendido", estrelas: null, urgente: true },
] as const;

// Offsets on a coarse grid (half hours up to a day and a half either side) make equal last-scoring
// instants, so the usuario_id tie-break is exercised; the seconds around 0 hit the boundary itself.
const offsetSeconds = fc.oneof(
  fc.integer({ min: -72, max: 72 }).map((halfHours) => halfHours * 1800),
  fc.integer({ min: -2, max: 1 }),
);

const board = fc.record({
  anchor: fc.constantFrom(...ANCHORS),
  technicians: fc.integer({ min: 2, max: 7 }),
  scorings: fc.array(
    fc.record({ technician: fc.nat(6), action: fc.nat(ACTIONS.length - 1), offsetSeconds }),
    { minLength: 1, maxLength: 24 },
  ),
});

/** Thrown to roll a run's transaction back once its checks passed. */
class RollBack extends Error {}

interface Mismatch {
  where: string;
  usuario: string;
  expected: number;
  got: number;
}

async function checkRun(anchor: string, technicianCount: number, scorings: Scoring[]): Promise<Mismatch[]> {
  const mismatches: Mismatch[] = [];
  try {
    await sql.begin(async (tx) => {
      await tx`lock table gamificacao.faixas_ranking, gamificacao.faixas_pontos, gamificacao.faixas_cidades in share row exclusive mode`;
      const suffix = crypto.randomUUID().slice(0, 8);
      // Two cities with fixed metrics, so every technician's action is worth the same points.
      const cities = [`prop-a-${suffix}`, `prop-b-${suffix}`];
      for (const city of cities) await tx`select testes_gamificacao.nova_cidade(${city})`;
      const technicians: string[] = [];
      for (let i = 0; i < technicianCount; i++) {
        const [{ id }] = await tx<{ id: string }[]>`select testes_gamificacao.novo_tecnico(${cities[i % 2]}, ${`Prop ${i}`}) as id`;
        technicians.push(id);
      }

      for (const scoring of scorings) {
        const usuario = technicians[scoring.technician % technicianCount];
        const action = ACTIONS[scoring.action];
        const [{ answer, momento }] = await tx<{ answer: Record<string, number>; momento: string }[]>`
          with m as (select (${anchor}::timestamp at time zone 'America/Sao_Paulo') + make_interval(secs => ${scoring.offsetSeconds}) as momento)
          select testes_gamificacao.pontuar(${usuario}, ${action.codigo},
              testes_gamificacao.novo_chamado(${usuario}, 'concluido', m.momento - interval '3 hours', ${action.estrelas}::smallint, ${action.urgente}),
              '{}', m.momento) as answer,
            m.momento::text as momento
          from m`;
        const [rank] = await tx<{ nacional: number; local: number }[]>`
          select b.nacional::int, b.local::int from (
            select t.usuario_id,
              row_number() over (order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id) as nacional,
              row_number() over (partition by t.cidade_id order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id) as local
            from gamificacao.totais_periodo t
            where t.periodo = 'mensal' and t.periodo_inicio = gamificacao.inicio_periodo('mensal', ${momento}::timestamptz)
          ) b where b.usuario_id = ${usuario}`;
        const where = `answer to ${action.codigo} at ${momento}`;
        if (answer.posicao_ranking_nacional !== rank.nacional) mismatches.push({ where: `${where} (nacional)`, usuario, expected: rank.nacional, got: answer.posicao_ranking_nacional });
        if (answer.posicao_ranking_local !== rank.local) mismatches.push({ where: `${where} (local)`, usuario, expected: rank.local, got: answer.posicao_ranking_local });
      }

      // Every board the run touched, all time included, against a full sort of the same board.
      const positions = await tx<{ periodo: string; inicio: string; usuario_id: string; board: string; expected: number; got: number }[]>`
        with tocados as (
          select distinct t.periodo, t.periodo_inicio from gamificacao.totais_periodo t where t.usuario_id = any(${technicians}::uuid[])
        ), ordenados as (
          select t.*,
            row_number() over (partition by t.periodo, t.periodo_inicio order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id) as nacional,
            row_number() over (partition by t.periodo, t.periodo_inicio, t.cidade_id order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id) as local,
            row_number() over (partition by t.periodo, t.periodo_inicio, t.nivel_ordem order by t.pontos desc, t.ultima_pontuacao_em, t.usuario_id) as nivel
          from gamificacao.totais_periodo t join tocados using (periodo, periodo_inicio)
        )
        select o.periodo, o.periodo_inicio::text as inicio, o.usuario_id, q.board, q.expected::int, q.got
        from ordenados o
        cross join lateral (values
          ('nacional', o.nacional, gamificacao.posicao('nacional', o.periodo, o.periodo_inicio, null, o.pontos, o.ultima_pontuacao_em, o.usuario_id)),
          ('local', o.local, gamificacao.posicao('local', o.periodo, o.periodo_inicio, o.cidade_id, o.pontos, o.ultima_pontuacao_em, o.usuario_id)),
          ('nivel', o.nivel, gamificacao.posicao('nivel', o.periodo, o.periodo_inicio, o.nivel_ordem::text, o.pontos, o.ultima_pontuacao_em, o.usuario_id))
        ) q (board, expected, got)
        where o.usuario_id = any(${technicians}::uuid[])`;
      for (const p of positions) {
        if (p.expected !== p.got) mismatches.push({ where: `${p.board} board ${p.periodo} ${p.inicio}`, usuario: p.usuario_id, expected: p.expected, got: p.got });
      }

      // The board pages of the run's own periods (all time holds every suite's technicians).
      const pages = await tx<{ periodo: string; inicio: string; usuario_id: string; expected: number; got: number }[]>`
        with tocados as (
          select distinct t.periodo, t.periodo_inicio from gamificacao.totais_periodo t
          where t.usuario_id = any(${technicians}::uuid[]) and t.periodo <> 'geral'
        )
        select p.periodo, p.periodo_inicio::text as inicio, e.value ->> 'usuario_id' as usuario_id,
          (e.value ->> 'posicao')::int as got, e.ordinality::int as expected
        from tocados p
        cross join lateral jsonb_array_elements(gamificacao.pagina_quadro('nacional', p.periodo, p.periodo_inicio, null, 100, 0)) with ordinality e`;
      for (const p of pages) {
        if (p.expected !== p.got) mismatches.push({ where: `page of ${p.periodo} ${p.inicio}`, usuario: p.usuario_id, expected: p.expected, got: p.got });
      }
      throw new RollBack();
    });
  } catch (error) {
    if (!(error instanceof RollBack)) throw error;
  }
  return mismatches;
}

describe("gamification positions", () => {
  it("equal a full sort's rank in every scoring answer and on every board, at random instants around period boundaries", async () => {
    await fc.assert(
      fc.asyncProperty(board, async ({ anchor, technicians, scorings }) => {
        expect(await checkRun(anchor, technicians, scorings)).toEqual([]);
      }),
      { numRuns: 40 },
    );
  }, 180_000);

  it("put a technician who leads a young month's board at position 1 in the answer to their scoring", async () => {
    // The repro of the 1 December defect: the month's first scorings, each one leading the board.
    const mismatches = await checkRun("2030-12-01 00:00:00", 2, [
      { technician: 0, action: 0, offsetSeconds: 20 * 3600 },
      { technician: 0, action: 1, offsetSeconds: 20 * 3600 + 60 },
      { technician: 1, action: 2, offsetSeconds: 21 * 3600 },
    ]);
    expect(mismatches).toEqual([]);
  });
});
