import type { z } from "zod";
import { errorBody, MethodNotAllowedError, PortalError } from "./errors.ts";
import { logEvent } from "./log.ts";

/**
 * CORS for browser callers of the JSON functions (supabase-js `functions.invoke` sends these
 * headers). The local gateway answers preflights itself; hosted Supabase passes them through.
 */
export const CORS_HEADERS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-allow-headers": "authorization, x-client-info, apikey, content-type",
  "access-control-allow-methods": "GET, POST, OPTIONS",
};

/** A JSON answer with the CORS headers. */
export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return Response.json(body, { status, headers: { ...CORS_HEADERS, ...headers } });
}

/**
 * Wraps a JSON function's handler: answers preflights, turns a thrown PortalError into its JSON
 * error answer and anything unexpected into a logged 500, so handlers only describe the happy path
 * and throw for the rest.
 */
export function jsonHandler(name: string, handler: (request: Request) => Promise<Response>): (request: Request) => Promise<Response> {
  return async (request) => {
    if (request.method === "OPTIONS") return new Response(null, { status: 204, headers: CORS_HEADERS });
    try {
      return await handler(request);
    } catch (error) {
      if (error instanceof PortalError) return jsonResponse(errorBody(error), error.status, error instanceof MethodNotAllowedError ? { allow: error.allow.join(", ") } : {});
      logEvent("error", "unhandled_error", { function: name, message: error instanceof Error ? error.message : String(error) });
      return jsonResponse(errorBody(new PortalError(500, "internal_error", "Something went wrong on our side")), 500);
    }
  };
}

/** Refuses any method but the ones listed (405). */
export function requireMethod(request: Request, ...methods: string[]): void {
  if (!methods.includes(request.method)) throw new MethodNotAllowedError(methods);
}

/** Reads a JSON body and validates it against a schema: 400 invalid_json or invalid_body otherwise. */
export async function readJsonBody<Schema extends z.ZodType>(request: Request, schema: Schema): Promise<z.infer<Schema>> {
  let raw: unknown;
  try {
    raw = await request.json();
  } catch {
    throw new PortalError(400, "invalid_json", "The request body must be a JSON object");
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new PortalError(400, "invalid_body", "The request body is not valid", parsed.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })));
  }
  return parsed.data;
}

/**
 * The original client's address as the gateway forwarded it, to pass on when a function calls the
 * data API for an anonymous visitor: the local gateway then rate-limits that visitor, not the
 * functions host every such call comes from. Hosted Supabase sets and ignores the header itself.
 */
export function forwardedFor(request: Request): string | null {
  return request.headers.get("x-forwarded-for")?.split(",")[0]?.trim() || null;
}
