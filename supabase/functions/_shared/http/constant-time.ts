/**
 * Comparing a secret someone sent with the one we hold without telling them, through the time it
 * takes, how much of it they got right: both are hashed (SHA-256) first, so the comparison always
 * runs over 32 bytes whatever their lengths, and every byte is compared.
 */

const encoder = new TextEncoder();

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/** Whether two secrets are equal, in time independent of where they differ. */
export async function secretsEqual(given: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([digest(given), digest(expected)]);
  let difference = 0;
  for (let index = 0; index < a.length; index++) difference |= a[index] ^ b[index];
  return difference === 0;
}

/** Whether two byte strings (e.g. HMAC signatures) are equal, in time independent of where they differ; lengths are not secret. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let index = 0; index < a.length; index++) difference |= a[index] ^ b[index];
  return difference === 0;
}
