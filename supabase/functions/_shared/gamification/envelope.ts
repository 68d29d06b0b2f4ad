/**
 * The gamification API's response envelope (decisions.md, Gamification 4):
 * success `{success: true, data, timestamp}`, failure `{success: false, error: {codigo, mensagem,
 * detalhes?}, timestamp}`, plus the per-user rate-limit headers when the caller is limited. Errors
 * are the toolkit's HttpError: `code` is the envelope's `codigo`, `message` its `mensagem`.
 */
import { HttpError } from "../http/errors.ts";

/** The caller's rate-limit state, as the SQL functions report it. */
export interface RateLimitState {
  limite: number;
  restante: number;
  /** ISO instant at which the bucket is full again. */
  reinicio: string;
  /** Seconds until the next request can succeed (0 when it just did). */
  retry_after: number;
}

/** An HttpError in the API's vocabulary (Portuguese code and message). */
export function apiError(status: number, codigo: string, mensagem: string, detalhes?: unknown): HttpError {
  return new HttpError(status, codigo, mensagem, detalhes);
}

/** X-RateLimit-* headers (and Retry-After when refused), as the workflow service sends them. */
export function rateLimitHeaders(limit: RateLimitState | null, refused: boolean): Record<string, string> {
  if (!limit) return {};
  const headers: Record<string, string> = {
    "X-RateLimit-Limit": String(limit.limite),
    "X-RateLimit-Remaining": String(Math.max(0, limit.restante)),
    "X-RateLimit-Reset": new Date(limit.reinicio).toISOString(),
  };
  if (refused) headers["Retry-After"] = String(Math.max(1, limit.retry_after));
  return headers;
}

/** A 200 response carrying `data`. */
export function successResponse(data: unknown, limit: RateLimitState | null = null, now: Date = new Date()): Response {
  return Response.json({ success: true, data, timestamp: now.toISOString() }, { status: 200, headers: rateLimitHeaders(limit, false) });
}

/** A failure response for `error`, with its status, its own headers (e.g. Allow) and any extra ones. */
export function errorResponse(
  error: HttpError,
  limit: RateLimitState | null = null,
  extraHeaders: Record<string, string> = {},
  now: Date = new Date(),
): Response {
  const body = {
    success: false,
    error: error.details === undefined
      ? { codigo: error.code, mensagem: error.message }
      : { codigo: error.code, mensagem: error.message, detalhes: error.details },
    timestamp: now.toISOString(),
  };
  return Response.json(body, { status: error.status, headers: { ...rateLimitHeaders(limit, error.status === 429), ...error.headers, ...extraHeaders } });
}
