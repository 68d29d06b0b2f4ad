/**
 * The workflow service's request errors: a code, a message, and the HTTP status the code stands
 * for. The HTTP surfaces answer with them, and runs/ throws them when it refuses to admit a run
 * (not signed in, not allowed, not found). Once the shared HTTP toolkit's error type lands in
 * `_shared/http/`, this becomes that type with the workflow service's `{error, code}` envelope.
 */
import type { ValidationIssue } from "../state/issues.ts";

/** Codes of request errors (not run failures). */
export type RequestErrorCode = "INVALID_BODY" | "BODY_TOO_LARGE" | "INVALID_WORKFLOW" | "INVALID_INPUT" | "UNAUTHORIZED" | "FORBIDDEN" | "NOT_FOUND" | "METHOD_NOT_ALLOWED" | "INTERNAL";

const STATUS: Record<RequestErrorCode, number> = {
  INVALID_BODY: 400,
  BODY_TOO_LARGE: 413,
  INVALID_WORKFLOW: 400,
  INVALID_INPUT: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  INTERNAL: 500,
};

/** A request error as a typed value: where a handler gives up, it returns one of these. */
export class RequestError extends Error {
  constructor(
    readonly code: RequestErrorCode,
    message: string,
    readonly details?: { issues?: ValidationIssue[] },
  ) {
    super(message);
    this.name = "RequestError";
  }

  /** The `{error, code}` response. */
  toResponse(): Response {
    return Response.json({ error: this.message, code: this.code, ...this.details }, { status: STATUS[this.code] });
  }
}
