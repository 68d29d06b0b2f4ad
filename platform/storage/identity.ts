import { JwtVerificationError, verifyJwt, type VerificationKeys, type VerifiedClaims } from "../keys/verify-jwt.ts";
import { storageErrors, type StorageFailure } from "./errors.ts";
import { joseWording } from "./jwt-wording.ts";

/** Who a request acts as: the verified token, its claims and the database role RLS will see. */
export interface Identity {
  token: string;
  claims: VerifiedClaims & { role: DatabaseRole };
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

/**
 * Verifies the Authorization header's JWT as Storage does (HS256 with the secret, or ES256/RS256
 * with the published key its `kid` names). Failures are AccessDenied in jose's words
 * (jwt-wording.ts), since that is what clients of Storage see.
 */
export function verifyAuthorization(authorization: string | null, keys: VerificationKeys): Identity {
  const token = (authorization ?? "").replace(BEARER, "");
  const claims = verifyToken(token, keys, storageErrors.accessDenied);
  const role = claims.role ?? "anon";
  if (!isDatabaseRole(role)) throw storageErrors.accessDenied(`role "${String(role)}" is not allowed`);
  return { token, claims: { ...claims, role }, role, sub: typeof claims.sub === "string" ? claims.sub : null };
}

/**
 * Verifies any token of this project (API requests and signed URLs alike) with the platform's one
 * verifier under jose's claim rules, as Storage does; a refusal is `refuse` of jose's words.
 */
export function verifyToken(token: string, keys: VerificationKeys, refuse: (message: string) => StorageFailure): VerifiedClaims {
  try {
    return verifyJwt(token, keys, undefined, { claimRules: "jose" });
  } catch (error) {
    if (error instanceof JwtVerificationError) throw refuse(joseWording(error.failure, keys));
    throw error;
  }
}

function isDatabaseRole(value: unknown): value is DatabaseRole {
  return typeof value === "string" && (DATABASE_ROLES as readonly string[]).includes(value);
}
