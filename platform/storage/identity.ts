import { errors as joseErrors, jwtVerify, type JWTPayload } from "jose";
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

/** HMAC key bytes of the project's JWT secret, for jose. */
export function secretKey(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

/**
 * Verifies the Authorization header's JWT (HS256 with the project secret, as Storage does with the
 * legacy secret). Failures become AccessDenied with the wording of the `jsonwebtoken` library that
 * Storage uses ("jwt expired", "invalid signature", ...), since that is what clients see.
 */
export async function verifyAuthorization(authorization: string | null, secret: Uint8Array): Promise<Identity> {
  const token = (authorization ?? "").replace(BEARER, "").trim();
  if (!token) throw storageErrors.accessDenied("jwt must be provided");
  const payload = await verifyToken(token, secret).catch((error: unknown) => {
    throw storageErrors.accessDenied(describeJwtError(error));
  });
  const role = payload.role ?? "anon";
  if (!isDatabaseRole(role)) throw storageErrors.accessDenied(`role "${String(role)}" is not allowed`);
  return { token, claims: { ...payload, role }, role, sub: typeof payload.sub === "string" ? payload.sub : null };
}

/** Verifies any HS256 token of this project (API requests and signed URLs alike). */
export async function verifyToken(token: string, secret: Uint8Array): Promise<JWTPayload & { role?: unknown }> {
  const { payload } = await jwtVerify(token, secret, { algorithms: ["HS256", "HS384", "HS512"] });
  return payload;
}

/** The `jsonwebtoken` message for a verification failure. */
export function describeJwtError(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return "jwt expired";
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return "invalid signature";
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return "invalid algorithm";
  if (error instanceof joseErrors.JWTClaimValidationFailed) return error.claim === "nbf" ? "jwt not active" : "invalid token";
  return "jwt malformed";
}

function isDatabaseRole(value: unknown): value is DatabaseRole {
  return typeof value === "string" && (DATABASE_ROLES as readonly string[]).includes(value);
}
