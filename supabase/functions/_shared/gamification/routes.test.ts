import { describe, expect, it } from "vitest";
import { HttpError } from "../http/errors.ts";
import { createGamificationHandler } from "./http.ts";
import { PREFIX, routes } from "./routes.ts";

const usuario = "d41d8cd9-8f00-b204-e980-0998ecf8427e";

/** The route whose Hono pattern matches `path` for `method`, with its path values. */
function find(method: string, path: string) {
  for (const route of routes) {
    const names: string[] = [];
    const pattern = new RegExp(`^${route.path.replace(/:(\w+)/g, (_m, name: string) => (names.push(name), "([^/]+)"))}$`);
    const match = pattern.exec(path);
    if (route.method === method && match) return { route, params: Object.fromEntries(names.map((name, index) => [name, match[index + 1]])) };
  }
  throw new Error(`no route for ${method} ${path}`);
}

/** The SQL call a request becomes, or the HttpError its input is refused with. */
function call(method: string, path: string, query: Record<string, string> = {}, body: unknown = undefined) {
  const { route, params } = find(method, path);
  try {
    return route.toCall({ params, query, body });
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
}

/** Routing runs before the token is read, so a request without one shows where it was routed. */
const handler = createGamificationHandler();
async function routed(method: string, path: string) {
  const response = await handler(new Request(`http://localhost${PREFIX}${path}`, { method }));
  return { status: response.status, allow: response.headers.get("allow"), codigo: (await response.json()).error.codigo as string };
}

describe("the route table on Hono", () => {
  it("finds every route of the spec", async () => {
    for (const [method, path] of [
      ["POST", "/points"],
      ["POST", "/points/lote"],
      ["GET", "/points/history"],
      ["GET", "/rankings/local"],
      ["GET", "/rankings/nacional"],
      ["GET", "/rankings/categoria/qualidade"],
      ["GET", `/badges/user/${usuario}`],
    ]) {
      expect(await routed(method, path), `${method} ${path}`).toMatchObject({ status: 401, codigo: "NAO_AUTENTICADO" });
    }
  });

  it("ignores a trailing slash", async () => {
    expect(await routed("GET", "/rankings/local/")).toMatchObject({ status: 401 });
  });

  it("reports the allowed methods when the path exists but the method does not", async () => {
    expect(await routed("DELETE", "/points")).toEqual({ status: 405, allow: "POST", codigo: "METODO_NAO_PERMITIDO" });
  });

  it("answers 404 for unknown paths and malformed escapes", async () => {
    expect(await routed("GET", "/rankings")).toMatchObject({ status: 404, codigo: "ROTA_NAO_ENCONTRADA" });
    expect(await routed("GET", "/badges/user/%E0%A4%A")).toMatchObject({ status: 404, codigo: "ROTA_NAO_ENCONTRADA" });
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
    expect(call("POST", "/points/lote", {}, { acoes: [] })).toMatchObject({ status: 400, code: "PARAMETRO_INVALIDO" });
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
    expect(result).toBeInstanceOf(HttpError);
    expect(result).toMatchObject({ status: 400, code: "PARAMETRO_INVALIDO" });
    expect(result instanceof HttpError && Array.isArray(result.details) ? result.details.length : 0).toBe(2);
  });

  it("refuses a malformed usuario_id in the badges path", () => {
    expect(call("GET", "/badges/user/not-a-uuid")).toMatchObject({ status: 400, code: "PARAMETRO_INVALIDO" });
  });

  it("accepts any id Postgres stores in the badges path, RFC 9562 or not", () => {
    expect(call("GET", "/badges/user/402a8bf1-ec9a-c693-0f4a-5d1e7c2b9a10")).toMatchObject({ fn: "gamificacao_badges_usuario" });
  });
});
