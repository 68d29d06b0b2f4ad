import { Hono } from "hono";
import { recordAudit } from "./audit-log.ts";
import { requireUser } from "./authenticate.ts";
import { clientInfo, type AuthContext } from "./context.ts";
import { badRequest } from "./errors.ts";
import { deleteAllSessions, deleteOtherSessions, deleteSession } from "./sessions-repository.ts";

/** The `scope` values auth-js sends to /logout; an empty scope means global, as in GoTrue. */
const SCOPES = { "": "global", global: "global", local: "local", others: "others" } as const;

/**
 * POST /logout?scope=global|local|others: 204. Deleting sessions cascades to their refresh tokens,
 * so the tokens stop refreshing at once; access tokens stay valid for PostgREST until they expire
 * but /user refuses them (their session is gone).
 */
async function logout(context: AuthContext, request: Request): Promise<Response> {
  const caller = await requireUser(request, context);
  const requested = new URL(request.url).searchParams.get("scope") ?? "";
  const scope = Object.keys(SCOPES).includes(requested) ? SCOPES[requested as keyof typeof SCOPES] : null;
  if (scope === null) throw badRequest("validation_failed", `Unsupported logout scope ${JSON.stringify(requested)}`);
  const { user } = caller.record;
  const sessionId = caller.session?.id ?? null;
  await context.db.begin(async (tx) => {
    await recordAudit(tx, user, "logout", clientInfo(request).ip);
    if (sessionId !== null && scope === "local") await deleteSession(tx, sessionId);
    else if (sessionId !== null && scope === "others") await deleteOtherSessions(tx, user.id, sessionId);
    else await deleteAllSessions(tx, user.id);
  });
  return new Response(null, { status: 204 });
}

/** Routes for POST /logout. */
export function logoutRoutes(context: AuthContext): Hono {
  const app = new Hono();
  app.post("/logout", (c) => logout(context, c.req.raw));
  return app;
}
