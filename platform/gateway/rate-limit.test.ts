import { describe, expect, it } from "vitest";
import { RateLimiter } from "./rate-limit.ts";

describe("RateLimiter", () => {
  it("allows exactly the limit within a minute, then refuses with the seconds left", () => {
    let now = 1_000_000;
    const limiter = new RateLimiter({ rest: 3, auth: 1, functions: 1 }, () => now);
    expect([1, 2, 3].map(() => limiter.hit("rest", "u1").allowed)).toEqual([true, true, true]);
    now += 15_000;
    const refused = limiter.hit("rest", "u1");
    expect(refused).toMatchObject({ allowed: false, limit: 3, remaining: 0, resetSeconds: 45 });
  });

  it("keeps callers and route families apart", () => {
    const limiter = new RateLimiter({ rest: 1, auth: 1, functions: 1 }, () => 0);
    expect(limiter.hit("rest", "u1").allowed).toBe(true);
    expect(limiter.hit("rest", "u2").allowed).toBe(true);
    expect(limiter.hit("auth", "u1").allowed).toBe(true);
    expect(limiter.hit("rest", "u1").allowed).toBe(false);
  });

  it("opens a new window after a minute", () => {
    let now = 0;
    const limiter = new RateLimiter({ rest: 1, auth: 1, functions: 1 }, () => now);
    limiter.hit("rest", "u1");
    expect(limiter.hit("rest", "u1").allowed).toBe(false);
    now = 60_000;
    expect(limiter.hit("rest", "u1").allowed).toBe(true);
  });
});
