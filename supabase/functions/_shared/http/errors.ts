/**
 * The one error type of every HTTP surface, and the problems the toolkit itself detects.
 *
 * A handler gives up by throwing an `HttpError`: a status, a stable code, a message for people,
 * optional details and extra headers (`Allow`, `Retry-After`). Each service keeps the error
 * envelope it documents, so it owns two small functions, gathered in a `ServiceErrors`:
 * `describe` turns a toolkit `Problem` (a body too large, a wrong method, an expired token...)
 * into an `HttpError` in the service's own words, and `render` writes any `HttpError` as that
 * service's response.
 */
import type { z } from "zod";

/** A deliberate failure answer: what the service renders in its envelope. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "HttpError";
  }
}

/** Which part of a request a value came from. */
export type InputPart = "path" | "query" | "body" | "header";

/** The failures the toolkit's readers, caller resolution and router detect on their own. */
export type Problem =
  | { kind: "not_found"; method: string; path: string }
  | { kind: "method_not_allowed"; method: string; path: string; allowed: readonly string[] }
  | { kind: "unsupported_media_type"; expected: string }
  | { kind: "body_too_large"; limit: number }
  | { kind: "malformed_json" }
  /** JSON nested deeper than the cap every JSON body is held to (json-depth.ts). */
  | { kind: "nested_too_deep"; limit: number }
  /** Text Postgres cannot store (a NUL character, a lone UTF-16 surrogate) or bytes that are not UTF-8. */
  | { kind: "unstorable_text"; part: InputPart; field: string }
  | { kind: "invalid_input"; part: InputPart; issues: readonly z.core.$ZodIssue[] }
  /** No usable credentials: no Authorization header, or one that is not `Bearer <JWT>`. */
  | { kind: "missing_credentials" }
  | { kind: "invalid_token"; reason: string }
  | { kind: "expired_token"; reason: string }
  | { kind: "internal" };

/** How one service words and writes its errors (see the module comment). */
export interface ServiceErrors {
  describe(problem: Problem): HttpError;
  render(error: HttpError): Response | Promise<Response>;
}

/**
 * The HttpError to answer for anything a handler threw: itself when it is one, otherwise the
 * service's 500 (the caller logs the original, which never reaches the client).
 */
export function toHttpError(thrown: unknown, errors: Pick<ServiceErrors, "describe">): HttpError {
  return thrown instanceof HttpError ? thrown : errors.describe({ kind: "internal" });
}
