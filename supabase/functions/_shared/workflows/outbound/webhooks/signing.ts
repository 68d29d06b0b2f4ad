/**
 * Signing of webhook deliveries (spec, Authentication): `service-signature: t=<timestamp>,v1=<hex>`
 * where the hex digest is HMAC-SHA256, keyed with the subscription's secret, over the bytes
 * `<timestamp>.` followed by the exact bytes of the body sent. The timestamp is the attempt's
 * `service-timestamp` (Unix milliseconds), so each attempt carries a fresh one and a receiver can
 * refuse replays older than five minutes. Receivers verify the raw bytes they received, never a
 * re-serialised JSON (docs/webhooks.md).
 */

const encoder = new TextEncoder();

/** Imported keys by secret, so a busy subscription does not import its key for every attempt. */
const keys = new Map<string, Promise<CryptoKey>>();
const MAX_CACHED_KEYS = 500;

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= MAX_CACHED_KEYS) keys.delete(keys.keys().next().value as string);
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keys.set(secret, key);
  }
  return key;
}

/** The bytes signed for a body sent at `timestamp`: `<timestamp>.<body>`. */
export function signedContent(timestamp: number, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(`${timestamp}.`);
  const content = new Uint8Array(prefix.length + body.length);
  content.set(prefix);
  content.set(body, prefix.length);
  return content;
}

/** The `service-signature` header value for `body` sent at `timestamp` (Unix ms). */
export async function signatureHeader(secret: string, timestamp: number, body: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(secret), signedContent(timestamp, body)));
  return `t=${timestamp},v1=${Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}
