import { verificationKeysFromJwks, verifyJwt } from "../../keys/verify-jwt.ts";

/**
 * verify_jwt as the local edge runtime applies it, through the platform's one verifier
 * (keys/verify-jwt.ts) under jose's claim rules, which the runtime's own check uses: an HS256 token
 * signed with the project's JWT secret, or an ES256/RS256 token signed by one of the project's
 * signing keys (looked up by the header's `kid`, as the CLI's runtime checks SUPABASE_JWKS), not
 * expired and not used before `nbf`.
 */

/** The check's answer: the claims of a valid token, or only that it is not valid. */
export type JwtCheck = { ok: true; claims: Record<string, unknown> } | { ok: false };

/** Builds a verifier bound to the project's secret and public signing keys (imported once). */
export function createJwtVerifier(secret: string, publicKeys: JsonWebKey[] = []): (token: string, nowSeconds?: number) => Promise<JwtCheck> {
  const keys = verificationKeysFromJwks(secret, publicKeys);
  return async (token, nowSeconds = Math.floor(Date.now() / 1000)) => {
    try {
      return { ok: true, claims: verifyJwt(token, keys, nowSeconds, { claimRules: "jose" }) };
    } catch {
      return { ok: false };
    }
  };
}
