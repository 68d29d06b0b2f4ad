import { describe, expect, it } from "vitest";
import { addressAllowed, hostAllowed, nonPublicRange, parseAddress, parseAllowList } from "./addresses.ts";

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

describe("the allow-list", () => {
  it("parses ranges, single addresses and host names, separated by commas or spaces", () => {
    const allow = parseAllowList(" 127.0.0.0/8, ::1  localhost,*.internal.test 10.1.2.3 ");
    expect(allow.hosts).toEqual(["localhost", "*.internal.test"]);
    expect(allow.ranges.map(([address, bits]) => `${address.toString()}/${bits}`)).toEqual(["127.0.0.0/8", "::1/128", "10.1.2.3/32"]);
  });

  it("is empty when the variable is unset or blank", () => {
    expect(parseAllowList(undefined)).toEqual({ hosts: [], ranges: [] });
    expect(parseAllowList("  ")).toEqual({ hosts: [], ranges: [] });
  });

  it("refuses an entry it cannot read instead of ignoring it", () => {
    expect(() => parseAllowList("127.0.0.0/99")).toThrow(/OUTBOUND_ALLOWED_HOSTS: "127.0.0.0\/99" is not a CIDR range/);
    expect(() => parseAllowList("local_host!")).toThrow(/neither a host name, an address nor a CIDR range/);
  });

  it("matches addresses by range, IPv4-mapped IPv6 included", () => {
    const allow = parseAllowList("127.0.0.0/8");
    expect(addressAllowed(allow, parseAddress("127.0.0.1")!)).toBe(true);
    expect(addressAllowed(allow, parseAddress("::ffff:127.0.0.1")!)).toBe(true);
    expect(addressAllowed(allow, parseAddress("::1")!)).toBe(false);
    expect(addressAllowed(allow, parseAddress("10.0.0.1")!)).toBe(false);
  });

  it("matches host names exactly, or sub-domains with *.", () => {
    const allow = parseAllowList("localhost,*.internal.test");
    expect(hostAllowed(allow, "localhost")).toBe(true);
    expect(hostAllowed(allow, "api.internal.test")).toBe(true);
    expect(hostAllowed(allow, "internal.test")).toBe(false);
    expect(hostAllowed(allow, "evilinternal.test")).toBe(false);
    expect(hostAllowed(allow, "localhost.evil.test")).toBe(false);
  });
});
