/**
 * The routes of /api/v1/gamification/: which SQL function serves each one and how a request's
 * path, query and body become its arguments. Pure: no network, so the table is unit-tested.
 */
import type { z } from "zod";
import { apiError, type ApiError } from "./envelope.ts";
import { badgesPath, batchBody, categoryRankingQuery, describeIssues, historyQuery, localRankingQuery, nationalRankingQuery, scoreBody } from "./schemas.ts";

/** The prefix every gamification path starts with, under /functions/v1 and at the gateway root. */
export const PREFIX = "/api/v1/gamification";

/** A call to one of the public.gamificacao_* SQL functions. */
export interface RpcCall {
  fn: string;
  args: Record<string, unknown>;
}

/** What a route gets from the request: path values, the query string and the parsed JSON body. */
export interface RouteInput {
  params: Record<string, string>;
  query: Record<string, string>;
  body: unknown;
}

interface Route {
  method: "GET" | "POST";
  /** Path after PREFIX; `:name` segments capture values. */
  path: string;
  toCall(input: RouteInput): RpcCall | ApiError;
}

/** Validates `value` against `schema`, or answers 400 PARAMETRO_INVALIDO listing every problem. */
function validate<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> | ApiError {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  return apiError(400, "PARAMETRO_INVALIDO", `${what} inválido.`, describeIssues(result.error.issues));
}

function isError(value: unknown): value is ApiError {
  return typeof value === "object" && value !== null && "codigo" in value && "status" in value && "mensagem" in value;
}

const routes: Route[] = [
  {
    method: "POST",
    path: "/points",
    toCall: ({ body }) => {
      const parsed = validate(scoreBody, body, "Corpo");
      if (isError(parsed)) return parsed;
      return {
        fn: "gamificacao_registrar_acao",
        args: { p_usuario_id: parsed.usuario_id, p_acao: parsed.acao, p_chamado_id: parsed.chamado_id, p_metadata: parsed.metadata ?? {} },
      };
    },
  },
  {
    method: "POST",
    path: "/points/lote",
    toCall: ({ body }) => {
      const parsed = validate(batchBody, body, "Corpo");
      if (isError(parsed)) return parsed;
      return { fn: "gamificacao_registrar_acoes", args: { p_acoes: parsed.acoes.map((acao) => ({ ...acao, metadata: acao.metadata ?? {} })) } };
    },
  },
  {
    method: "GET",
    path: "/points/history",
    toCall: ({ query }) => {
      const parsed = validate(historyQuery, query, "Parâmetro");
      if (isError(parsed)) return parsed;
      return {
        fn: "gamificacao_historico",
        args: { p_usuario_id: parsed.usuario_id ?? null, p_dias: parsed.periodo, p_limit: parsed.limit, p_offset: parsed.offset },
      };
    },
  },
  {
    method: "GET",
    path: "/rankings/local",
    toCall: ({ query }) => {
      const parsed = validate(localRankingQuery, query, "Parâmetro");
      if (isError(parsed)) return parsed;
      return {
        fn: "gamificacao_ranking_local",
        args: { p_cidade: parsed.cidade ?? null, p_periodo: parsed.periodo, p_limit: parsed.limit, p_offset: parsed.offset },
      };
    },
  },
  {
    method: "GET",
    path: "/rankings/nacional",
    toCall: ({ query }) => {
      const parsed = validate(nationalRankingQuery, query, "Parâmetro");
      if (isError(parsed)) return parsed;
      return {
        fn: "gamificacao_ranking_nacional",
        args: { p_nivel: parsed.categoria ?? null, p_periodo: parsed.periodo, p_limit: parsed.limit, p_offset: parsed.offset },
      };
    },
  },
  {
    method: "GET",
    path: "/rankings/categoria/:categoria",
    toCall: ({ params, query }) => {
      const parsed = validate(categoryRankingQuery, query, "Parâmetro");
      if (isError(parsed)) return parsed;
      return {
        fn: "gamificacao_ranking_categoria",
        args: { p_categoria: params.categoria, p_periodo: parsed.periodo, p_limit: parsed.limit, p_offset: parsed.offset },
      };
    },
  },
  {
    method: "GET",
    path: "/badges/user/:usuario_id",
    toCall: ({ params }) => {
      const parsed = validate(badgesPath, params, "Parâmetro");
      if (isError(parsed)) return parsed;
      return { fn: "gamificacao_badges_usuario", args: { p_usuario_id: parsed.usuario_id } };
    },
  },
];

/** A route matched by path: its methods, and the chosen one with its path values when the method fits. */
export interface RouteMatch {
  allowed: string[];
  route: Route | null;
  params: Record<string, string>;
}

/** Splits a path after PREFIX into segments, ignoring a trailing slash. */
function segments(path: string): string[] {
  return path.split("/").filter((segment) => segment.length > 0);
}

/** A percent-decoded path segment, or null when its escapes are malformed (such a path matches nothing). */
function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** Finds the route for `method` and `pathname` (which starts with PREFIX); null when no path matches. */
export function matchRoute(method: string, pathname: string): RouteMatch | null {
  const wanted = segments(pathname.slice(PREFIX.length));
  let found: RouteMatch | null = null;
  for (const route of routes) {
    const pattern = segments(route.path);
    if (pattern.length !== wanted.length) continue;
    const params: Record<string, string> = {};
    const fits = pattern.every((part, index) => {
      if (part.startsWith(":")) {
        const value = decodeSegment(wanted[index]);
        if (value === null) return false;
        params[part.slice(1)] = value;
        return true;
      }
      return part === wanted[index];
    });
    if (!fits) continue;
    found ??= { allowed: [], route: null, params: {} };
    found.allowed.push(route.method);
    if (route.method === method) {
      found.route = route;
      found.params = params;
    }
  }
  return found;
}

/** Whether a route answered with an error instead of a call. */
export function isApiError(value: RpcCall | ApiError): value is ApiError {
  return isError(value);
}
