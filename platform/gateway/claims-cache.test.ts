import { describe, expect, it } from "vitest";
import { secretOnly } from "../jwt.ts";
import { signHs256 } from "../keys.ts";
import { ClaimsCache } from "./claims-cache.ts";

const SECRET = "a-test-secret-of-at-least-thirty-two-characters";
const NOW = 1_800_000_000;

describe("ClaimsCache", () => {
  it("answers a verified token's claims again until its expiry, then refuses it", () => {
    const cache = new ClaimsCache(secretOnly(SECRET));
    const token = signHs256({ sub: "user-1", role: "authenticated", exp: NOW + 60 }, SECRET);
    expect(cache.claimsOf(token, NOW)).toMatchObject({ sub: "user-1" });
    expect(cache.claimsOf(token, NOW + 59)).toMatchObject({ sub: "user-1" });
    expect(cache.claimsOf(token, NOW + 60)).toBeNull();
    expect(cache.claimsOf(token, NOW + 30)).toMatchObject({ sub: "user-1" });
  });

  it("refuses forged, malformed and already expired tokens", () => {
    const cache = new ClaimsCache(secretOnly(SECRET));
    expect(cache.claimsOf(signHs256({ sub: "x", exp: NOW + 60 }, "another-secret-of-at-least-thirty-two-chars"), NOW)).toBeNull();
    expect(cache.claimsOf("not.a.token", NOW)).toBeNull();
    expect(cache.claimsOf(signHs256({ sub: "x", exp: NOW - 1 }, SECRET), NOW)).toBeNull();
  });

  it("keeps checking tokens correctly after it empties itself at capacity", () => {
    const cache = new ClaimsCache(secretOnly(SECRET), 2);
    const tokens = [1, 2, 3].map((n) => signHs256({ sub: `user-${n}`, exp: NOW + 60 }, SECRET));
    for (const token of tokens) expect(cache.claimsOf(token, NOW)).not.toBeNull();
    expect(cache.claimsOf(tokens[0], NOW)).toMatchObject({ sub: "user-1" });
    expect(cache.claimsOf(`${tokens[0]}x`, NOW)).toBeNull();
  });
});
