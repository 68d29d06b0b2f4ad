/**
 * The portal's JSON functions on the shared toolkit: `servePortalFunction` answers preflights,
 * refuses other methods (405 with Allow), renders thrown HttpErrors in the portal's envelope and
 * anything unexpected as a logged 500, so handlers only describe the happy path and throw for
 * the rest; `readJsonBody` reads and validates a body with the toolkit's reader.
 */
import type { z } from "zod";
import { readJson, validate } from "../http/body.ts";
import { createLogger, type Logger, requestLogger } from "../http/logger.ts";
import { serveEndpoint } from "../http/routing.ts";
import { CORS_HEADERS, portalErrors } from "./errors.ts";

/** The portal functions' one logger. Never give it e-mail bodies; credentials are redacted anyway. */
export const portalLog = createLogger("portal");

/** Largest JSON body a portal function accepts (its bodies are an id or two and a password). */
export const MAX_JSON_BODY_BYTES = 64 * 1024;

/** The handler of one portal function, given the request and a logger for it. */
export type PortalHandler = (request: Request, log: Logger) => Promise<Response>;

/** A portal JSON function serving `methods` (see the module comment). */
export function servePortalFunction(name: string, methods: readonly string[], handle: PortalHandler): (request: Request) => Promise<Response> {
  const logger = portalLog.with({ function: name });
  return serveEndpoint({
    methods,
    errors: portalErrors,
    logger,
    preflightHeaders: CORS_HEADERS,
    handle: (request) => handle(request, requestLogger(logger, request)),
  });
}

/**
 * Reads a JSON body and validates it against a schema: 400 invalid_json, invalid_body or 413
 * otherwise. The body need not be labelled application/json, as it never had to be.
 */
export async function readJsonBody<Schema extends z.ZodType>(request: Request, schema: Schema): Promise<z.output<Schema>> {
  const body = await readJson(request, { errors: portalErrors, maxBytes: MAX_JSON_BODY_BYTES, contentType: null });
  return validate(schema, body, "body", portalErrors);
}

/**
 * The original client's address as the gateway forwarded it, to pass on when a function calls the
 * data API for an anonymous visitor: the local gateway then rate-limits that visitor, not the
 * functions host every such call comes from. Hosted Supabase sets and ignores the header itself.
 */
export function forwardedFor(request: Request): string | null {
  return request.headers.get("x-forwarded-for")?.split(",")[0]?.trim() || null;
}
