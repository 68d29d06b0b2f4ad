/**
 * Credentials that must be refused, for the security suites: an access token signed with a secret
 * that is not the project's, one that expired, one whose signature was altered, and an API key of
 * the right form that was never issued.
 */
import { SignJWT } from "jose";
import { env } from "../helpers/env.ts";

/** The kinds of bad credential the suites send. */
export type BadCredential = "forged" | "expired" | "tampered" | "unissued-key";

async function sign(sub: string, secret: string, expiresAt: number): Promise<string> {
  return await new SignJWT({ sub, role: "authenticated", aud: "authenticated", email: `${sub}@example.test`, is_anonymous: false })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt(expiresAt - 3600)
    .setExpirationTime(expiresAt)
    .sign(new TextEncoder().encode(secret));
}

/** Bad tokens for the user `sub` (a real user, so only the token itself is wrong). */
export async function badTokens(sub: string): Promise<Record<Exclude<BadCredential, "unissued-key">, string>> {
  const now = Math.floor(Date.now() / 1000);
  const [forged, expired, valid] = await Promise.all([
    sign(sub, "not-the-project-secret-not-the-project-secret", now + 3600),
    sign(sub, env.jwtSecret, now - 60),
    sign(sub, env.jwtSecret, now + 3600),
  ]);
  const [header, payload, signature] = valid.split(".");
  // The same token with one claim changed (role service_role) and the old signature.
  const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>;
  const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, role: "service_role" })).toString("base64url")}.${signature}`;
  return { forged, expired, tampered };
}

/** An API key of the documented form (`orb_` and 48 hex characters) that was never issued. */
export const UNISSUED_KEY = `orb_${"0123456789abcdef".repeat(3)}`;
