import { describe, expect, it } from "vitest";
import { isApiError, matchRoute, PREFIX } from "./routes.ts";

const usuario = "d41d8cd9-8f00-b204-e980-0998ecf8427e";

function call(method: string, path: string, query: Record<string, string> = {}, body: unknown = undefined) {
  const match = matchRoute(method, `${PREFIX}${path}`);
  if (!match?.route) throw new Error(`no route for ${method} ${path}`);
  return match.route.toCall({ params: match.params, query, body });
}

describe("matchRoute", () => {
  it("finds every route of the spec", () => {
    for (const [method, path] of [
      ["POST", "/points"],
      ["POST", "/points/lote"],
      ["GET", "/points/history"],
      ["GET", "/rankings/local"],
      ["GET", "/rankings/nacional"],
      ["GET", "/rankings/categoria/qualidade"],
      ["GET", `/badges/user/${usuario}`],
    ]) {
      expect(matchRoute(method, `${PREFIX}${path}`)?.route, `${method} ${path}`).not.toBeNull();
    }
  });

  it("ignores a trailing slash", () => {
    expect(matchRoute("GET", `${PREFIX}/rankings/local/`)?.route?.path).toBe("/rankings/local");
  });

  it("reports the allowed methods when the path exists but the method does not", () => {
    expect(matchRoute("DELETE", `${PREFIX}/points`)).toEqual({ allowed: ["POST"], route: null, params: {} });
  });

  it("returns null for unknown paths and malformed escapes", () => {
    expect(matchRoute("GET", `${PREFIX}/rankings`)).toBeNull();
    expect(matchRoute("GET", `${PREFIX}/badges/user/%E0%A4%A`)).toBeNull();
  });
});

describe("route calls", () => {
  it("turns the action registration into the scoring RPC's arguments", () => {
    expect(call("POST", "/points", {}, { usuario_id: usuario, acao: "chamado_concluido", chamado_id: usuario })).toEqual({
      fn: "gamificacao_registrar_acao",
      args: { p_usuario_id: usuario, p_acao: "chamado_concluido", p_chamado_id: usuario, p_metadata: {} },
    });
  });

  it("turns a batch into one call of the batch RPC, with metadata defaulted", () => {
    const acao = { usuario_id: usuario, acao: "chamado_concluido", chamado_id: usuario };
    expect(call("POST", "/points/lote", {}, { acoes: [acao, { ...acao, metadata: { latitude: 1 } }] })).toEqual({
      fn: "gamificacao_registrar_acoes",
      args: { p_acoes: [{ ...acao, metadata: {} }, { ...acao, metadata: { latitude: 1 } }] },
    });
  });

  it("refuses an empty batch and one over 100 registrations", () => {
    expect(call("POST", "/points/lote", {}, { acoes: [] })).toMatchObject({ status: 400, codigo: "PARAMETRO_INVALIDO" });
    const acao = { usuario_id: usuario, acao: "chamado_concluido", chamado_id: usuario };
    expect(call("POST", "/points/lote", {}, { acoes: Array.from({ length: 101 }, () => acao) })).toMatchObject({ status: 400 });
  });

  it("passes history defaults and the period in days", () => {
    expect(call("GET", "/points/history", { periodo: "7d" })).toEqual({
      fn: "gamificacao_historico",
      args: { p_usuario_id: null, p_dias: 7, p_limit: 20, p_offset: 0 },
    });
  });

  it("maps the national categoria to the level filter", () => {
    expect(call("GET", "/rankings/nacional", { categoria: "experiente", limit: "5" })).toMatchObject({ args: { p_nivel: "experiente", p_limit: 5 } });
  });

  it("takes the category from the path", () => {
    expect(call("GET", "/rankings/categoria/pontualidade", { periodo: "semanal" })).toMatchObject({
      fn: "gamificacao_ranking_categoria",
      args: { p_categoria: "pontualidade", p_periodo: "semanal" },
    });
  });

  it("answers 400 PARAMETRO_INVALIDO with every problem for bad input", () => {
    const result = call("GET", "/rankings/local", { limit: "0", periodo: "diario" });
    expect(isApiError(result)).toBe(true);
    expect(result).toMatchObject({ status: 400, codigo: "PARAMETRO_INVALIDO" });
    expect(isApiError(result) && Array.isArray(result.detalhes) ? result.detalhes.length : 0).toBe(2);
  });

  it("refuses a malformed usuario_id in the badges path", () => {
    expect(call("GET", "/badges/user/not-a-uuid")).toMatchObject({ status: 400, codigo: "PARAMETRO_INVALIDO" });
  });
});
