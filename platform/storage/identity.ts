import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet, type JWTPayload } from "jose";
import type { ProjectKeys } from "../keys/signing-keys.ts";
import { storageErrors } from "./errors.ts";

/** Who a request acts as: the verified token, its claims and the database role RLS will see. */
export interface Identity {
  token: string;
  claims: JWTPayload & { role: DatabaseRole };
  role: DatabaseRole;
  /** The `sub` claim (a user id), recorded as the owner of what the caller uploads. */
  sub: string | null;
}

/**
 * Roles a token may impersonate. Storage itself would `set role` to whatever the claim says; the
 * allowlist keeps a stray claim (say, the storage admin role this service connects as) from
 * escaping RLS through this service.
 */
export const DATABASE_ROLES = ["anon", "authenticated", "service_role"] as const;

/** One of the API roles. */
export type DatabaseRole = (typeof DATABASE_ROLES)[number];

const BEARER = /^Bearer\s+/i;

/** What Storage checks tokens with: the project's JWT secret (HMAC) and the public signing keys. */
export interface StorageKeys {
  secret: Uint8Array;
  jwks: JSONWebKeySet;
}

/** Storage's keys from the stack's keys. */
export function storageKeys(keys: Pick<ProjectKeys, "secret" | "published">): StorageKeys {
  return { secret: new TextEncoder().encode(keys.secret), jwks: { keys: keys.published as JSONWebKeySet["keys"] } };
}

/**
 * Verifies the Authorization header's JWT as Storage does (HS256 with the secret, or ES256/RS256
 * with the published key its `kid` names). Failures are AccessDenied with the message of the
 * `jose` library Storage uses ("Invalid Compact JWS" for a missing token, "signature verification
 * failed", `"exp" claim timestamp check failed`...), since that is what clients see. This is why
 * storage does not use the platform's verifier (keys/verify-jwt.ts), whose checks and wording are
 * GoTrue's; the keys are the same ones, from keys/signing-keys.ts.
 */
export async function verifyAuthorization(authorization: string | null, keys: StorageKeys): Promise<Identity> {
  const token = (authorization ?? "").replace(BEARER, "");
  const payload = await verifyToken(token, keys).catch((error: unknown) => {
    throw storageErrors.accessDenied(error instanceof Error ? error.message : "Invalid JWT");
  });
  const role = payload.role ?? "anon";
  if (!isDatabaseRole(role)) throw storageErrors.accessDenied(`role "${String(role)}" is not allowed`);
  return { token, claims: { ...payload, role }, role, sub: typeof payload.sub === "string" ? payload.sub : null };
}

/** Verifies any token of this project (API requests and signed URLs alike); throws jose's errors. */
export async function verifyToken(token: string, keys: StorageKeys): Promise<JWTPayload & { role?: unknown }> {
  const published = keys.jwks.keys.length > 0 ? createLocalJWKSet(keys.jwks) : null;
  const algorithms = ["HS256", ...(published ? ["ES256", "RS256"] : [])];
  const { payload } = await jwtVerify(
    token,
    async (header, input) => {
      if (header.alg.startsWith("HS") || !published) return keys.secret;
      return published(header, input);
    },
    { algorithms },
  );
  return payload;
}

/** The header of a token when it can be read (for telling tokens apart), else null. */
export function tokenHeader(token: string): ReturnType<typeof decodeProtectedHeader> | null {
  try {
    return decodeProtectedHeader(token);
  } catch {
    return null;
  }
}

function isDatabaseRole(value: unknown): value is DatabaseRole {
  return typeof value === "string" && (DATABASE_ROLES as readonly string[]).includes(value);
}
