import { beforeAll, describe, expect, it } from "vitest";
import { env } from "../helpers/env.ts";
import { callApi, type ApiAnswer } from "./api.ts";
import { createCall, createCity, createTechnician, reading, type Technician } from "./factories.ts";
import { specViolations } from "./openapi.ts";

const HISTORY = "/api/v1/gamification/points/history";

async function history(token: string, query: Record<string, string | number> = {}): Promise<ApiAnswer> {
  const answer = await callApi("GET", "/points/history", { token, query });
  expect(specViolations("GET", HISTORY, answer)).toEqual([]);
  return answer;
}

describe("GET /api/v1/gamification/points/history", () => {
  let fabi: Technician;
  let gui: Technician;

  beforeAll(async () => {
    const cidade = await createCity();
    [fabi, gui] = await Promise.all([createTechnician(cidade, "Fabi"), createTechnician(cidade, "Gui")]);
    const [aberto, concluido, avaliado] = await Promise.all([
      createCall(fabi, { status: "em_andamento", agendadoPara: new Date(Date.now() - 5 * 60_000) }),
      createCall(fabi),
      createCall(fabi, { estrelas: 5 }),
    ]);
    for (const body of [
      { acao: "checkin_pontual", chamado_id: aberto, metadata: reading(new Date(Date.now() - 60_000)) },
      { acao: "chamado_concluido", chamado_id: concluido },
      { acao: "chamado_concluido", chamado_id: avaliado },
      { acao: "avaliacao_5_estrelas", chamado_id: avaliado },
    ]) {
      const answer = await callApi("POST", "/points", { token: fabi.accessToken, body: { usuario_id: fabi.id, ...body } });
      expect(answer.status).toBe(200);
    }
  });

  it("lists the caller's actions newest first, with every field, a summary and pagination", async () => {
    const answer = await history(fabi.accessToken, { periodo: "7d", limit: 3 });
    expect(answer.status).toBe(200);
    const data = answer.body.data as { historico: { acao: string; pontos_final: number }[]; resumo: Record<string, unknown>; paginacao: Record<string, unknown> };
    expect(data.historico.map((item) => item.acao)).toEqual(["avaliacao_5_estrelas", "chamado_concluido", "chamado_concluido"]);
    expect(data.paginacao).toEqual({ limit: 3, offset: 0, total: 4, has_next: true });
    expect(data.resumo).toMatchObject({ total_acoes: 4, acao_mais_frequente: "chamado_concluido" });
    const total = data.resumo.total_pontos_periodo as number;
    expect(data.resumo.media_pontos_dia).toBeCloseTo(total / 7, 2);
  });

  it("pages with offset until has_next is false", async () => {
    const answer = await history(fabi.accessToken, { limit: 3, offset: 3 });
    expect(answer.body.data?.paginacao).toEqual({ limit: 3, offset: 3, total: 4, has_next: false });
    expect(answer.body.data?.historico).toHaveLength(1);
  });

  it("summarises an empty period with zeros and no most frequent action", async () => {
    const answer = await history(gui.accessToken, { periodo: "1d" });
    expect(answer.body.data?.resumo).toEqual({ total_pontos_periodo: 0, total_acoes: 0, media_pontos_dia: 0, acao_mais_frequente: null });
  });

  it.each([
    [{ periodo: "30" }, "periodo"],
    [{ periodo: "400d" }, "periodo"],
    [{ limit: 0 }, "limit"],
    [{ limit: 101 }, "limit"],
    [{ offset: -1 }, "offset"],
    [{ usuario_id: "abc" }, "usuario_id"],
  ])("answers 400 PARAMETRO_INVALIDO for %j", async (query, campo) => {
    const answer = await history(fabi.accessToken, query);
    expect(answer.status).toBe(400);
    expect(answer.body.error?.codigo).toBe("PARAMETRO_INVALIDO");
    expect(answer.body.error?.detalhes).toEqual([expect.objectContaining({ campo })]);
  });

  it("answers 403 SEM_PERMISSAO for another technician's history", async () => {
    const answer = await history(gui.accessToken, { usuario_id: fabi.id });
    expect([answer.status, answer.body.error?.codigo]).toEqual([403, "SEM_PERMISSAO"]);
  });

  it("lets the service role read anyone's history, and answers 404 for an unknown technician", async () => {
    expect((await history(env.serviceRoleKey, { usuario_id: fabi.id })).body.data?.paginacao).toMatchObject({ total: 4 });
    const unknown = await history(env.serviceRoleKey, { usuario_id: crypto.randomUUID() });
    expect([unknown.status, unknown.body.error?.codigo]).toEqual([404, "TECNICO_NAO_ENCONTRADO"]);
  });
});
