import { describe, expect, it } from "vitest";
import { clientAddressOf, TrustedProxies } from "./client-address.ts";

const forwarded = (value?: string) => new Headers(value === undefined ? {} : { "x-forwarded-for": value });

describe("clientAddressOf", () => {
  it("takes the TCP peer and ignores X-Forwarded-For when no proxy is trusted (the default)", () => {
    const nobody = TrustedProxies.parse("");
    expect(clientAddressOf(forwarded("203.0.113.7"), "127.0.0.1", nobody)).toBe("127.0.0.1");
    expect(clientAddressOf(forwarded("203.0.113.7"), "::ffff:127.4.5.6", nobody)).toBe("127.4.5.6");
    expect(clientAddressOf(forwarded(), "2001:db8::1", nobody)).toBe("2001:db8::1");
  });

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy", () => {
    const trusted = TrustedProxies.parse("10.0.0.1");
    expect(clientAddressOf(forwarded("203.0.113.7"), "10.0.0.2", trusted)).toBe("10.0.0.2");
  });

  it("takes the address a trusted proxy appended, not what the client wrote before it", () => {
    const trusted = TrustedProxies.parse("10.0.0.1");
    expect(clientAddressOf(forwarded("198.51.100.9, 203.0.113.7"), "10.0.0.1", trusted)).toBe("203.0.113.7");
  });

  it("walks back through a chain of trusted proxies (addresses and CIDR ranges) to the first untrusted one", () => {
    const trusted = TrustedProxies.parse("10.0.0.0/8, 2001:db8:aa::/48, 127.0.0.1");
    expect(clientAddressOf(forwarded("198.51.100.9, 203.0.113.7, 10.1.2.3, 2001:db8:aa::5"), "127.0.0.1", trusted)).toBe("203.0.113.7");
  });

  it("falls back to the last good address when the header is missing, malformed or all trusted", () => {
    const trusted = TrustedProxies.parse("10.0.0.0/8");
    expect(clientAddressOf(forwarded(), "10.0.0.1", trusted)).toBe("10.0.0.1");
    expect(clientAddressOf(forwarded("203.0.113.7, not-an-ip"), "10.0.0.1", trusted)).toBe("10.0.0.1");
    expect(clientAddressOf(forwarded("not-an-ip, 10.9.9.9"), "10.0.0.1", trusted)).toBe("10.9.9.9");
    expect(clientAddressOf(forwarded("10.2.2.2, 10.3.3.3"), "10.0.0.1", trusted)).toBe("10.2.2.2");
  });
});

describe("TrustedProxies.parse", () => {
  it("refuses an entry that is not an address or CIDR range, naming it and where it came from", () => {
    for (const entry of ["localhost", "10.0.0.0/33", "10.0.0.0/8/1", "::1/129", "10.0.0.1/x"]) {
      expect(() => TrustedProxies.parse(`127.0.0.1, ${entry}`, "ORBITA_TRUSTED_PROXIES")).toThrow(`ORBITA_TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range`);
    }
  });

  it("trusts IPv4 peers given as IPv4-mapped IPv6 addresses", () => {
    expect(TrustedProxies.parse("127.0.0.2").trusts("::ffff:127.0.0.2")).toBe(true);
    expect(TrustedProxies.parse("127.0.0.2").trusts("127.0.0.3")).toBe(false);
  });
});
