import { beforeAll, describe, expect, it } from "vitest";
import { env } from "../helpers/env.ts";
import { callApi } from "./api.ts";
import { createCall, createCity, createTechnician, type Technician } from "./factories.ts";
import { specViolations } from "./openapi.ts";

const BADGES = "/api/v1/gamification/badges/user/{usuario_id}";

async function badges(token: string, usuarioId: string) {
  const answer = await callApi("GET", `/badges/user/${usuarioId}`, { token });
  expect(specViolations("GET", BADGES, answer)).toEqual([]);
  return answer;
}

describe("GET /api/v1/gamification/badges/user/{usuario_id}", () => {
  let hugo: Technician;
  let iris: Technician;

  beforeAll(async () => {
    const cidade = await createCity();
    [hugo, iris] = await Promise.all([createTechnician(cidade, "Hugo"), createTechnician(cidade, "Íris")]);
    const chamado = await createCall(hugo);
    const answer = await callApi("POST", "/points", { token: hugo.accessToken, body: { usuario_id: hugo.id, acao: "chamado_concluido", chamado_id: chamado } });
    expect(answer.status).toBe(200);
  });

  it("lists the badges a technician earned, with nome, categoria and descricao", async () => {
    const answer = await badges(hugo.accessToken, hugo.id);
    expect(answer.status).toBe(200);
    expect(answer.body.data?.badges).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ codigo: "primeiro_chamado", nome: "Primeiro Chamado", categoria: "atividade", descricao: expect.any(String) }),
      ]),
    );
  });

  it("lists none for a technician without badges", async () => {
    expect((await badges(iris.accessToken, iris.id)).body.data).toEqual({ usuario_id: iris.id, badges: [] });
  });

  it("answers 403 for another technician's badges, but the service role reads them", async () => {
    expect((await badges(iris.accessToken, hugo.id)).status).toBe(403);
    expect((await badges(env.serviceRoleKey, hugo.id)).status).toBe(200);
  });

  it("answers 400 for a malformed id and 404 for someone who is not a technician", async () => {
    const malformed = await badges(hugo.accessToken, "123");
    expect([malformed.status, malformed.body.error?.codigo]).toEqual([400, "PARAMETRO_INVALIDO"]);
    const unknown = await badges(env.serviceRoleKey, crypto.randomUUID());
    expect([unknown.status, unknown.body.error?.codigo]).toEqual([404, "TECNICO_NAO_ENCONTRADO"]);
  });

  it("answers 405 with Allow for a method the path does not take", async () => {
    const answer = await callApi("DELETE", `/badges/user/${hugo.id}`, { token: hugo.accessToken });
    expect(answer.status).toBe(405);
    expect(answer.headers.get("allow")).toBe("GET");
    expect(answer.body.error?.codigo).toBe("METODO_NAO_PERMITIDO");
  });

  it("answers 404 ROTA_NAO_ENCONTRADA for a path that is not in the API", async () => {
    const answer = await callApi("GET", "/trofeus", { token: hugo.accessToken });
    expect([answer.status, answer.body.error?.codigo]).toEqual([404, "ROTA_NAO_ENCONTRADA"]);
  });
});
