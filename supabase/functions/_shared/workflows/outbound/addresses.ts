/**
 * Which addresses the service may call: only public unicast addresses, unless the operator's
 * allow-list (`OUTBOUND_ALLOWED_HOSTS`) names the host or a range holding the address, on the
 * port called; and never what `OUTBOUND_DENIED_ADDRESSES` lists, whatever the allow-list says. Private
 * (RFC 1918), loopback, link-local (cloud metadata at 169.254.169.254), unique-local, CGNAT,
 * multicast, reserved and unspecified addresses are refused, in every spelling: addresses are
 * compared as parsed numbers (ipaddr.js), never as text, and IPv6 forms that carry an IPv4 address
 * (IPv4-mapped `::ffff:127.0.0.1`, NAT64 `64:ff9b::…`, 6to4 `2002:…`) are judged by that address.
 */
import ipaddr from "ipaddr.js";
import { readEnv } from "../../config/env.ts";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** The environment variable holding the allow-list: entries separated by commas or spaces (parseAddressList). */
export const ALLOWED_HOSTS_VARIABLE = "OUTBOUND_ALLOWED_HOSTS";

/**
 * The environment variable holding what is refused whatever the allow-list says, in the same
 * syntax: the local platform lists its own services' ports there, so a workflow on a stack whose
 * allow-list opens loopback still cannot call pg-meta, the mail catcher or the dashboard. Hosted
 * deployments leave it unset.
 */
export const DENIED_ADDRESSES_VARIABLE = "OUTBOUND_DENIED_ADDRESSES";

/** Ports an entry covers, both ends included; null covers every port. */
export type PortRange = readonly [number, number] | null;

/** Host names, address ranges and their ports, as OUTBOUND_ALLOWED_HOSTS or OUTBOUND_DENIED_ADDRESSES list them. */
export interface AddressList {
  /** Host names (lower case), each matching any address it resolves to; `*.example.com` covers sub-domains. */
  hosts: readonly { pattern: string; ports: PortRange }[];
  /** Address ranges. */
  ranges: readonly { network: Address; bits: number; ports: PortRange }[];
}

/** What the operator allows beyond public addresses. */
export type AllowList = AddressList;

/** Nothing listed: the allow-list a hosted deployment runs with, and its (empty) denied list. */
export const EMPTY_ALLOW_LIST: AddressList = { hosts: [], ranges: [] };

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

/** Whether `ports` covers `port`; an undefined port asks about the address alone, whatever the port. */
function portMatches(ports: PortRange, port: number | undefined): boolean {
  return ports === null || port === undefined || (port >= ports[0] && port <= ports[1]);
}

/** True when the list names `host` (lower case, IPv6 without brackets) on `port`. */
export function hostListed(list: AddressList, host: string, port?: number): boolean {
  return list.hosts.some((entry) => hostMatches(entry.pattern, host) && portMatches(entry.ports, port));
}

/** True when the list has a range holding `address` on `port` (on some port when `port` is undefined). */
export function addressListed(list: AddressList, address: Address, port?: number): boolean {
  const candidates: Address[] = [address];
  // `::ffff:127.0.0.1` is 127.0.0.1 to the kernel, so an IPv4 range covers it too.
  if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()) candidates.push((address as ipaddr.IPv6).toIPv4Address());
  return list.ranges.some((entry) => portMatches(entry.ports, port) && candidates.some((candidate) => candidate.kind() === entry.network.kind() && candidate.match(entry.network, entry.bits)));
}

const HOST_NAME = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i;

/** `N` or `N-M`, 1 ≤ N ≤ M ≤ 65535, as a range; undefined when `text` is not one. */
function parsePorts(text: string): PortRange | undefined {
  const match = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(text);
  if (!match) return undefined;
  const low = Number(match[1]);
  const high = match[2] === undefined ? low : Number(match[2]);
  return low >= 1 && low <= high && high <= 65535 ? [low, high] : undefined;
}

/**
 * Splits an entry into what it names and its ports: `[v6 address or range]:ports`, `name:ports`,
 * `v4 address or range:ports`, or without `:ports` any of these (an unbracketed IPv6 form, which
 * has two colons or more, never carries a port).
 */
function splitPorts(entry: string, variable: string): { target: string; ports: PortRange } {
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(entry);
  let target = entry;
  let portText: string | undefined;
  if (bracketed) [, target, portText] = bracketed;
  else if (entry.split(":").length === 2) [target, portText] = entry.split(":");
  if (portText === undefined) return { target, ports: null };
  const ports = parsePorts(portText);
  if (ports === undefined) throw new Error(`${variable}: "${entry}" has a port that is not N or N-M with 1 <= N <= M <= 65535`);
  return { target, ports };
}

/**
 * Parses a list of entries separated by commas or white space, each a CIDR range (`127.0.0.0/8`,
 * `::1/128`), a single address (`10.1.2.3`, `::1`) or a host name (`localhost`,
 * `*.internal.example`), optionally followed by a port or port range (`127.0.0.1:8080`,
 * `127.0.0.0/8:1024-65535`, `[::1]:3000`, `localhost:3000`; an IPv6 form takes brackets before a
 * port). Without one, an entry covers every port. Throws on an entry it cannot read, naming
 * `variable`, so a typo is not a silent hole.
 */
export function parseAddressList(text: string | undefined, variable: string): AddressList {
  const hosts: { pattern: string; ports: PortRange }[] = [];
  const ranges: { network: Address; bits: number; ports: PortRange }[] = [];
  for (const entry of (text ?? "").split(/[\s,]+/).filter(Boolean)) {
    const { target, ports } = splitPorts(entry, variable);
    if (target.includes("/")) {
      if (!ipaddr.isValidCIDR(target)) throw new Error(`${variable}: "${entry}" is not a CIDR range`);
      const [network, bits] = ipaddr.parseCIDR(target);
      ranges.push({ network, bits, ports });
      continue;
    }
    const address = parseAddress(target);
    if (address) ranges.push({ network: address, bits: address.kind() === "ipv4" ? 32 : 128, ports });
    else if (HOST_NAME.test(target)) hosts.push({ pattern: target.toLowerCase().replace(/\.$/, ""), ports });
    else throw new Error(`${variable}: "${entry}" is neither a host name, an address nor a CIDR range`);
  }
  return { hosts, ranges };
}

/** Parses an allow-list (OUTBOUND_ALLOWED_HOSTS's syntax, parseAddressList). */
export function parseAllowList(text: string | undefined): AllowList {
  return parseAddressList(text, ALLOWED_HOSTS_VARIABLE);
}

/** Parses a denied list (OUTBOUND_DENIED_ADDRESSES, the same syntax). */
export function parseDeniedAddresses(text: string | undefined): AddressList {
  return parseAddressList(text, DENIED_ADDRESSES_VARIABLE);
}

const fromEnvironment = new Map<string, { text: string | undefined; list: AddressList }>();

/** The list an environment variable of this process holds, parsed once per value. */
function listFromEnv(variable: string): AddressList {
  const text = readEnv(variable);
  const known = fromEnvironment.get(variable);
  if (known !== undefined && known.text === text) return known.list;
  const list = parseAddressList(text, variable);
  fromEnvironment.set(variable, { text, list });
  return list;
}

/** The allow-list of this process (`OUTBOUND_ALLOWED_HOSTS`). */
export function allowListFromEnv(): AllowList {
  return listFromEnv(ALLOWED_HOSTS_VARIABLE);
}

/** What this process refuses whatever its allow-list says (`OUTBOUND_DENIED_ADDRESSES`). */
export function deniedListFromEnv(): AddressList {
  return listFromEnv(DENIED_ADDRESSES_VARIABLE);
}
