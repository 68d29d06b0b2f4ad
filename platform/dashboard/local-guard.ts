import type { MiddlewareHandler } from "hono";
import { html } from "hono/html";
import { layout } from "./layout.ts";

/**
 * Keeps other sites out of a dashboard that acts with the service_role key. A page elsewhere can
 * make the developer's browser post a form here (cross-site request forgery), and a name that
 * resolves to 127.0.0.1 can make its scripts read the answers (DNS rebinding); so only requests
 * addressed to this machine by its loopback names are served, and a form is accepted only from a
 * page of the dashboard itself (browsers always send Origin with a cross-site POST). The Origin must
 * be one of the dashboard's own, scheme, host and port alike: it serves plain http only, so an
 * `https://127.0.0.1:<port>` origin is another origin (issue 29, finding 7), and a browser's
 * `null` origin (sandboxed frames, some redirects) is refused too.
 */
export function localGuard(port: number): MiddlewareHandler {
  const allowed = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
  const ownOrigins = new Set([...allowed].map((authority) => `http://${authority}`));
  return async (c, next) => {
    const host = c.req.header("host") ?? "";
    const origin = c.req.header("origin");
    const foreignOrigin = c.req.method !== "GET" && c.req.method !== "HEAD" && origin !== undefined && !ownOrigins.has(origin);
    if (!allowed.has(host) || foreignOrigin) {
      const why = foreignOrigin ? `A form from ${origin} cannot act on the local dashboard.` : `The local dashboard answers only at 127.0.0.1:${port} or localhost:${port}.`;
      return c.html(layout("Refused", "", { error: why }, html``), 403);
    }
    await next();
  };
}
