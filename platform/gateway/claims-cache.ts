import { verifyJwt, type VerificationKeys, type VerifiedClaims } from "../jwt.ts";

/**
 * Bearer tokens the gateway has already verified, with their claims: a client sends the same
 * token with every request until it refreshes it, and checking its signature again each time was
 * a tenth of the gateway's CPU per request. An entry is used only until the token's `exp`; the
 * cache empties itself when full, so a flood of distinct tokens costs memory only up to `capacity`.
 */
export class ClaimsCache {
  private readonly entries = new Map<string, VerifiedClaims>();

  constructor(
    private readonly keys: VerificationKeys,
    private readonly capacity = 10_000,
  ) {}

  /** The token's claims, or null for a malformed, forged or expired token. */
  claimsOf(token: string, nowSeconds = Math.floor(Date.now() / 1000)): VerifiedClaims | null {
    const known = this.entries.get(token);
    if (known !== undefined) {
      if (typeof known.exp !== "number" || nowSeconds < known.exp) return known;
      this.entries.delete(token);
      return null;
    }
    let claims: VerifiedClaims;
    try {
      claims = verifyJwt(token, this.keys, nowSeconds);
    } catch {
      return null;
    }
    if (this.entries.size >= this.capacity) this.entries.clear();
    this.entries.set(token, claims);
    return claims;
  }
}
