import type { MiddlewareHandler } from "hono";
import { html } from "hono/html";
import { layout } from "./layout.ts";

/**
 * Keeps other sites out of a dashboard that acts with the service_role key. A page elsewhere can
 * make the developer's browser post a form here (cross-site request forgery), and a name that
 * resolves to 127.0.0.1 can make its scripts read the answers (DNS rebinding); so only requests
 * addressed to this machine by its loopback names are served, and a form is accepted only from a
 * page of the dashboard itself (browsers always send Origin with a cross-site POST).
 */
export function localGuard(port: number): MiddlewareHandler {
  const allowed = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
  return async (c, next) => {
    const host = c.req.header("host") ?? "";
    const origin = c.req.header("origin");
    const foreignOrigin = c.req.method !== "GET" && c.req.method !== "HEAD" && origin !== undefined && !allowed.has(origin.replace(/^https?:\/\//, ""));
    if (!allowed.has(host) || foreignOrigin) {
      const why = foreignOrigin ? `A form from ${origin} cannot act on the local dashboard.` : `The local dashboard answers only at 127.0.0.1:${port} or localhost:${port}.`;
      return c.html(layout("Refused", "", { error: why }, html``), 403);
    }
    await next();
  };
}
