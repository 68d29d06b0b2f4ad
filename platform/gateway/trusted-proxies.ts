import { isIP } from "node:net";

/**
 * Reads ORBITA_TRUSTED_PROXIES: the proxies whose X-Forwarded-For the gateway believes, as Kong's
 * `trusted_ips` and GoTrue's trusted proxies do, comma-separated single addresses or CIDR ranges,
 * IPv4 or IPv6 (an empty text trusts nobody). Returns the entries; throws naming a bad one.
 */
export function parseTrustedProxies(text: string, source = "the trusted proxy list"): string[] {
  const entries = text.split(",").map((part) => part.trim()).filter(Boolean);
  for (const entry of entries) {
    const [address, prefix, extra] = entry.split("/");
    const family = isIP(address);
    const maxBits = family === 6 ? 128 : 32;
    if (family === 0 || extra !== undefined || (prefix !== undefined && (!/^\d+$/.test(prefix) || Number(prefix) > maxBits))) {
      throw new Error(`${source}: "${entry}" is not an IP address or CIDR range (e.g. 10.0.0.1, 10.0.0.0/8, ::1)`);
    }
  }
  return entries;
}
