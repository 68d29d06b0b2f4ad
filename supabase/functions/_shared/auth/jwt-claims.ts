/**
 * Verifies a Supabase session JWT inside a function, with the keys the platform gives every
 * function in SUPABASE_JWKS: asymmetric signing keys (ES256/RS256, looked up by `kid`) and, where
 * the project still signs with the legacy shared secret, its `oct` key (HS256). A token that no
 * key there can judge is reported as `unverifiable`, so the caller can leave the decision to
 * PostgREST rather than refuse a token the project would accept.
 */
import { createLocalJWKSet, decodeProtectedHeader, errors, importJWK, jwtVerify, type JWK, type JWTPayload, type ProtectedHeaderParameters } from "jose";

/** The outcome of checking one token. */
export type ClaimsCheck =
  | { status: "valid"; claims: JWTPayload }
  | { status: "expired" | "invalid"; reason: string }
  | { status: "unverifiable" };

/** Checks a compact JWT; never throws. */
export type ClaimsVerifier = (token: string) => Promise<ClaimsCheck>;

/** The roles a Supabase API token may carry; any other role is refused, as PostgREST's authenticator cannot take it. */
const API_ROLES: readonly unknown[] = ["anon", "authenticated", "service_role"];

/** Whether `role` is one of the API roles a token may carry. */
export function isApiRole(role: unknown): role is string {
  return API_ROLES.includes(role);
}

/** The protected header of a compact JWT, or null when it is not readable. */
function readHeader(token: string): ProtectedHeaderParameters | null {
  try {
    return decodeProtectedHeader(token);
  } catch {
    return null;
  }
}

/** Parses SUPABASE_JWKS into its symmetric and asymmetric keys; an absent or malformed set has none. */
function readKeySet(json: string | undefined): { secrets: JWK[]; published: JWK[] } {
  if (!json) return { secrets: [], published: [] };
  try {
    const keys = (JSON.parse(json) as { keys?: unknown }).keys;
    if (!Array.isArray(keys)) return { secrets: [], published: [] };
    const valid = keys.filter((key): key is JWK => key && typeof key === "object" && typeof (key as JWK).kty === "string");
    return { secrets: valid.filter((key) => key.kty === "oct"), published: valid.filter((key) => key.kty !== "oct") };
  } catch {
    return { secrets: [], published: [] };
  }
}

/** Builds a verifier from the JSON text of SUPABASE_JWKS (undefined: every token is unverifiable). */
export function createClaimsVerifier(jwksJson: string | undefined): ClaimsVerifier {
  const { secrets, published } = readKeySet(jwksJson);
  const secretKeys = Promise.all(secrets.map((jwk) => importJWK({ ...jwk, alg: "HS256" }, "HS256")));
  const publishedSet = published.length > 0 ? createLocalJWKSet({ keys: published }) : null;

  return async (token) => {
    const header = readHeader(token);
    if (!header || typeof header.alg !== "string") return { status: "invalid", reason: "unreadable JWT header" };
    const symmetric = header.alg === "HS256";
    if (symmetric ? secrets.length === 0 : !publishedSet || !published.some((key) => key.kid === header.kid)) {
      return { status: "unverifiable" };
    }
    const candidates = symmetric ? await secretKeys : [null];
    let failure: unknown = null;
    for (const key of candidates) {
      try {
        const { payload } = await (key ? jwtVerify(token, key, { algorithms: ["HS256"] }) : jwtVerify(token, publishedSet!));
        if (!isApiRole(payload.role)) {
          return { status: "invalid", reason: "the role claim is not anon, authenticated or service_role" };
        }
        return { status: "valid", claims: payload };
      } catch (error) {
        failure = error;
        // An expired token signed with this key is expired whatever the other keys say.
        if (error instanceof errors.JWTExpired) return { status: "expired", reason: "JWT expired" };
      }
    }
    return { status: "invalid", reason: failure instanceof Error ? failure.message : "invalid JWT" };
  };
}
