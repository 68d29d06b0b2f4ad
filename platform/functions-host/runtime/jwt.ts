/**
 * verify_jwt as the local edge runtime applies it: an HS256 token signed with the project's JWT
 * secret, or an ES256/RS256 token signed by one of the project's signing keys (looked up by the
 * header's `kid`, as the CLI's runtime checks SUPABASE_JWKS), not expired and not used before
 * `nbf`. Only WebCrypto is used, so the module runs under Deno (the host) and Node (its unit
 * test) alike.
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

/** WebCrypto parameters of the asymmetric algorithms signing keys use. */
const ALGORITHMS: Record<string, { import: EcKeyImportParams | RsaHashedImportParams; verify: EcdsaParams | AlgorithmIdentifier }> = {
  ES256: { import: { name: "ECDSA", namedCurve: "P-256" }, verify: { name: "ECDSA", hash: "SHA-256" } },
  RS256: { import: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, verify: { name: "RSASSA-PKCS1-v1_5" } },
};

/** Imports each public JWK under its kid (keys of an algorithm other than ES256/RS256 are skipped). */
function importPublicKeys(publicKeys: JsonWebKey[]): Map<string, Promise<{ alg: string; key: CryptoKey }>> {
  const keys = new Map<string, Promise<{ alg: string; key: CryptoKey }>>();
  for (const jwk of publicKeys) {
    const { kid, alg } = jwk as JsonWebKey & { kid?: unknown };
    if (typeof kid !== "string" || typeof alg !== "string" || !(alg in ALGORITHMS)) continue;
    const { key_ops: _ops, ...material } = jwk;
    keys.set(kid, crypto.subtle.importKey("jwk", material, ALGORITHMS[alg].import, false, ["verify"]).then((key) => ({ alg, key })));
  }
  return keys;
}

/** Builds a verifier bound to the project's secret and public signing keys (imported once). */
export function createJwtVerifier(secret: string, publicKeys: JsonWebKey[] = []): (token: string, nowSeconds?: number) => Promise<JwtCheck> {
  const hmac = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const published = importPublicKeys(publicKeys);
  return async (token, nowSeconds = Math.floor(Date.now() / 1000)) => {
    const parts = token.split(".");
    if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9_-]*$/.test(part))) return { ok: false };
    const header = decodeJson(parts[0]);
    const claims = decodeJson(parts[1]);
    if (!header || !claims) return { ok: false };
    let signature: Uint8Array<ArrayBuffer>;
    try {
      signature = base64UrlDecode(parts[2]);
    } catch {
      return { ok: false };
    }
    const data = encoder.encode(`${parts[0]}.${parts[1]}`);
    const signer = typeof header.kid === "string" ? published.get(header.kid) : undefined;
    let valid: boolean;
    if (signer) {
      const { alg, key } = await signer;
      valid = header.alg === alg && (await crypto.subtle.verify(ALGORITHMS[alg].verify, key, signature, data));
    } else {
      valid = header.alg === "HS256" && (await crypto.subtle.verify("HMAC", await hmac, signature, data));
    }
    if (!valid) return { ok: false };
    if (claims.exp !== undefined && (typeof claims.exp !== "number" || claims.exp <= nowSeconds)) return { ok: false };
    if (claims.nbf !== undefined && (typeof claims.nbf !== "number" || claims.nbf > nowSeconds)) return { ok: false };
    return { ok: true, claims };
  };
}
