import { describe, expect, it } from "vitest";
import { parseTrustedProxies } from "./trusted-proxies.ts";

describe("parseTrustedProxies", () => {
  it("accepts addresses and CIDR ranges, IPv4 and IPv6, and an empty list", () => {
    expect(parseTrustedProxies(" 127.0.0.1, 10.0.0.0/8,2001:db8:aa::/48 ")).toEqual(["127.0.0.1", "10.0.0.0/8", "2001:db8:aa::/48"]);
    expect(parseTrustedProxies("")).toEqual([]);
  });

  it("refuses an entry that is not an address or CIDR range, naming it and where it came from", () => {
    for (const entry of ["localhost", "10.0.0.0/33", "10.0.0.0/8/1", "::1/129", "10.0.0.1/x"]) {
      expect(() => parseTrustedProxies(`127.0.0.1, ${entry}`, "ORBITA_TRUSTED_PROXIES")).toThrow(`ORBITA_TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range`);
    }
  });
});
