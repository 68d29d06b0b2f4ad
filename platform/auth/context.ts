import { isIP } from "node:net";
import type { StackConfig } from "../config/stack-config.ts";
import type { Sql } from "./db.ts";
import type { AuthRateLimits } from "./rate-limits.ts";
import type { ClientInfo } from "./sessions-repository.ts";
import type { ProjectKeys } from "../keys/signing-keys.ts";
import type { AuthSettings } from "./settings.ts";

/** What every route of the auth service needs: the pool, the stack config, the [auth] settings and the keys. */
export interface AuthContext {
  db: Sql;
  config: StackConfig;
  settings: AuthSettings;
  /** The JWT secret and signing keys tokens are signed and checked with. */
  keys: ProjectKeys;
  /** `[auth.rate_limit]`'s per-address buckets. */
  limits: AuthRateLimits;
}

/** Roles whose tokens may call /admin (the CLI sets GOTRUE_JWT_ADMIN_ROLES=service_role). */
export const ADMIN_ROLES = ["service_role"];

/** The audience users are created in and tokens are checked against (GoTrue's JWT_AUD default). */
export const DEFAULT_AUDIENCE = "authenticated";

/** The role new users get (GoTrue's JWT_DEFAULT_GROUP_NAME). */
export const DEFAULT_ROLE = "authenticated";

/** GoTrue lets a caller pick the audience with X-JWT-AUD; otherwise the configured one. */
export function requestAudience(request: Request): string {
  return request.headers.get("x-jwt-aud") || DEFAULT_AUDIENCE;
}

/**
 * The caller's user agent and address, as stored on new sessions and audit entries. The gateway puts
 * the client address first in X-Forwarded-For; anything that is not an IP is dropped, since the
 * column is inet.
 */
export function clientInfo(request: Request): ClientInfo {
  const forwarded = request.headers.get("x-forwarded-for")?.split(",")[0]?.trim() ?? "";
  const ip = isIP(forwarded) ? forwarded : null;
  return { userAgent: request.headers.get("user-agent"), ip };
}
