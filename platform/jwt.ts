import { createHmac, timingSafeEqual } from "node:crypto";

// Verification of the stack's HS256 tokens, shared by the auth service (which answers with these
// reasons) and the gateway (which only needs to know who is calling).

/** Claims of any verified bearer token; API-key JWTs carry only some of them. */
export type VerifiedClaims = Record<string, unknown> & {
  sub?: unknown;
  role?: unknown;
  session_id?: unknown;
  aud?: unknown;
};

/** Why a token failed verification, worded as golang-jwt words it (GoTrue appends this text). */
export class JwtVerificationError extends Error {}

function decodeSegment(segment: string): unknown {
  if (!/^[A-Za-z0-9_-]*$/.test(segment)) throw new JwtVerificationError("token is malformed: could not base64 decode segment");
  try {
    return JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
  } catch {
    throw new JwtVerificationError("token is malformed: could not JSON decode segment");
  }
}

function numericClaim(claims: Record<string, unknown>, name: string): number | undefined {
  const value = claims[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number") throw new JwtVerificationError(`token is malformed: invalid type for claim ${name}`);
  return value;
}

/**
 * Verifies an HS256 token with the project secret and its time claims (exp, nbf, iat), the checks
 * GoTrue's parser makes. Asymmetric tokens are refused: this stack signs only with the secret.
 */
export function verifyJwt(token: string, secret: string, nowSeconds = Math.floor(Date.now() / 1000)): VerifiedClaims {
  const parts = token.split(".");
  if (parts.length !== 3) throw new JwtVerificationError("token is malformed: token contains an invalid number of segments");
  const header = decodeSegment(parts[0]);
  if (header === null || typeof header !== "object") throw new JwtVerificationError("token is malformed: could not JSON decode header");
  const alg = (header as Record<string, unknown>).alg;
  if (alg !== "HS256") throw new JwtVerificationError(`token is unverifiable: error while executing keyfunc: missing kid`);
  const expected = createHmac("sha256", secret).update(`${parts[0]}.${parts[1]}`).digest();
  const given = Buffer.from(parts[2], "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new JwtVerificationError("token signature is invalid: signature is invalid");
  }
  const claims = decodeSegment(parts[1]);
  if (claims === null || typeof claims !== "object" || Array.isArray(claims)) throw new JwtVerificationError("token is malformed: could not JSON decode claim");
  const record = claims as VerifiedClaims;
  const exp = numericClaim(record, "exp");
  const nbf = numericClaim(record, "nbf");
  const iat = numericClaim(record, "iat");
  if (exp !== undefined && nowSeconds >= exp) throw new JwtVerificationError("token has invalid claims: token is expired");
  if (nbf !== undefined && nowSeconds < nbf) throw new JwtVerificationError("token has invalid claims: token is not valid yet");
  if (iat !== undefined && nowSeconds < iat) throw new JwtVerificationError("token has invalid claims: token used before issued");
  return record;
}
