/**
 * Routing on Hono, the same way for every service: a route table becomes a Hono app whose wrong
 * methods answer 405 with `Allow`, whose unknown paths answer the service's 404, whose thrown
 * `HttpError`s are rendered in the service's envelope and whose anything-else is logged and
 * answered as the service's 500. A path with a malformed percent-escape names no resource, so it
 * is a 404 too (Hono would otherwise hand the raw escape to the handler). `serveEndpoint` does the
 * same for a function that is one endpoint (the portal's), without a route table.
 */
import { type Context, Hono } from "hono";
import { HttpError, type Problem, type ServiceErrors, toHttpError } from "./errors.ts";
import { type Logger, requestLogger } from "./logger.ts";

/** One route: a method, a Hono path pattern (`/rankings/categoria/:categoria`), its handler. */
export interface Route {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  handle(c: Context): Response | Promise<Response>;
}

/** What a service's routes share: its errors and its logger. */
export interface ServiceContext {
  errors: ServiceErrors;
  logger: Logger;
}

/** The service's answer for anything thrown while serving `request`; unexpected errors are logged. */
export async function answerError(thrown: unknown, request: Request, { errors, logger }: ServiceContext): Promise<Response> {
  if (!(thrown instanceof HttpError)) requestLogger(logger, request).error("unhandled_error", { error: thrown });
  return await errors.render(toHttpError(thrown, errors));
}

/** The service's 405, with `Allow` listing `allowed` whatever the service's wording. */
function methodNotAllowed(errors: ServiceErrors, problem: Extract<Problem, { kind: "method_not_allowed" }>): HttpError {
  const error = errors.describe(problem);
  return new HttpError(error.status, error.code, error.message, error.details, { ...error.headers, Allow: problem.allowed.join(", ") });
}

/** Whether every segment of a raw path decodes (a malformed escape such as `%E0%A4%A` does not). */
function decodes(pathname: string): boolean {
  try {
    pathname.split("/").forEach((segment) => decodeURIComponent(segment));
    return true;
  } catch {
    return false;
  }
}

/** A Hono app serving `routes` with the service's errors (see the module comment). Mount it with `app.route(prefix, ...)`. */
export function createRouter(routes: readonly Route[], service: ServiceContext): Hono {
  const { errors } = service;
  const notFound = (c: Context) => errors.describe({ kind: "not_found", method: c.req.method, path: new URL(c.req.url).pathname });
  const app = new Hono({ strict: false });
  app.onError((error, c) => answerError(error, c.req.raw, service));
  app.notFound(async (c) => await errors.render(notFound(c)));
  app.use("*", async (c, next) => {
    if (c.req.url.includes("%") && !decodes(new URL(c.req.url).pathname)) throw notFound(c);
    await next();
  });

  const allowed = new Map<string, string[]>();
  for (const route of routes) {
    app.on(route.method, route.path, (c) => route.handle(c));
    allowed.set(route.path, [...(allowed.get(route.path) ?? []), route.method]);
  }
  // Registered after every route, so they only see the methods no route of the path took.
  for (const [path, methods] of allowed) {
    app.all(path, (c) => {
      throw methodNotAllowed(errors, { kind: "method_not_allowed", method: c.req.method, path: new URL(c.req.url).pathname, allowed: methods });
    });
  }
  app.all("*", (c) => {
    throw notFound(c);
  });
  return app;
}

/** Options of `serveEndpoint`. */
export interface EndpointOptions extends ServiceContext {
  /** The methods the endpoint serves; others answer the service's 405 with `Allow`. */
  methods: readonly string[];
  /** When set, OPTIONS is a CORS preflight answered 204 with these headers. */
  preflightHeaders?: Record<string, string>;
  handle(request: Request): Promise<Response>;
}

/** A request handler for a function that is a single endpoint (see the module comment). */
export function serveEndpoint(options: EndpointOptions): (request: Request) => Promise<Response> {
  const { methods, preflightHeaders, handle, errors } = options;
  return async (request) => {
    if (request.method === "OPTIONS" && preflightHeaders) return new Response(null, { status: 204, headers: preflightHeaders });
    try {
      if (!methods.includes(request.method)) {
        throw methodNotAllowed(errors, { kind: "method_not_allowed", method: request.method, path: new URL(request.url).pathname, allowed: methods });
      }
      return await handle(request);
    } catch (thrown) {
      return await answerError(thrown, request, options);
    }
  };
}
