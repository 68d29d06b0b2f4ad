import { Buffer } from "node:buffer";
import { createHmac, createPublicKey, timingSafeEqual, verify as verifySignature, type JsonWebKey, type KeyObject } from "node:crypto";

// The platform's one JWT verifier, for the auth service (which answers with these reasons), the
// gateway (which only needs to know who is calling), the functions host's verify_jwt and storage
// (which check time claims by jose's rules and word failures as jose does): HS256 with the
// project's JWT secret, and ES256/RS256 with the public signing keys named by `kid`, as GoTrue
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

/** A claim whose value is a time (seconds since the epoch). */
export type TimeClaim = "exp" | "nbf" | "iat";

/**
 * Why a token failed, as a value: the services that answer with a reason word it their own way
 * (the auth service as golang-jwt, in the error's message; storage as jose, storage/jwt-wording.ts).
 * `alg` is the header's, for the failures about which key the token names.
 */
export type JwtFailure =
  | { reason: "segments" | "header" | "signature_encoding" | "signature" | "claims_encoding" | "claims" | "expired" | "not_yet_valid" | "issued_in_future" }
  | { reason: "unknown_key" | "wrong_algorithm"; alg: unknown }
  | { reason: "claim_type"; claim: TimeClaim };

/**
 * Why a token failed verification: `failure` says it as a value, the message as golang-jwt words it
 * (GoTrue appends this text to its own).
 */
export class JwtVerificationError extends Error {
  constructor(
    readonly failure: JwtFailure,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Whose rules the time claims follow. GoTrue's (golang-jwt): a null claim is an absent one, and an
 * `iat` in the future is refused. jose's, which the edge runtime's verify_jwt and Storage use: a
 * claim that is present must be a number (null included), each claim is checked in jose's order
 * (iat, nbf, exp), and `iat` is never compared with the clock.
 */
export type ClaimRules = "gotrue" | "jose";

/** How a token is checked besides its signature. */
export interface VerifyOptions {
  /** GoTrue's unless said otherwise. */
  claimRules?: ClaimRules;
}

function decodeSegment(segment: string, part: "header" | "claims"): unknown {
  if (!/^[A-Za-z0-9_-]*$/.test(segment)) {
    throw new JwtVerificationError({ reason: part === "header" ? "header" : "claims_encoding" }, "token is malformed: could not base64 decode segment");
  }
  try {
    return JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
  } catch {
    throw new JwtVerificationError({ reason: part }, "token is malformed: could not JSON decode segment");
  }
}

/** A time claim's value, or undefined when absent; `nullIsAbsent` is GoTrue's reading of null. */
function timeClaim(claims: Record<string, unknown>, claim: TimeClaim, nullIsAbsent: boolean): number | undefined {
  const value = claims[claim];
  if (value === undefined || (value === null && nullIsAbsent)) return undefined;
  if (typeof value !== "number") throw new JwtVerificationError({ reason: "claim_type", claim }, `token is malformed: invalid type for claim ${claim}`);
  return value;
}

/** Refuses a time claim that does not hold at `now` (exp reached, nbf or iat still ahead). */
function checkTime(claim: TimeClaim, value: number, now: number): void {
  if (claim === "exp" && now >= value) throw new JwtVerificationError({ reason: "expired" }, "token has invalid claims: token is expired");
  if (claim === "nbf" && now < value) throw new JwtVerificationError({ reason: "not_yet_valid" }, "token has invalid claims: token is not valid yet");
  if (claim === "iat" && now < value) throw new JwtVerificationError({ reason: "issued_in_future" }, "token has invalid claims: token used before issued");
}

/** The time claims under `rules` (see ClaimRules). */
function checkTimeClaims(claims: Record<string, unknown>, now: number, rules: ClaimRules): void {
  if (rules === "jose") {
    for (const claim of ["iat", "nbf", "exp"] as const) {
      const value = timeClaim(claims, claim, false);
      if (value !== undefined && claim !== "iat") checkTime(claim, value, now);
    }
    return;
  }
  // golang-jwt reads every time claim before it compares any.
  const values = (["exp", "nbf", "iat"] as const).map((claim) => [claim, timeClaim(claims, claim, true)] as const);
  for (const [claim, value] of values) if (value !== undefined) checkTime(claim, value, now);
}

/** Checks the signature of `header.payload` with the key GoTrue's keyfunc would pick. */
function signatureValid(header: Record<string, unknown>, signingInput: string, signature: Buffer, keys: VerificationKeys): boolean {
  const alg = header.alg;
  const kid = typeof header.kid === "string" ? header.kid : undefined;
  const published = kid === undefined ? undefined : keys.byKid.get(kid);
  if (published) {
    if (alg !== published.alg) throw new JwtVerificationError({ reason: "wrong_algorithm", alg }, `token signature is invalid: signing method ${String(alg)} is invalid`);
    const options = published.alg === "ES256" ? { key: published.key, dsaEncoding: "ieee-p1363" as const } : published.key;
    return verifySignature("sha256", Buffer.from(signingInput), options, signature);
  }
  if (alg !== "HS256") {
    throw new JwtVerificationError({ reason: "unknown_key", alg }, `token is unverifiable: error while executing keyfunc: unrecognized JWT kid ${kid ?? "<nil>"} for algorithm ${String(alg)}`);
  }
  const expected = createHmac("sha256", keys.secret).update(signingInput).digest();
  return signature.length === expected.length && timingSafeEqual(signature, expected);
}

/**
 * Verifies a token and its time claims (exp, nbf and, under GoTrue's rules, iat): a `kid` the stack
 * publishes selects that key; otherwise only HS256 with the project secret is accepted.
 */
export function verifyJwt(token: string, keys: VerificationKeys, nowSeconds = Math.floor(Date.now() / 1000), options: VerifyOptions = {}): VerifiedClaims {
  const parts = token.split(".");
  if (parts.length !== 3) throw new JwtVerificationError({ reason: "segments" }, "token is malformed: token contains an invalid number of segments");
  const header = decodeSegment(parts[0], "header");
  if (header === null || typeof header !== "object" || Array.isArray(header)) throw new JwtVerificationError({ reason: "header" }, "token is malformed: could not JSON decode header");
  if (!/^[A-Za-z0-9_-]*$/.test(parts[2])) throw new JwtVerificationError({ reason: "signature_encoding" }, "token is malformed: could not base64 decode signature");
  if (!signatureValid(header as Record<string, unknown>, `${parts[0]}.${parts[1]}`, Buffer.from(parts[2], "base64url"), keys)) {
    throw new JwtVerificationError({ reason: "signature" }, "token signature is invalid: signature is invalid");
  }
  const claims = decodeSegment(parts[1], "claims");
  if (claims === null || typeof claims !== "object" || Array.isArray(claims)) throw new JwtVerificationError({ reason: "claims" }, "token is malformed: could not JSON decode claim");
  checkTimeClaims(claims as Record<string, unknown>, nowSeconds, options.claimRules ?? "gotrue");
  return claims as VerifiedClaims;
}
