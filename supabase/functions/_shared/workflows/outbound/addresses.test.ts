import { describe, expect, it } from "vitest";
import { addressListed, hostListed, nonPublicRange, parseAddress, parseAllowList, parseDeniedAddresses } from "./addresses.ts";

function range(text: string): string | null {
  const address = parseAddress(text);
  if (!address) throw new Error(`${text} did not parse`);
  return nonPublicRange(address);
}

describe("nonPublicRange", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["0.0.0.0", "unspecified"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["100.100.100.200", "carrierGradeNat"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["192.0.2.10", "reserved"],
    ["240.0.0.1", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1", "linkLocal"],
    ["fe80::1%eth0", "linkLocal"],
    ["fd00::1", "uniqueLocal"],
    ["fd00:ec2::254", "uniqueLocal"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:169.254.169.254", "linkLocal"],
    ["::ffff:a00:1", "private"],
    ["64:ff9b::a00:1", "private"],
    ["2002:7f00:1::", "loopback"],
    ["::808:808", "ipv4Compatible"],
    ["::7f00:1", "ipv4Compatible"],
    ["2001:db8::1", "reserved"],
    ["[::1]", "loopback"],
  ])("refuses %s (%s)", (text, expected) => {
    expect(range(text)).toBe(expected);
  });

  it.each(["93.184.216.34", "8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::"])("accepts the public address %s", (text) => {
    expect(range(text)).toBeNull();
  });

  it("refuses the IPv4-compatible spelling of loopback", () => {
    expect(range("::127.0.0.1")).not.toBeNull();
  });

  it("reads the unusual IPv4 spellings as the numbers they are", () => {
    expect(parseAddress("0x7f000001")?.toString()).toBe("127.0.0.1");
    expect(parseAddress("2130706433")?.toString()).toBe("127.0.0.1");
    expect(parseAddress("0177.0.0.1")?.toString()).toBe("127.0.0.1");
    expect(parseAddress("127.1")?.toString()).toBe("127.0.0.1");
    expect(parseAddress("example.com")).toBeNull();
  });
});

/** An entry as `network/bits:ports`, for comparing parsed lists. */
function describeRanges(text: string): string[] {
  return parseAllowList(text).ranges.map(({ network, bits, ports }) => `${network.toString()}/${bits}${ports === null ? "" : `:${ports[0]}-${ports[1]}`}`);
}

describe("the allow-list", () => {
  it("parses ranges, single addresses and host names, separated by commas or spaces", () => {
    const allow = parseAllowList(" 127.0.0.0/8, ::1  localhost,*.internal.test 10.1.2.3 ");
    expect(allow.hosts).toEqual([{ pattern: "localhost", ports: null }, { pattern: "*.internal.test", ports: null }]);
    expect(describeRanges(" 127.0.0.0/8, ::1  localhost,*.internal.test 10.1.2.3 ")).toEqual(["127.0.0.0/8", "::1/128", "10.1.2.3/32"]);
  });

  it("reads a port or a port range after any entry, IPv6 forms in brackets", () => {
    expect(describeRanges("127.0.0.1:40000-49999 [::1]:8080 127.0.0.0/8:1024-65535 [fd00::/8]:443 [::1] 10.0.0.0/8:1")).toEqual([
      "127.0.0.1/32:40000-49999",
      "::1/128:8080-8080",
      "127.0.0.0/8:1024-65535",
      "fd00::/8:443-443",
      "::1/128",
      "10.0.0.0/8:1-1",
    ]);
    expect(parseAllowList("localhost:3000,*.internal.test:8000-8099").hosts).toEqual([{ pattern: "localhost", ports: [3000, 3000] }, { pattern: "*.internal.test", ports: [8000, 8099] }]);
  });

  it("is empty when the variable is unset or blank", () => {
    expect(parseAllowList(undefined)).toEqual({ hosts: [], ranges: [] });
    expect(parseAllowList("  ")).toEqual({ hosts: [], ranges: [] });
  });

  it("refuses an entry it cannot read instead of ignoring it", () => {
    expect(() => parseAllowList("127.0.0.0/99")).toThrow(/OUTBOUND_ALLOWED_HOSTS: "127.0.0.0\/99" is not a CIDR range/);
    expect(() => parseAllowList("local_host!")).toThrow(/neither a host name, an address nor a CIDR range/);
    for (const entry of ["127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:9-8", "127.0.0.1:", "localhost:http", "[::1]:1-", "127.0.0.0/8:1024-70000", "[::1]:80:81"]) {
      expect(() => parseAllowList(entry), entry).toThrow(`OUTBOUND_ALLOWED_HOSTS: "${entry}" has a port that is not N or N-M with 1 <= N <= M <= 65535`);
    }
    // Without brackets an IPv6 form's last group is never taken for a port.
    expect(describeRanges("::1:8080")).toEqual(["::1:8080/128"]);
    expect(() => parseDeniedAddresses("127.0.0.1:x")).toThrow(/^OUTBOUND_DENIED_ADDRESSES: /);
  });

  it("matches addresses by range, IPv4-mapped IPv6 included", () => {
    const allow = parseAllowList("127.0.0.0/8");
    expect(addressListed(allow, parseAddress("127.0.0.1")!)).toBe(true);
    expect(addressListed(allow, parseAddress("::ffff:127.0.0.1")!)).toBe(true);
    expect(addressListed(allow, parseAddress("::1")!)).toBe(false);
    expect(addressListed(allow, parseAddress("10.0.0.1")!)).toBe(false);
  });

  it("matches an entry with ports only on those ports, both ends included", () => {
    const allow = parseAllowList("127.0.0.0/8:1024-54320,[::1]:3000");
    const loopback = parseAddress("127.0.0.2")!;
    expect([1023, 1024, 8080, 54320, 54321, 65535].map((port) => addressListed(allow, loopback, port))).toEqual([false, true, true, true, false, false]);
    expect(addressListed(allow, parseAddress("::ffff:127.0.0.1")!, 54336)).toBe(false);
    expect(addressListed(allow, parseAddress("::1")!, 3000)).toBe(true);
    expect(addressListed(allow, parseAddress("::1")!, 3001)).toBe(false);
    // Without a port: whether the entry holds the address on some port.
    expect(addressListed(allow, loopback)).toBe(true);
  });

  it("matches host names exactly, or sub-domains with *., on their ports", () => {
    const allow = parseAllowList("localhost,*.internal.test,models.test:8000-8001");
    expect(hostListed(allow, "localhost")).toBe(true);
    expect(hostListed(allow, "localhost", 54336)).toBe(true);
    expect(hostListed(allow, "api.internal.test")).toBe(true);
    expect(hostListed(allow, "internal.test")).toBe(false);
    expect(hostListed(allow, "evilinternal.test")).toBe(false);
    expect(hostListed(allow, "localhost.evil.test")).toBe(false);
    expect(hostListed(allow, "models.test", 8001)).toBe(true);
    expect(hostListed(allow, "models.test", 8002)).toBe(false);
  });
});
