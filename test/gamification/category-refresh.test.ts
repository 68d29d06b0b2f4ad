/**
 * Two recomputations of the same period's category boards at once (the 5-minute job and a read
 * that found the period never computed, or an operator) must both succeed: the second waits for
 * the first and replaces its rows.
 */
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { env } from "../helpers/env.ts";

const first = postgres(env.dbUrl, { max: 1, onnotice: () => {} });
const second = postgres(env.dbUrl, { max: 1, onnotice: () => {} });

afterAll(async () => {
  await Promise.all([first.end(), second.end()]);
});

describe("gamificacao.calcular_rankings_categorias", () => {
  it("lets a second run for the same period wait for the first instead of failing on its rows", async () => {
    const [{ period }] = await first<{ period: string }[]>`select gamificacao.inicio_periodo('mensal', now())::text as period`;
    let secondDone = false;
    let secondRun: Promise<unknown> = Promise.resolve();
    await first.begin(async (tx) => {
      await tx`select gamificacao.calcular_rankings_categorias('mensal', ${period}::date, now())`;
      secondRun = second`select gamificacao.calcular_rankings_categorias('mensal', ${period}::date, now())`.then(() => {
        secondDone = true;
      });
      // Long enough for the second run to reach the first one's uncommitted rows, were it not waiting.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(secondDone).toBe(false);
    });
    await expect(secondRun).resolves.toBeUndefined();
    const [{ linhas }] = await first<{ linhas: number }[]>`
      select count(*)::int as linhas from gamificacao.ranking_categorias where periodo = 'mensal' and periodo_inicio = ${period}::date`;
    const [{ unicas }] = await first<{ unicas: number }[]>`
      select count(distinct (categoria, usuario_id))::int as unicas from gamificacao.ranking_categorias where periodo = 'mensal' and periodo_inicio = ${period}::date`;
    expect(linhas).toBe(unicas);
    expect(linhas).toBeGreaterThan(0);
  });
});
