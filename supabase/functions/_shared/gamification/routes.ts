/**
 * The routes of /api/v1/gamification/: which SQL function serves each one and how a request's
 * path, query and body become its arguments. Pure (no network), so the table is unit-tested; the
 * Hono app in http.ts serves it.
 */
import type { z } from "zod";
import { validate as validateInput } from "../http/body.ts";
import type { RpcCall } from "../db/rpc.ts";
import type { InputPart } from "../http/errors.ts";
import { gamificationErrors } from "./errors.ts";
import { badgesPath, batchBody, categoryRankingQuery, historyQuery, localRankingQuery, nationalRankingQuery, scoreBody } from "./schemas.ts";

/** The prefix every gamification path starts with, under /functions/v1 and at the gateway root. */
export const PREFIX = "/api/v1/gamification";

/** What a route gets from the request: path values, the query string and the parsed JSON body. */
export interface RouteInput {
  params: Record<string, string>;
  query: Record<string, string>;
  body: unknown;
}

/** One route of the API. */
export interface GamificationRoute {
  method: "GET" | "POST";
  /** Path after PREFIX, in Hono's syntax: `:name` segments capture values. */
  path: string;
  /** The SQL call for a request; throws the 400 PARAMETRO_INVALIDO HttpError for bad input. */
  toCall(input: RouteInput): RpcCall;
}

/** Validates `value` against `schema`, or throws 400 PARAMETRO_INVALIDO listing every problem. */
function validate<S extends z.ZodType>(schema: S, value: unknown, part: InputPart): z.output<S> {
  return validateInput(schema, value, part, gamificationErrors);
}

/** Every route of the API, in the spec's order. */
export const routes: GamificationRoute[] = [
  {
    method: "POST",
    path: "/points",
    toCall: ({ body }) => {
      const parsed = validate(scoreBody, body, "body");
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
      const parsed = validate(batchBody, body, "body");
      return { fn: "gamificacao_registrar_acoes", args: { p_acoes: parsed.acoes.map((acao) => ({ ...acao, metadata: acao.metadata ?? {} })) } };
    },
  },
  {
    method: "GET",
    path: "/points/history",
    toCall: ({ query }) => {
      const parsed = validate(historyQuery, query, "query");
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
      const parsed = validate(localRankingQuery, query, "query");
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
      const parsed = validate(nationalRankingQuery, query, "query");
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
      const parsed = validate(categoryRankingQuery, query, "query");
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
      const parsed = validate(badgesPath, params, "path");
      return { fn: "gamificacao_badges_usuario", args: { p_usuario_id: parsed.usuario_id } };
    },
  },
];
