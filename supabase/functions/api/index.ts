// The specs' /api/* surface (decisions.md, "Base URL"): a thin router that hands each path family
// to its service's handler in _shared. Served at /functions/v1/api/* and, locally, at the
// gateway's root /api/*; either way the path seen here starts with /api.
import { handleGamificationRequest } from "../_shared/gamification/http.ts";
import { handleWorkflowRequest } from "../_shared/workflows/api/routes.ts";

type Handler = (request: Request) => Promise<Response>;

const routes: [prefix: string, handler: Handler][] = [
  ["/api/v1/gamification/", handleGamificationRequest],
  ["/api/workflows/", handleWorkflowRequest],
];

Deno.serve(async (request) => {
  const { pathname } = new URL(request.url);
  const match = routes.find(([prefix]) => pathname.startsWith(prefix));
  if (match) return await match[1](request);
  return Response.json({ error: `No route for ${request.method} ${pathname}`, code: "NOT_FOUND" }, { status: 404 });
});
