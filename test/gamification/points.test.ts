import { SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { serviceClient } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { callApi } from "./api.ts";
import { createCall, createCity, createTechnician, reading, type Technician } from "./factories.ts";
import { specViolations } from "./openapi.ts";

const POINTS = "/api/v1/gamification/points";

/** POST /points as `technician` (or with `token`), checking the answer against docs/openapi.yaml. */
async function score(token: string, body: unknown, via: "functions" | "root" = "functions") {
  const answer = await callApi("POST", "/points", { token, body, via });
  expect(specViolations("POST", POINTS, answer)).toEqual([]);
  return answer;
}

async function historyRows(technician: Technician) {
  const { data, error } = await technician.client.from("historico_pontos").select("acao, pontos_final, chamado_id");
  if (error) throw error;
  return data;
}

describe("POST /api/v1/gamification/points", () => {
  let cidade: string;
  let ana: Technician;
  let bia: Technician;

  beforeAll(async () => {
    cidade = await createCity();
    [ana, bia] = await Promise.all([createTechnician(cidade, "Ana"), createTechnician(cidade, "Bia")]);
  });

  it("scores a punctual check-in and answers every field of the score result", async () => {
    const chamado = await createCall(ana, { status: "em_andamento", agendadoPara: new Date(Date.now() - 5 * 60_000) });
    const answer = await score(ana.accessToken, { usuario_id: ana.id, acao: "checkin_pontual", chamado_id: chamado, metadata: reading(new Date(Date.now() - 60_000), 40) });
    expect(answer.status).toBe(200);
    // A new city with one call is tier 5 (x3.00) with one active technician at most (x1.45): 10 x 3 x 1.45 = 43.5 -> 44.
    expect(answer.body.data).toMatchObject({
      pontos_adicionados: 44,
      pontos_total: 44,
      nivel_atual: "Iniciante",
      subiu_nivel: false,
      badges_conquistados: [],
      posicao_ranking_local: 1,
      multiplicadores: { tier: 3, densidade: 1.45, nivel: 1 },
    });
    expect(answer.body.data?.posicao_ranking_nacional).toBeGreaterThanOrEqual(1);
    expect(answer.headers.get("x-ratelimit-limit")).toBe("60");
    expect(await historyRows(ana)).toEqual([{ acao: "checkin_pontual", pontos_final: 44, chamado_id: chamado }]);
  });

  it("is served at the gateway root too, and reports newly earned badges", async () => {
    const chamado = await createCall(ana);
    const answer = await score(ana.accessToken, { usuario_id: ana.id, acao: "chamado_concluido", chamado_id: chamado }, "root");
    expect(answer.status).toBe(200);
    expect((answer.body.data?.badges_conquistados as { codigo: string }[]).map((badge) => badge.codigo)).toContain("primeiro_chamado");
  });

  it("answers 409 ACAO_DUPLICADA for an award already given, and changes nothing", async () => {
    const chamado = await createCall(bia);
    expect((await score(bia.accessToken, { usuario_id: bia.id, acao: "chamado_concluido", chamado_id: chamado })).status).toBe(200);
    const before = await bia.client.from("tecnicos").select("pontos_total").eq("id", bia.id).single();
    const again = await score(bia.accessToken, { usuario_id: bia.id, acao: "chamado_concluido", chamado_id: chamado });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ success: false, error: { codigo: "ACAO_DUPLICADA" } });
    const after = await bia.client.from("tecnicos").select("pontos_total").eq("id", bia.id).single();
    expect(after.data).toEqual(before.data);
    expect((await historyRows(bia)).filter((row) => row.chamado_id === chamado)).toHaveLength(1);
  });

  it("gives exactly one award to two concurrent requests for the same action", async () => {
    const carla = await createTechnician(cidade, "Carla");
    const chamado = await createCall(carla);
    const body = { usuario_id: carla.id, acao: "chamado_concluido", chamado_id: chamado };
    const answers = await Promise.all([score(carla.accessToken, body), score(carla.accessToken, body, "root")]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    expect(await historyRows(carla)).toHaveLength(1);
  });

  it("lets the service role (back office) score any technician, without a per-user limit", async () => {
    const chamado = await createCall(bia, { estrelas: 5 });
    const answer = await score(env.serviceRoleKey, { usuario_id: bia.id, acao: "avaliacao_5_estrelas", chamado_id: chamado });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("x-ratelimit-limit")).toBeNull();
  });

  describe("refuses, recording nothing,", () => {
    let dani: Technician;
    let aberto: string;

    beforeAll(async () => {
      dani = await createTechnician(cidade, "Dani");
      aberto = await createCall(dani, { status: "em_andamento", agendadoPara: new Date(Date.now() - 5 * 60_000) });
    });

    const now = () => new Date();
    const cases: [string, () => Promise<unknown>, number, string][] = [
      ["an unknown action", async () => ({ usuario_id: dani.id, acao: "subornar_cliente", chamado_id: aberto }), 422, "ACAO_INVALIDA"],
      ["an unknown call", async () => ({ usuario_id: dani.id, acao: "chamado_concluido", chamado_id: crypto.randomUUID() }), 404, "CHAMADO_NAO_ENCONTRADO"],
      ["another technician's call", async () => ({ usuario_id: dani.id, acao: "chamado_concluido", chamado_id: await createCall(ana) }), 403, "CHAMADO_DE_OUTRO_TECNICO"],
      ["scoring another technician", async () => ({ usuario_id: ana.id, acao: "chamado_concluido", chamado_id: aberto }), 403, "SEM_PERMISSAO"],
      ["a call in the wrong state", async () => ({ usuario_id: dani.id, acao: "chamado_concluido", chamado_id: aberto }), 422, "CHAMADO_ESTADO_INVALIDO"],
      ["a malformed UUID", async () => ({ usuario_id: "123", acao: "chamado_concluido", chamado_id: aberto }), 400, "PARAMETRO_INVALIDO"],
      ["a missing field", async () => ({ usuario_id: dani.id, acao: "chamado_concluido" }), 400, "PARAMETRO_INVALIDO"],
      ["a check-in without coordinates", async () => ({ usuario_id: dani.id, acao: "checkin_pontual", chamado_id: aberto }), 422, "METADATA_INCOMPLETA"],
      ["a latitude out of range", async () => ({ usuario_id: dani.id, acao: "checkin_pontual", chamado_id: aberto, metadata: { ...reading(now()), latitude: -91 } }), 422, "COORDENADAS_INVALIDAS"],
      ["a check-in outside the radius", async () => ({ usuario_id: dani.id, acao: "checkin_pontual", chamado_id: aberto, metadata: reading(now(), 450) }), 422, "FORA_DO_RAIO"],
      ["a check-in time in the future", async () => ({ usuario_id: dani.id, acao: "checkin_pontual", chamado_id: aberto, metadata: reading(new Date(Date.now() + 10 * 60_000)) }), 422, "TIMESTAMP_INVALIDO"],
      ["a check-in time too old", async () => ({ usuario_id: dani.id, acao: "checkin_pontual", chamado_id: aberto, metadata: reading(new Date(Date.now() - 25 * 3600_000)) }), 422, "TIMESTAMP_INVALIDO"],
      ["a check-in time that is not ISO 8601", async () => ({ usuario_id: dani.id, acao: "checkin_pontual", chamado_id: aberto, metadata: { ...reading(now()), timestamp_checkin: "agora" } }), 400, "PARAMETRO_INVALIDO"],
    ];

    it.each(cases)("%s", async (_label, body, status, codigo) => {
      const answer = await score(dani.accessToken, await body());
      expect(answer.status).toBe(status);
      expect(answer.body.error?.codigo).toBe(codigo);
      expect(await historyRows(dani)).toEqual([]);
    });

    it("a malformed UUID, naming the field", async () => {
      const answer = await score(dani.accessToken, { usuario_id: dani.id, acao: "chamado_concluido", chamado_id: "not-a-uuid" });
      expect(answer.body.error?.detalhes).toEqual([{ campo: "chamado_id", problema: "deve ser um UUID" }]);
    });

    it("a body that is not JSON, or not sent as JSON", async () => {
      const broken = await callApi("POST", "/points", { token: dani.accessToken, raw: { text: "{usuario_id:", contentType: "application/json" } });
      expect([broken.status, broken.body.error?.codigo]).toEqual([400, "PARAMETRO_INVALIDO"]);
      const form = await callApi("POST", "/points", { token: dani.accessToken, raw: { text: "acao=x", contentType: "application/x-www-form-urlencoded" } });
      expect([form.status, form.body.error?.codigo]).toEqual([415, "TIPO_NAO_SUPORTADO"]);
      expect(specViolations("POST", POINTS, form)).toEqual([]);
    });
  });

  describe("authentication", () => {
    it("answers 401 NAO_AUTENTICADO without a token", async () => {
      const answer = await callApi("POST", "/points", { body: {} });
      expect([answer.status, answer.body.error?.codigo]).toEqual([401, "NAO_AUTENTICADO"]);
      expect(specViolations("POST", POINTS, answer)).toEqual([]);
    });

    it("answers 401 NAO_AUTENTICADO for an expired JWT", async () => {
      const expired = await new SignJWT({ role: "authenticated", aud: "authenticated" })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setSubject(ana.id)
        .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
        .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
        .sign(new TextEncoder().encode(env.jwtSecret));
      const answer = await score(expired, { usuario_id: ana.id, acao: "chamado_concluido", chamado_id: crypto.randomUUID() });
      expect(answer.status).toBe(401);
      expect(answer.body.error).toMatchObject({ codigo: "NAO_AUTENTICADO", mensagem: expect.stringMatching(/expirou/) });
    });

    it("answers 401 for a JWT signed with another secret, and for the anon key", async () => {
      const forged = await new SignJWT({ role: "authenticated" })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject(ana.id)
        .setExpirationTime("1h")
        .sign(new TextEncoder().encode("not-the-project-secret-not-the-project-secret"));
      expect((await score(forged, { usuario_id: ana.id, acao: "chamado_concluido", chamado_id: crypto.randomUUID() })).status).toBe(401);
      expect((await score(env.anonKey, { usuario_id: ana.id, acao: "chamado_concluido", chamado_id: crypto.randomUUID() })).status).toBe(401);
    });
  });

  it("limits a technician to 60 scoring requests a minute (failed ones count) with 429 and Retry-After", async () => {
    const eva = await createTechnician(cidade, "Eva");
    const body = { usuario_id: eva.id, acao: "chamado_concluido", chamado_id: crypto.randomUUID() };
    const started = Date.now();
    let served = 0;
    let limited: Awaited<ReturnType<typeof score>> | undefined;
    while (!limited && served < 120) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => callApi("POST", "/points", { token: eva.accessToken, body })));
      limited = answers.find((answer) => answer.status === 429);
      served += answers.filter((answer) => answer.status === 404).length;
    }
    // The bucket holds 60 and refills one token a second while the requests run.
    const elapsedSeconds = (Date.now() - started) / 1000;
    expect(served).toBeGreaterThanOrEqual(60);
    expect(served).toBeLessThanOrEqual(60 + Math.ceil(elapsedSeconds) + 1);
    expect(limited && specViolations("POST", POINTS, limited)).toEqual([]);
    expect(limited?.body.error?.codigo).toBe("LIMITE_EXCEDIDO");
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limited?.headers.get("x-ratelimit-remaining")).toBe("0");
    const { count } = await serviceClient().from("historico_pontos").select("*", { count: "exact", head: true }).eq("usuario_id", eva.id);
    expect(count).toBe(0);
  });
});

describe("POST /api/v1/gamification/points/lote", () => {
  const LOTE = "/api/v1/gamification/points/lote";
  let cidade: string;
  let gil: Technician;
  let hana: Technician;

  beforeAll(async () => {
    cidade = await createCity();
    [gil, hana] = await Promise.all([createTechnician(cidade, "Gil"), createTechnician(cidade, "Hana")]);
  });

  async function batch(token: string, acoes: unknown[]) {
    const answer = await callApi("POST", "/points/lote", { token, body: { acoes } });
    expect(specViolations("POST", LOTE, answer)).toEqual([]);
    return answer;
  }

  it("lets the back office score many technicians at once, each item on its own", async () => {
    const [g1, g2, h1] = await Promise.all([createCall(gil), createCall(gil), createCall(hana)]);
    const answer = await batch(env.serviceRoleKey, [
      { usuario_id: gil.id, acao: "chamado_concluido", chamado_id: g1 },
      { usuario_id: hana.id, acao: "chamado_concluido", chamado_id: h1 },
      { usuario_id: gil.id, acao: "chamado_concluido", chamado_id: g1 },
      { usuario_id: gil.id, acao: "chamado_concluido", chamado_id: g2 },
    ]);
    expect(answer.status).toBe(200);
    const data = answer.body.data as { resultados: { indice: number; status: number; data?: { pontos_total: number } }[]; sucesso: number; falhas: number };
    expect(data.resultados.map((item) => [item.indice, item.status])).toEqual([[0, 200], [1, 200], [2, 409], [3, 200]]);
    expect([data.sucesso, data.falhas]).toEqual([3, 1]);
    expect(data.resultados[3].data?.pontos_total).toBe(2 * (data.resultados[0].data?.pontos_total ?? 0));
    expect(await historyRows(gil)).toHaveLength(2);
  });

  it("lets a technician send only their own actions", async () => {
    const own = await createCall(hana);
    const answer = await batch(hana.accessToken, [
      { usuario_id: hana.id, acao: "chamado_concluido", chamado_id: own },
      { usuario_id: gil.id, acao: "chamado_concluido", chamado_id: own },
    ]);
    const data = answer.body.data as { resultados: { status: number; error?: { codigo: string } }[] };
    expect(data.resultados.map((item) => item.error?.codigo ?? item.status)).toEqual([200, "SEM_PERMISSAO"]);
  });

  it("answers 400 for an empty batch or a malformed registration, naming it", async () => {
    expect((await batch(gil.accessToken, [])).status).toBe(400);
    const answer = await batch(gil.accessToken, [{ usuario_id: gil.id, acao: "chamado_concluido", chamado_id: "x" }]);
    expect(answer.body.error?.detalhes).toEqual([{ campo: "acoes.0.chamado_id", problema: "deve ser um UUID" }]);
  });
});
