import { describe, expect, it, vi } from "vitest";
import { createGamificationHandler } from "./http.ts";
import type { PostgrestResult } from "./rpc.ts";

const token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl";
const base = "http://localhost/api/v1/gamification";
const limite = { limite: 60, restante: 59, reinicio: "2026-11-21T10:00:01-03:00", retry_after: 0 };

function handlerAnswering(result: PostgrestResult) {
  const run = vi.fn(async () => result);
  const runnerFor = vi.fn(() => run);
  return { handler: createGamificationHandler({ runnerFor }), run, runnerFor };
}

const ok = { data: { status: 200, data: { pontos_total: 50 }, limite }, error: null, status: 200 };

describe("the gamification handler", () => {
  it("calls the route's SQL function with the caller's JWT and answers the envelope", async () => {
    const { handler, run, runnerFor } = handlerAnswering(ok);
    const response = await handler(new Request(`${base}/rankings/nacional?categoria=expert`, { headers: { Authorization: `Bearer ${token}` } }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ success: true, data: { pontos_total: 50 } });
    expect(response.headers.get("x-ratelimit-remaining")).toBe("59");
    expect(runnerFor).toHaveBeenCalledWith(expect.objectContaining({ authorization: `Bearer ${token}` }));
    expect(run).toHaveBeenCalledWith("gamificacao_ranking_nacional", { p_nivel: "expert", p_periodo: "mensal", p_limit: 20, p_offset: 0 });
  });

  it.each([
    ["no Authorization header", {}],
    ["a non-Bearer scheme", { Authorization: `Basic ${token}` }],
    ["a token that is not a JWT", { Authorization: "Bearer abc" }],
  ])("answers 401 NAO_AUTENTICADO for %s without touching the database", async (_label, headers) => {
    const { handler, run } = handlerAnswering(ok);
    const response = await handler(new Request(`${base}/rankings/local`, { headers }));
    expect(response.status).toBe(401);
    expect((await response.json()).error.codigo).toBe("NAO_AUTENTICADO");
    expect(run).not.toHaveBeenCalled();
  });

  it("answers 404 ROTA_NAO_ENCONTRADA for an unknown path and 405 with Allow for a wrong method", async () => {
    const { handler } = handlerAnswering(ok);
    const missing = await handler(new Request(`${base}/trofeus`, { headers: { Authorization: `Bearer ${token}` } }));
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.codigo).toBe("ROTA_NAO_ENCONTRADA");
    const wrong = await handler(new Request(`${base}/points`, { headers: { Authorization: `Bearer ${token}` } }));
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST");
  });

  it("answers 400 for a body that is not JSON and 415 for another content type", async () => {
    const { handler } = handlerAnswering(ok);
    const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const broken = await handler(new Request(`${base}/points`, { method: "POST", headers, body: "{nope" }));
    expect(broken.status).toBe(400);
    const text = await handler(new Request(`${base}/points`, { method: "POST", headers: { ...headers, "Content-Type": "text/plain" }, body: "{}" }));
    expect(text.status).toBe(415);
  });

  it("answers 413 for a body over 16 KiB", async () => {
    const { handler } = handlerAnswering(ok);
    const body = JSON.stringify({ metadata: { nota: "x".repeat(17_000) } });
    const response = await handler(new Request(`${base}/points`, { method: "POST", headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" }, body }));
    expect(response.status).toBe(413);
  });

  it("passes the SQL function's error status, code and rate-limit headers through", async () => {
    const { handler } = handlerAnswering({
      data: { status: 429, error: { codigo: "LIMITE_EXCEDIDO", mensagem: "Calma." }, limite: { ...limite, restante: 0, retry_after: 3 } },
      error: null,
      status: 200,
    });
    const response = await handler(new Request(`${base}/points/history`, { headers: { Authorization: `Bearer ${token}` } }));
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("3");
    expect(await response.json()).toMatchObject({ success: false, error: { codigo: "LIMITE_EXCEDIDO" } });
  });

  it("answers 500 ERRO_INTERNO when the database cannot be reached", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const handler = createGamificationHandler({ runnerFor: () => () => Promise.reject(new Error("connection refused")) });
    const response = await handler(new Request(`${base}/rankings/local`, { headers: { Authorization: `Bearer ${token}` } }));
    expect(response.status).toBe(500);
    expect((await response.json()).error.codigo).toBe("ERRO_INTERNO");
    errors.mockRestore();
  });

  it.each([
    ["a NUL in the query", `${base}/rankings/local?cidade=%00`, {}, "cidade"],
    ["a NUL in an ignored query parameter", `${base}/rankings/local?x=a%00b`, {}, "x"],
    ["a NUL in a path value", `${base}/rankings/categoria/%00`, {}, "categoria"],
    ["a NUL in the body", `${base}/points`, { method: "POST", body: '{"acao":"a\\u0000"}' }, "acao"],
    ["bytes that are not UTF-8 in the body", `${base}/points`, { method: "POST", body: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]) }, "(body)"],
  ])("answers 400 PARAMETRO_INVALIDO for %s, before any SQL runs", async (_what, url, init, campo) => {
    const { handler, run } = handlerAnswering(ok);
    const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const response = await handler(new Request(url, { ...init, headers }));
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ codigo: "PARAMETRO_INVALIDO", detalhes: [{ campo }] });
    expect(run).not.toHaveBeenCalled();
  });

  it("answers 413 from Content-Length alone, before reading the body", async () => {
    const { handler } = handlerAnswering(ok);
    const endless = new ReadableStream({ pull: (controller) => controller.enqueue(new Uint8Array(1024)) });
    const request = new Request(`${base}/points`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", "Content-Length": "999999999" },
      body: endless,
      duplex: "half",
    } as RequestInit);
    expect((await handler(request)).status).toBe(413);
  });
});
