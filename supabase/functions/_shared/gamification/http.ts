/**
 * The HTTP surface of /api/v1/gamification/ (served by the `api` edge function), on the shared
 * toolkit: a Hono app over the route table (404 ROTA_NAO_ENCONTRADA, 405 METODO_NAO_PERMITIDO
 * with Allow). Each request: check the caller presented a Supabase JWT, read and validate the
 * input, resolve the caller (http/caller.ts verifies the token when the function holds its key),
 * call the route's SQL function as the caller (runner.ts), answer in the envelope. All logic lives
 * in the SQL functions.
 */
import { type Context, Hono } from "hono";
import type { ClaimsVerifier } from "../auth/jwt-claims.ts";
import { readJson, readParams, readQuery } from "../http/body.ts";
import { bearerToken, resolveCaller } from "../http/caller.ts";
import { createRouter } from "../http/routing.ts";
import { errorResponse, successResponse } from "./envelope.ts";
import { gamificationErrors as errors, gamificationLog, MAX_BODY_BYTES } from "./errors.ts";
import { type GamificationRoute, PREFIX, type RouteInput, routes } from "./routes.ts";
import { runRpc } from "./rpc.ts";
import { callerRunner, type RunnerFactory } from "./runner.ts";

/** What the app is built from; tests replace the database access and the token verifier. */
export interface GamificationOptions {
  /** Creates the database access for a caller. */
  runnerFor?: RunnerFactory;
  /** Checks tokens; the default uses SUPABASE_JWKS. */
  verify?: ClaimsVerifier;
}

/** Serves one request for `route`. The checks run in the documented order: 401, then 415/413/400. */
async function serve(route: GamificationRoute, c: Context, { runnerFor = callerRunner, verify }: GamificationOptions): Promise<Response> {
  const request = c.req.raw;
  if (!bearerToken(request.headers.get("authorization"))) throw errors.describe({ kind: "missing_credentials" });
  const input: RouteInput = {
    params: readParams(c.req.param() as Record<string, string>, errors),
    query: readQuery(request, errors),
    body: route.method === "POST" ? await readJson(request, { errors, maxBytes: MAX_BODY_BYTES }) : undefined,
  };
  const call = route.toCall(input);
  const caller = await resolveCaller(request, { errors, verify });
  // A bearer token was checked above, so the principal always carries it.
  if (caller.kind === "apiKey" || caller.authorization === null) throw errors.describe({ kind: "missing_credentials" });
  const outcome = await runRpc(runnerFor(caller), call);
  return outcome.ok ? successResponse(outcome.data, outcome.limit) : errorResponse(outcome.error, outcome.limit);
}

/** The gamification routes as a Hono app, to mount at PREFIX. */
export function createGamificationApp(options: GamificationOptions = {}): Hono {
  return createRouter(
    routes.map((route) => ({ method: route.method, path: route.path, handle: (c: Context) => serve(route, c, options) })),
    { errors, logger: gamificationLog },
  );
}

/** A request handler for paths under PREFIX (what the `api` function mounts), for tests and tools. */
export function createGamificationHandler(options: GamificationOptions = {}): (request: Request) => Promise<Response> {
  const app = new Hono({ strict: false }).route(PREFIX, createGamificationApp(options));
  return async (request) => await app.fetch(request);
}
