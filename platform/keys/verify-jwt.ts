import { Buffer } from "node:buffer";
import { createHmac, createPublicKey, timingSafeEqual, verify as verifySignature, type JsonWebKey, type KeyObject } from "node:crypto";

// The platform's one JWT verifier, for the auth service (which answers with these reasons), the
// gateway (which only needs to know who is calling) and the functions host's verify_jwt: HS256 with
// the project's JWT secret, and ES256/RS256 with the public signing keys named by `kid`, as GoTrue
// checks them. Only node:crypto and node:buffer are used, which Deno provides too, so the functions
// host (a Deno process) imports this same module.

/** Claims of any verified bearer token; API-key JWTs carry only some of them. */
export type VerifiedClaims = Record<string, unknown> & {
  sub?: unknown;
  role?: unknown;
  session_id?: unknown;
  aud?: unknown;
};

/** Asymmetric algorithms the stack signs and verifies with (`supabase gen signing-key` makes both). */
export type AsymmetricAlgorithm = "ES256" | "RS256";

/** A public key that verifies tokens whose header names its `kid`. */
export interface PublicVerificationKey {
  alg: AsymmetricAlgorithm;
  key: KeyObject;
}

/** What tokens are checked against: the legacy secret and the published signing keys by kid. */
export interface VerificationKeys {
  secret: string;
  byKid: ReadonlyMap<string, PublicVerificationKey>;
}

/** Keys of a stack that signs with the secret alone. */
export function secretOnly(secret: string): VerificationKeys {
  return { secret, byKid: new Map() };
}

/**
 * Verification keys from public JWKs (as the functions host receives them, SUPABASE_JWKS-style);
 * keys without a kid, or of another algorithm than ES256/RS256, can not be named by a token and
 * are skipped.
 */
export function verificationKeysFromJwks(secret: string, jwks: readonly object[]): VerificationKeys {
  const byKid = new Map<string, PublicVerificationKey>();
  // `object`: Deno's JsonWebKey (the DOM's) and node's differ in type, not in shape.
  for (const jwk of jwks as readonly (JsonWebKey & { kid?: unknown; alg?: unknown })[]) {
    const { kid, alg } = jwk;
    if (typeof kid !== "string" || (alg !== "ES256" && alg !== "RS256")) continue;
    byKid.set(kid, { alg, key: createPublicKey({ key: jwk, format: "jwk" }) });
  }
  return { secret, byKid };
}

/** Why a token failed verification, worded as golang-jwt words it (GoTrue appends this text). */
export class JwtVerificationError extends Error {}

/** Which time claims are checked besides the signature. */
export interface VerifyOptions {
  /**
   * Refuse an `iat` in the future (and a non-numeric one), as GoTrue's parser does; the edge
   * runtime's verify_jwt (jose) does not look at `iat`, so the functions host turns this off.
   */
  issuedAt?: boolean;
}

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

/** Checks the signature of `header.payload` with the key GoTrue's keyfunc would pick. */
function signatureValid(header: Record<string, unknown>, signingInput: string, signature: Buffer, keys: VerificationKeys): boolean {
  const alg = header.alg;
  const kid = typeof header.kid === "string" ? header.kid : undefined;
  const published = kid === undefined ? undefined : keys.byKid.get(kid);
  if (published) {
    if (alg !== published.alg) throw new JwtVerificationError(`token signature is invalid: signing method ${String(alg)} is invalid`);
    const options = published.alg === "ES256" ? { key: published.key, dsaEncoding: "ieee-p1363" as const } : published.key;
    return verifySignature("sha256", Buffer.from(signingInput), options, signature);
  }
  if (alg !== "HS256") {
    throw new JwtVerificationError(`token is unverifiable: error while executing keyfunc: unrecognized JWT kid ${kid ?? "<nil>"} for algorithm ${String(alg)}`);
  }
  const expected = createHmac("sha256", keys.secret).update(signingInput).digest();
  return signature.length === expected.length && timingSafeEqual(signature, expected);
}

/**
 * Verifies a token and its time claims (exp, nbf, iat), the checks GoTrue's parser makes: a `kid`
 * the stack publishes selects that key; otherwise only HS256 with the project secret is accepted.
 */
export function verifyJwt(token: string, keys: VerificationKeys, nowSeconds = Math.floor(Date.now() / 1000), options: VerifyOptions = {}): VerifiedClaims {
  const parts = token.split(".");
  if (parts.length !== 3) throw new JwtVerificationError("token is malformed: token contains an invalid number of segments");
  const header = decodeSegment(parts[0]);
  if (header === null || typeof header !== "object" || Array.isArray(header)) throw new JwtVerificationError("token is malformed: could not JSON decode header");
  if (!/^[A-Za-z0-9_-]*$/.test(parts[2])) throw new JwtVerificationError("token is malformed: could not base64 decode signature");
  if (!signatureValid(header as Record<string, unknown>, `${parts[0]}.${parts[1]}`, Buffer.from(parts[2], "base64url"), keys)) {
    throw new JwtVerificationError("token signature is invalid: signature is invalid");
  }
  const claims = decodeSegment(parts[1]);
  if (claims === null || typeof claims !== "object" || Array.isArray(claims)) throw new JwtVerificationError("token is malformed: could not JSON decode claim");
  const record = claims as VerifiedClaims;
  const exp = numericClaim(record, "exp");
  const nbf = numericClaim(record, "nbf");
  const iat = options.issuedAt === false ? undefined : numericClaim(record, "iat");
  if (exp !== undefined && nowSeconds >= exp) throw new JwtVerificationError("token has invalid claims: token is expired");
  if (nbf !== undefined && nowSeconds < nbf) throw new JwtVerificationError("token has invalid claims: token is not valid yet");
  if (iat !== undefined && nowSeconds < iat) throw new JwtVerificationError("token has invalid claims: token used before issued");
  return record;
}
