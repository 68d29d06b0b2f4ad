import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Hono } from "hono";
import { PROJECT_ROOT, type StackConfig } from "../config/stack-config.ts";
import type { PlatformService } from "../http/platform-service.ts";
import type { AuthContext } from "./context.ts";
import { connectAuthDatabase, type Sql } from "./db.ts";
import { AuthError, errorResponse, OAuthError } from "./errors.ts";
import { createLogger } from "../log/logger.ts";
import { AuthRateLimits } from "./rate-limits.ts";
import { adminRoutes } from "./routes-admin.ts";
import { factorRoutes } from "./routes-factors.ts";
import { inviteRoutes } from "./routes-invite.ts";
import { logoutRoutes } from "./routes-logout.ts";
import { metaRoutes } from "./routes-meta.ts";
import { otpRoutes } from "./routes-otp.ts";
import { signupRoutes } from "./routes-signup.ts";
import { tokenRoutes } from "./routes-token.ts";
import { unavailableRoutes } from "./routes-unavailable.ts";
import { userRoutes } from "./routes-user.ts";
import { verifyRoutes } from "./routes-verify.ts";
import { readAuthSettings, type AuthSettings } from "./settings.ts";
import { loadProjectKeys } from "../keys/signing-keys.ts";

/** GoTrue's MFA, one-time-token and flow-state tables, which the service brings up to date when it starts. */
/** Only failures whose cause the client can not see are logged: GoTrue answers them with a terse 500. */
const log = createLogger("auth");

const SCHEMA_FILES = ["21-auth-mfa-one-time-tokens.sql", "22-auth-flow-state.sql"].map((name) => join(PROJECT_ROOT, "platform", "postgres", "bootstrap", name));

/**
 * Applies the auth tables' latest definitions, as GoTrue migrates its schema on boot, so a cluster
 * created before they existed gains them. A database not reachable yet only skips this: the next
 * start applies it.
 */
async function migrate(db: Sql): Promise<void> {
  try {
    for (const file of SCHEMA_FILES) await db.unsafe(readFileSync(file, "utf8"));
  } catch (error) {
    log.error("could not bring the auth schema up to date", { error });
  }
}

/** Every path the service routes, to tell an unknown path (404) from a known one with the wrong method (405). */
function knownPath(path: string): boolean {
  return /^\/(health|settings|signup|token|user|logout|verify|otp|magiclink|recover|resend|reauthenticate|invite|factors(\/[^/]+(\/(challenge|verify))?)?|admin\/users(\/[^/]+(\/factors(\/[^/]+)?)?)?|admin\/generate_link|authorize|callback|\.well-known\/jwks\.json)\/?$/.test(path);
}

/**
 * The GoTrue-compatible auth service the gateway mounts at `/auth/v1` (prefix already stripped, API
 * keys already translated to JWTs). Users, sessions and refresh tokens live in the `auth` schema as
 * GoTrue keeps them, so supabase-js, RLS (`auth.uid()`) and SQL seeds see what they would on Supabase.
 * `settings` defaults to supabase/config.toml's [auth]; tests pass others (e.g. signups off).
 */
export function createAuthService(config: StackConfig, settings: AuthSettings = readAuthSettings(config.profile)): PlatformService {
  const db = connectAuthDatabase(config);
  const context: AuthContext = { db, config, settings, keys: loadProjectKeys(config.jwtSecret, settings), limits: new AuthRateLimits(settings.rateLimit) };
  const ready = migrate(db);
  const app = new Hono();
  app.route("/", metaRoutes(context));
  app.route("/", signupRoutes(context));
  app.route("/", tokenRoutes(context));
  app.route("/", userRoutes(context));
  app.route("/", logoutRoutes(context));
  app.route("/", verifyRoutes(context));
  app.route("/", otpRoutes(context));
  app.route("/", factorRoutes(context));
  app.route("/", inviteRoutes(context));
  app.route("/", adminRoutes(context));
  app.route("/", unavailableRoutes(context));
  // GoTrue's router answers these in plain text, which auth-js cannot parse; here they are JSON in
  // GoTrue's error shape.
  app.notFound((c) => {
    const path = new URL(c.req.url).pathname;
    const error = knownPath(path)
      ? new AuthError(405, "method_not_allowed", `${c.req.method} is not allowed on ${path}`)
      : new AuthError(404, "not_found", `No API route matches ${c.req.method} ${path}`);
    return errorResponse(error, c.req.raw);
  });
  app.onError((error, c) => {
    if (!(error instanceof OAuthError) && !(error instanceof AuthError && error.status < 500)) {
      // The client only sees GoTrue's terse 500 message; the cause goes to the platform log.
      const internal = error instanceof AuthError ? error.internal : undefined;
      log.error("request failed", { method: c.req.method, path: new URL(c.req.url).pathname, error, internal: internal instanceof Error || internal === undefined ? internal : String(internal) });
    }
    return errorResponse(error, c.req.raw);
  });
  return {
    fetch: async (request) => {
      await ready;
      return app.fetch(request);
    },
    close: async () => {
      await ready;
      await context.db.end({ timeout: 5 });
    },
  };
}
