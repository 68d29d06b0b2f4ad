import { createHmac, timingSafeEqual } from "node:crypto";

/** Claims of a verified HS256 token, or null when the token is missing, malformed, forged or expired. */
export function verifiedClaims(authorization: string | null, secret: string): Record<string, unknown> | null {
  if (!authorization?.startsWith("Bearer ")) return null;
  const parts = authorization.slice(7).split(".");
  if (parts.length !== 3) return null;
  const expected = createHmac("sha256", secret).update(`${parts[0]}.${parts[1]}`).digest();
  const given = Buffer.from(parts[2], "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const claims = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8")) as Record<string, unknown>;
    if (typeof claims.exp === "number" && claims.exp < Date.now() / 1000) return null;
    return claims;
  } catch {
    return null;
  }
}
