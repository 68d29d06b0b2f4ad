import { beforeAll, describe, expect, it } from "vitest";
import { env } from "../helpers/env.ts";
import { callApi, type ApiAnswer } from "./api.ts";
import { createCall, createCity, createTechnician, runJob, type Technician } from "./factories.ts";
import { specViolations } from "./openapi.ts";

interface Entry {
  posicao: number;
  usuario_id: string;
  nome: string;
  pontos: number;
  nivel: string;
  variacao_posicao: number;
  valor?: number;
}

async function ranking(path: string, spec: string, token: string, query: Record<string, string | number> = {}): Promise<ApiAnswer> {
  const answer = await callApi("GET", path, { token, query });
  expect(specViolations("GET", spec, answer)).toEqual([]);
  return answer;
}

const local = (token: string, query: Record<string, string | number> = {}) => ranking("/rankings/local", "/api/v1/gamification/rankings/local", token, query);
const nacional = (token: string, query: Record<string, string | number> = {}) =>
  ranking("/rankings/nacional", "/api/v1/gamification/rankings/nacional", token, query);
const categoria = (nome: string, token: string, query: Record<string, string | number> = {}) =>
  ranking(`/rankings/categoria/${nome}`, "/api/v1/gamification/rankings/categoria/{categoria}", token, query);

function entries(answer: ApiAnswer): Entry[] {
  return answer.body.data?.ranking as Entry[];
}

/** Scores `vezes` concluded calls for a technician through the API. */
async function concludeCalls(technician: Technician, vezes: number): Promise<void> {
  for (let i = 0; i < vezes; i += 1) {
    const chamado = await createCall(technician);
    const answer = await callApi("POST", "/points", { token: technician.accessToken, body: { usuario_id: technician.id, acao: "chamado_concluido", chamado_id: chamado } });
    expect(answer.status).toBe(200);
  }
}

describe("rankings", () => {
  const nome = `Vila ${crypto.randomUUID().slice(0, 6)}`;
  let cidade: string;
  let joana: Technician;
  let kaio: Technician;
  let lia: Technician;

  beforeAll(async () => {
    cidade = await createCity(nome);
    [joana, kaio, lia] = await Promise.all([createTechnician(cidade, "Joana"), createTechnician(cidade, "Kaio"), createTechnician(cidade, "Lia")]);
    await concludeCalls(joana, 3);
    await concludeCalls(kaio, 2);
    await concludeCalls(lia, 1);
  });

  describe("text Postgres cannot store", () => {
    it.each([
      ["a NUL as the city", "/rankings/local", { cidade: "\u0000" }, "cidade"],
      ["a NUL inside the city", "/rankings/local", { cidade: "São\u0000Paulo" }, "cidade"],
      ["a NUL as the category", "/rankings/categoria/%00", {}, "categoria"],
      ["a NUL as the national level", "/rankings/nacional", { categoria: "\u0000" }, "categoria"],
    ])("refuses %s with 400 PARAMETRO_INVALIDO naming the field, through both base paths", async (_what, path, query, campo) => {
      for (const via of ["functions", "root"] as const) {
        const answer = await callApi("GET", path, { token: joana.accessToken, query, via });
        expect(answer.status).toBe(400);
        expect(answer.body.error).toMatchObject({ codigo: "PARAMETRO_INVALIDO", detalhes: [{ campo }] });
      }
    });
  });

  describe("GET /rankings/local", () => {
    it("ranks the caller's city by points in the month, with meta and the caller's position", async () => {
      const answer = await local(kaio.accessToken);
      expect(answer.status).toBe(200);
      expect(entries(answer).map((entry) => [entry.posicao, entry.nome])).toEqual([[1, "Joana"], [2, "Kaio"], [3, "Lia"]]);
      const [first, second] = entries(answer);
      expect(answer.body.data?.posicao_usuario).toEqual({ posicao: 2, pontos: second.pontos, distancia_proximo: first.pontos - second.pontos });
      expect(answer.body.data?.meta).toMatchObject({ cidade: nome, cidade_id: cidade, periodo: "mensal", total_tecnicos: 3 });
    });

    it("finds the city by name, pages with limit and offset, and takes every period", async () => {
      const page = await local(joana.accessToken, { cidade: nome.toUpperCase(), limit: 1, offset: 1 });
      expect(entries(page).map((entry) => [entry.posicao, entry.nome])).toEqual([[2, "Kaio"]]);
      for (const periodo of ["semanal", "anual", "geral"]) {
        expect(entries(await local(joana.accessToken, { cidade, periodo }))[0].nome, periodo).toBe("Joana");
      }
    });

    it("gives posicao_usuario null to a caller with no points on the board", async () => {
      const other = await createCity();
      const mia = await createTechnician(other, "Mia");
      const answer = await local(mia.accessToken, { cidade });
      expect(answer.body.data?.posicao_usuario).toBeNull();
      expect((await local(mia.accessToken)).body.data?.ranking).toEqual([]);
    });

    it("shows variacao_posicao against the last daily snapshot", async () => {
      await runJob("capturar_snapshots");
      await concludeCalls(lia, 3);
      const answer = await local(lia.accessToken, { cidade });
      expect(entries(answer).map((entry) => [entry.nome, entry.variacao_posicao])).toEqual([["Lia", 2], ["Joana", -1], ["Kaio", -1]]);
    });

    it.each([
      [{ cidade: "Atlântida Perdida" }, 404, "CIDADE_NAO_ENCONTRADA"],
      [{ periodo: "bimestral" }, 400, "PARAMETRO_INVALIDO"],
      [{ limit: 0 }, 400, "PARAMETRO_INVALIDO"],
      [{ limit: 101 }, 400, "PARAMETRO_INVALIDO"],
    ])("answers %j with %i %s", async (query, status, codigo) => {
      const answer = await local(joana.accessToken, query);
      expect([answer.status, answer.body.error?.codigo]).toEqual([status, codigo]);
    });

    it("asks the service role which city", async () => {
      const answer = await local(env.serviceRoleKey);
      expect([answer.status, answer.body.error?.codigo]).toEqual([400, "PARAMETRO_INVALIDO"]);
    });
  });

  describe("GET /rankings/nacional", () => {
    it("ranks everyone by points, best first, and places the caller", async () => {
      const answer = await nacional(joana.accessToken, { limit: 100 });
      expect(answer.status).toBe(200);
      const list = entries(answer);
      expect(list.map((entry) => entry.posicao)).toEqual(list.map((_, index) => index + 1));
      expect(list.every((entry, index) => index === 0 || list[index - 1].pontos >= entry.pontos)).toBe(true);
      const mine = answer.body.data?.posicao_usuario as { posicao: number; pontos: number };
      const listed = list.find((entry) => entry.usuario_id === joana.id);
      if (listed) expect([listed.posicao, listed.pontos]).toEqual([mine.posicao, mine.pontos]);
      expect(mine.posicao).toBeLessThanOrEqual((answer.body.data?.meta as { total_tecnicos: number }).total_tecnicos);
    });

    it("filters by level with categoria", async () => {
      const answer = await nacional(joana.accessToken, { categoria: "iniciante", periodo: "geral", limit: 100 });
      expect(entries(answer).every((entry) => entry.nivel === "Iniciante")).toBe(true);
      expect(answer.body.data?.meta).toMatchObject({ categoria: "iniciante", nivel: "Iniciante", periodo: "geral" });
    });

    it("answers 404 NIVEL_NAO_ENCONTRADO for an unknown level and 400 for a malformed one", async () => {
      expect((await nacional(joana.accessToken, { categoria: "lendario" })).body.error?.codigo).toBe("NIVEL_NAO_ENCONTRADO");
      expect((await nacional(joana.accessToken, { categoria: "Master Tech" })).status).toBe(400);
    });
  });

  describe("GET /rankings/categoria/{categoria}", () => {
    beforeAll(async () => {
      await runJob("atualizar_rankings_categorias");
    });

    it("ranks atividade by concluded calls and reports the raw metric", async () => {
      const answer = await categoria("atividade", joana.accessToken, { limit: 100 });
      expect(answer.status).toBe(200);
      const list = entries(answer);
      expect(list.every((entry, index) => index === 0 || (list[index - 1].valor ?? 0) >= (entry.valor ?? 0))).toBe(true);
      expect(answer.body.data?.meta).toMatchObject({ categoria: "atividade", ordem: "desc", amostra_minima: 1 });
    });

    it("answers every category and period", async () => {
      for (const nomeCategoria of ["pontualidade", "qualidade", "velocidade", "atividade", "confiabilidade"]) {
        for (const periodo of ["semanal", "mensal", "anual", "geral"]) {
          expect((await categoria(nomeCategoria, joana.accessToken, { periodo, limit: 5 })).status, `${nomeCategoria} ${periodo}`).toBe(200);
        }
      }
    });

    it("answers 404 CATEGORIA_NAO_ENCONTRADA for an unknown category", async () => {
      const answer = await categoria("simpatia", joana.accessToken);
      expect([answer.status, answer.body.error?.codigo]).toEqual([404, "CATEGORIA_NAO_ENCONTRADA"]);
    });
  });
});
