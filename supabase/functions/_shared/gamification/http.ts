/**
 * The HTTP surface of /api/v1/gamification/ (served by the `api` edge function): parse, check the
 * caller presented a Supabase JWT, validate, call the route's SQL function as the caller (see
 * runner.ts for how the token is verified), answer in the envelope. All logic lives in the SQL
 * functions.
 */
import { apiError, errorResponse, successResponse, type ApiError } from "./envelope.ts";
import { logEvent } from "./log.ts";
import { isApiError, matchRoute, type RouteInput } from "./routes.ts";
import { runRpc } from "./rpc.ts";
import { callerRunner, type RunnerFactory } from "./runner.ts";

/** Largest JSON body accepted (an action registration is a few hundred bytes). */
const MAX_BODY_BYTES = 16 * 1024;

/** The bearer token of a well-formed `Authorization: Bearer <JWT>` header, or null. */
function bearerToken(header: string | null): string | null {
  const match = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/.exec(header?.trim() ?? "");
  return match ? match[1] : null;
}

/** The JSON body of a POST, or the error to answer when it is not JSON, too large or missing. */
async function readJson(request: Request): Promise<{ ok: true; value: unknown } | { ok: false; error: ApiError }> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) {
    return { ok: false, error: apiError(415, "TIPO_NAO_SUPORTADO", "Envie o corpo como application/json.") };
  }
  const text = await request.text();
  if (new TextEncoder().encode(text).length > MAX_BODY_BYTES) {
    return { ok: false, error: apiError(413, "CORPO_MUITO_GRANDE", `O corpo passa de ${MAX_BODY_BYTES} bytes.`) };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, error: apiError(400, "PARAMETRO_INVALIDO", "O corpo não é JSON válido.") };
  }
}

/** Builds the request handler; `runnerFor` creates the database access for a caller's JWT. */
export function createGamificationHandler(runnerFor: RunnerFactory = callerRunner): (request: Request) => Promise<Response> {
  return async (request) => {
    const url = new URL(request.url);
    const match = matchRoute(request.method, url.pathname);
    if (!match) return errorResponse(apiError(404, "ROTA_NAO_ENCONTRADA", `Não há rota ${url.pathname}.`));
    if (!match.route) {
      return errorResponse(apiError(405, "METODO_NAO_PERMITIDO", `Use ${match.allowed.join(" ou ")} em ${url.pathname}.`), null, {
        Allow: match.allowed.join(", "),
      });
    }

    const authorization = request.headers.get("authorization");
    if (!bearerToken(authorization)) {
      return errorResponse(apiError(401, "NAO_AUTENTICADO", "Envie Authorization: Bearer <JWT> de uma sessão Supabase."));
    }

    const input: RouteInput = { params: match.params, query: Object.fromEntries(url.searchParams), body: undefined };
    if (match.route.method === "POST") {
      const body = await readJson(request);
      if (!body.ok) return errorResponse(body.error);
      input.body = body.value;
    }
    const call = match.route.toCall(input);
    if (isApiError(call)) return errorResponse(call);

    try {
      const outcome = await runRpc(runnerFor(`Bearer ${bearerToken(authorization)}`), call);
      return outcome.ok ? successResponse(outcome.data, outcome.limit) : errorResponse(outcome.error, outcome.limit);
    } catch (error) {
      logEvent("error", "gamification request failed", { path: url.pathname, error: String(error) });
      return errorResponse(apiError(500, "ERRO_INTERNO", "Erro inesperado; tente de novo."));
    }
  };
}

/** Handles every request under /api/v1/gamification/ (the `api` function routes them here). */
export const handleGamificationRequest: (request: Request) => Promise<Response> = createGamificationHandler();
