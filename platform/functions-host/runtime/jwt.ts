/**
 * verify_jwt as the local edge runtime applies it: an HS256 token signed with the project's JWT
 * secret, not expired and not used before `nbf`. Only WebCrypto is used, so the module runs under
 * Deno (the host) and Node (its unit test) alike. Asymmetric tokens are refused: the local auth
 * service signs with the shared secret only.
 */

export type JwtCheck = { ok: true; claims: Record<string, unknown> } | { ok: false };

const encoder = new TextEncoder();

function base64UrlDecode(text: string): Uint8Array<ArrayBuffer> {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(text.length / 4) * 4, "=");
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

function decodeJson(part: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(base64UrlDecode(part)));
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Builds a verifier bound to one secret (the HMAC key is imported once). */
export function createJwtVerifier(secret: string): (token: string, nowSeconds?: number) => Promise<JwtCheck> {
  const key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  return async (token, nowSeconds = Math.floor(Date.now() / 1000)) => {
    const parts = token.split(".");
    if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9_-]*$/.test(part))) return { ok: false };
    const header = decodeJson(parts[0]);
    const claims = decodeJson(parts[1]);
    if (!header || !claims || header.alg !== "HS256") return { ok: false };
    let signature: Uint8Array<ArrayBuffer>;
    try {
      signature = base64UrlDecode(parts[2]);
    } catch {
      return { ok: false };
    }
    const valid = await crypto.subtle.verify("HMAC", await key, signature, encoder.encode(`${parts[0]}.${parts[1]}`));
    if (!valid) return { ok: false };
    if (claims.exp !== undefined && (typeof claims.exp !== "number" || claims.exp <= nowSeconds)) return { ok: false };
    if (claims.nbf !== undefined && (typeof claims.nbf !== "number" || claims.nbf > nowSeconds)) return { ok: false };
    return { ok: true, claims };
  };
}
