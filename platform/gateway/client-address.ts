import { BlockList, isIP } from "node:net";
import type { HeaderReader } from "./header-reader.ts";

/**
 * The proxies whose forwarding headers the gateway believes, as Kong's `trusted_ips` and GoTrue's
 * trusted proxies do: single addresses or CIDR ranges, IPv4 or IPv6. Any other peer's
 * `X-Forwarded-For` is ignored, so a client cannot choose its own rate-limit bucket.
 */
export class TrustedProxies {
  private readonly list = new BlockList();
  private count = 0;

  /** Parses a comma-separated list ("127.0.0.1, 10.0.0.0/8, ::1"); an empty text trusts nobody. */
  static parse(text: string, source = "the trusted proxy list"): TrustedProxies {
    const proxies = new TrustedProxies();
    for (const entry of text.split(",").map((part) => part.trim()).filter(Boolean)) proxies.add(entry, source);
    return proxies;
  }

  /** Trusts one more address or CIDR range. */
  add(entry: string, source = "the trusted proxy list"): this {
    const [address, prefix, extra] = entry.split("/");
    const family = isIP(address);
    const bits = prefix === undefined ? null : Number(prefix);
    const maxBits = family === 6 ? 128 : 32;
    if (family === 0 || extra !== undefined || (bits !== null && (!/^\d+$/.test(prefix) || bits > maxBits))) {
      throw new Error(`${source}: "${entry}" is not an IP address or CIDR range (e.g. 10.0.0.1, 10.0.0.0/8, ::1)`);
    }
    const type = family === 6 ? "ipv6" : "ipv4";
    if (bits === null) this.list.addAddress(address, type);
    else this.list.addSubnet(address, bits, type);
    this.count += 1;
    return this;
  }

  /** Whether a peer at this address may speak for its clients. */
  trusts(address: string): boolean {
    if (this.count === 0) return false;
    const plain = unmapped(address);
    const family = isIP(plain);
    return family !== 0 && this.list.check(plain, family === 6 ? "ipv6" : "ipv4");
  }
}

/** "::ffff:127.0.0.1" (an IPv4 peer on a dual-stack socket) as "127.0.0.1". */
function unmapped(address: string): string {
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/**
 * The client's address: the TCP peer, unless the peer is a trusted proxy. Then X-Forwarded-For is
 * read from the right (each proxy appends the address it saw), skipping trusted proxies, and the
 * first address that is not one is the client; entries further left were written by the client
 * and prove nothing. A malformed entry ends the walk at the last good one.
 */
export function clientAddressOf(headers: HeaderReader, peer: string, trusted: TrustedProxies): string {
  let client = unmapped(peer);
  if (!trusted.trusts(client)) return client;
  const hops = (headers.get("x-forwarded-for") ?? "").split(",").map((hop) => hop.trim()).filter(Boolean);
  for (const hop of hops.reverse()) {
    if (isIP(unmapped(hop)) === 0) break;
    client = unmapped(hop);
    if (!trusted.trusts(client)) break;
  }
  return client;
}
