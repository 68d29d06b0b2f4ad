import { mkdir } from "node:fs/promises";
import { Hono } from "hono";
import type { StackConfig } from "../config/stack-config.ts";
import type { PlatformService } from "../http/platform-service.ts";
import { resendError, ResendHttpError } from "./errors.ts";
import { inboxRoutes } from "./routes-inbox.ts";
import { resendRoutes } from "./routes-resend.ts";
import { MailStore } from "./store.ts";

/**
 * The local mail catcher: a Resend-compatible `POST /emails` (and `/emails/batch`) so the real
 * `resend` client pointed at it with `RESEND_BASE_URL` "sends" into a folder, plus a small JSON API
 * and an HTML inbox to read what was caught. Nothing ever leaves the machine.
 */
export function createMailService(config: StackConfig): PlatformService {
  const store = new MailStore(config.mailDir);
  const ready = mkdir(config.mailDir, { recursive: true });
  // Routes see the raw path without its trailing slashes: `/emails/` is `/emails`, and an encoded
  // id is not decoded into a match.
  const app = new Hono({ getPath: routedPath });
  app.use(async (c, next) => {
    await ready;
    // Hono would answer HEAD with the GET route; the catcher has no HEAD routes and says so.
    if (c.req.method === "HEAD") throw noRoute(c.req.method, routedPath(c.req.raw));
    await next();
  });
  app.route("/", resendRoutes(store));
  app.route("/", inboxRoutes(store));
  app.notFound((c) => resendError(noRoute(c.req.method, routedPath(c.req.raw))));
  app.onError((error) => {
    if (error instanceof ResendHttpError) return resendError(error);
    return resendError(new ResendHttpError(500, "application_error", error instanceof Error ? error.message : String(error)));
  });
  return { fetch: async (request) => app.fetch(request), close: async () => {} };
}

function routedPath(request: Request): string {
  return new URL(request.url).pathname.replace(/\/+$/, "") || "/";
}

function noRoute(method: string, path: string): ResendHttpError {
  return new ResendHttpError(404, "not_found", `No route for ${method} ${path}`);
}
