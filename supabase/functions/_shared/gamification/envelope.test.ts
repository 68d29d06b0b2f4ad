import { describe, expect, it } from "vitest";
import { apiError, errorResponse, rateLimitHeaders, successResponse } from "./envelope.ts";

const now = new Date("2026-11-21T13:00:00.000Z");
const limit = { limite: 60, restante: 59, reinicio: "2026-11-21T10:00:01-03:00", retry_after: 0 };

describe("successResponse", () => {
  it("wraps data with success and an ISO timestamp", async () => {
    const response = successResponse({ pontos_total: 10 }, null, now);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ success: true, data: { pontos_total: 10 }, timestamp: "2026-11-21T13:00:00.000Z" });
  });

  it("adds the rate-limit headers of a limited caller", () => {
    const response = successResponse({}, limit, now);
    expect(response.headers.get("x-ratelimit-limit")).toBe("60");
    expect(response.headers.get("x-ratelimit-remaining")).toBe("59");
    expect(response.headers.get("x-ratelimit-reset")).toBe("2026-11-21T13:00:01.000Z");
    expect(response.headers.get("retry-after")).toBeNull();
  });
});

describe("errorResponse", () => {
  it("answers the decided failure envelope with the error's status", async () => {
    const response = errorResponse(apiError(409, "ACAO_DUPLICADA", "Já pontuada.", { acao: "x" }), null, {}, now);
    expect(response.status).toBe(409);
    expect(await response.json()).toEqual({
      success: false,
      error: { codigo: "ACAO_DUPLICADA", mensagem: "Já pontuada.", detalhes: { acao: "x" } },
      timestamp: "2026-11-21T13:00:00.000Z",
    });
  });

  it("leaves detalhes out when there are none", async () => {
    const body = await errorResponse(apiError(401, "NAO_AUTENTICADO", "Sem token."), null, {}, now).json();
    expect(body.error).toEqual({ codigo: "NAO_AUTENTICADO", mensagem: "Sem token." });
  });

  it("adds Retry-After to a 429, and extra headers", () => {
    const response = errorResponse(apiError(429, "LIMITE_EXCEDIDO", "Calma."), { ...limit, restante: 0, retry_after: 2 }, { Allow: "GET" }, now);
    expect(response.headers.get("retry-after")).toBe("2");
    expect(response.headers.get("allow")).toBe("GET");
  });
});

describe("rateLimitHeaders", () => {
  it("is empty for callers that are not limited (the service role)", () => {
    expect(rateLimitHeaders(null, true)).toEqual({});
  });

  it("never reports a negative remaining count or a Retry-After below one second", () => {
    const headers = rateLimitHeaders({ ...limit, restante: -1, retry_after: 0 }, true);
    expect(headers["X-RateLimit-Remaining"]).toBe("0");
    expect(headers["Retry-After"]).toBe("1");
  });
});
