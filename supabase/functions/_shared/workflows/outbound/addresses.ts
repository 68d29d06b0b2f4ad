/**
 * Which addresses the service may call: only public unicast addresses, unless the operator's
 * allow-list (`OUTBOUND_ALLOWED_HOSTS`) names the host or a range holding the address. Private
 * (RFC 1918), loopback, link-local (cloud metadata at 169.254.169.254), unique-local, CGNAT,
 * multicast, reserved and unspecified addresses are refused, in every spelling: addresses are
 * compared as parsed numbers (ipaddr.js), never as text, and IPv6 forms that carry an IPv4 address
 * (IPv4-mapped `::ffff:127.0.0.1`, NAT64 `64:ff9b::…`, 6to4 `2002:…`) are judged by that address.
 */
import ipaddr from "ipaddr.js";
import { readEnv } from "../../db/env.ts";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** The environment variable holding the allow-list: hosts or CIDR ranges, separated by commas or spaces. */
export const ALLOWED_HOSTS_VARIABLE = "OUTBOUND_ALLOWED_HOSTS";

/** What the operator allows beyond public addresses. */
export interface AllowList {
  /** Host names (lower case) whose addresses are accepted whatever they are; `*.example.com` covers sub-domains. */
  hosts: readonly string[];
  /** Ranges whose addresses are accepted even when private. */
  ranges: readonly [Address, number][];
}

/** Nothing beyond public addresses: what a hosted deployment runs with. */
export const EMPTY_ALLOW_LIST: AllowList = { hosts: [], ranges: [] };

/** Parses an address as the socket layer would see it, or null when `text` is not one. */
export function parseAddress(text: string): Address | null {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  // A zone id (`fe80::1%eth0`) names an interface: the address itself is what is judged.
  const withoutZone = bare.includes(":") ? bare.replace(/%.*$/, "") : bare;
  return ipaddr.isValid(withoutZone) ? ipaddr.parse(withoutZone) : null;
}

/** The IPv4 address an IPv6 address stands for (mapped, translated, NAT64, 6to4), if any. */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const range = address.range();
  const p = address.parts;
  if (range === "ipv4Mapped" || range === "rfc6145" || range === "rfc6052") return new ipaddr.IPv4([p[6] >> 8, p[6] & 0xff, p[7] >> 8, p[7] & 0xff]);
  if (range === "6to4") return new ipaddr.IPv4([p[1] >> 8, p[1] & 0xff, p[2] >> 8, p[2] & 0xff]);
  return null;
}

/**
 * Why an address may not be called (`"loopback"`, `"private"`, `"linkLocal"`, …), or null when it is
 * a public unicast address.
 */
export function nonPublicRange(address: Address): string | null {
  if (address.kind() === "ipv4") {
    const range = (address as ipaddr.IPv4).range();
    return range === "unicast" ? null : range;
  }
  const v6 = address as ipaddr.IPv6;
  const embedded = embeddedIpv4(v6);
  if (embedded) return nonPublicRange(embedded);
  // The deprecated IPv4-compatible form (`::127.0.0.1`) and the rest of ::/96 have no public use.
  if (v6.parts.slice(0, 6).every((part) => part === 0)) return v6.range() === "unicast" ? "ipv4Compatible" : v6.range();
  const range = v6.range();
  return range === "unicast" ? null : range;
}

function hostMatches(pattern: string, host: string): boolean {
  return pattern.startsWith("*.") ? host.endsWith(pattern.slice(1)) : host === pattern;
}

/** True when the allow-list names `host` (lower case, IPv6 without brackets). */
export function hostAllowed(allow: AllowList, host: string): boolean {
  return allow.hosts.some((pattern) => hostMatches(pattern, host));
}

/** True when the allow-list has a range holding `address`. */
export function addressAllowed(allow: AllowList, address: Address): boolean {
  const candidates: Address[] = [address];
  // `::ffff:127.0.0.1` is 127.0.0.1 to the kernel, so an IPv4 range covers it too.
  if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()) candidates.push((address as ipaddr.IPv6).toIPv4Address());
  return allow.ranges.some(([network, bits]) => candidates.some((candidate) => candidate.kind() === network.kind() && candidate.match(network, bits)));
}

/**
 * Parses an allow-list: entries separated by commas or white space, each a CIDR range
 * (`127.0.0.0/8`, `::1/128`), a single address (`10.1.2.3`) or a host name (`localhost`,
 * `*.internal.example`). Throws on an entry that is none of these, so a typo is not a silent hole.
 */
export function parseAllowList(text: string | undefined): AllowList {
  const hosts: string[] = [];
  const ranges: [Address, number][] = [];
  for (const entry of (text ?? "").split(/[\s,]+/).filter(Boolean)) {
    if (entry.includes("/")) {
      if (!ipaddr.isValidCIDR(entry)) throw new Error(`${ALLOWED_HOSTS_VARIABLE}: "${entry}" is not a CIDR range`);
      ranges.push(ipaddr.parseCIDR(entry));
      continue;
    }
    const address = parseAddress(entry);
    if (address) ranges.push([address, address.kind() === "ipv4" ? 32 : 128]);
    else if (/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i.test(entry)) hosts.push(entry.toLowerCase().replace(/\.$/, ""));
    else throw new Error(`${ALLOWED_HOSTS_VARIABLE}: "${entry}" is neither a host name, an address nor a CIDR range`);
  }
  return { hosts, ranges };
}

let fromEnvironment: { text: string | undefined; list: AllowList } | null = null;

/** The allow-list of this process (`OUTBOUND_ALLOWED_HOSTS`), parsed once per value. */
export function allowListFromEnv(): AllowList {
  const text = readEnv(ALLOWED_HOSTS_VARIABLE);
  if (fromEnvironment === null || fromEnvironment.text !== text) fromEnvironment = { text, list: parseAllowList(text) };
  return fromEnvironment.list;
}
