import { Hono } from "hono";
import type { StackConfig } from "../config.ts";
import type { PlatformService } from "../http.ts";
import type { AuthContext } from "./context.ts";
import { connectAuthDatabase } from "./db.ts";
import { AuthError, errorResponse, OAuthError } from "./errors.ts";
import { logAuthError } from "./log.ts";
import { adminRoutes } from "./routes-admin.ts";
import { logoutRoutes } from "./routes-logout.ts";
import { metaRoutes } from "./routes-meta.ts";
import { signupRoutes } from "./routes-signup.ts";
import { tokenRoutes } from "./routes-token.ts";
import { userRoutes } from "./routes-user.ts";
import { verifyRoutes } from "./routes-verify.ts";
import { readAuthSettings, type AuthSettings } from "./settings.ts";

/**
 * The GoTrue-compatible auth service the gateway mounts at `/auth/v1` (prefix already stripped, API
 * keys already translated to JWTs). Users, sessions and refresh tokens live in the `auth` schema as
 * GoTrue keeps them, so supabase-js, RLS (`auth.uid()`) and SQL seeds see what they would on Supabase.
 * `settings` defaults to supabase/config.toml's [auth]; tests pass others (e.g. signups off).
 */
export function createAuthService(config: StackConfig, settings: AuthSettings = readAuthSettings()): PlatformService {
  const context: AuthContext = { db: connectAuthDatabase(config), config, settings };
  const app = new Hono();
  app.route("/", metaRoutes(context));
  app.route("/", signupRoutes(context));
  app.route("/", tokenRoutes(context));
  app.route("/", userRoutes(context));
  app.route("/", logoutRoutes(context));
  app.route("/", verifyRoutes(context));
  app.route("/", adminRoutes(context));
  app.notFound(() => new Response("404 page not found\n", { status: 404, headers: { "Content-Type": "text/plain; charset=utf-8" } }));
  app.onError((error, c) => {
    if (!(error instanceof OAuthError) && !(error instanceof AuthError && error.status < 500)) {
      // The client only sees GoTrue's terse 500 message; the cause goes to the platform log.
      const internal = error instanceof AuthError ? error.internal : undefined;
      logAuthError("request failed", { method: c.req.method, path: new URL(c.req.url).pathname, error, internal });
    }
    return errorResponse(error, c.req.raw);
  });
  return {
    fetch: async (request) => app.fetch(request),
    close: async () => {
      await context.db.end({ timeout: 5 });
    },
  };
}
