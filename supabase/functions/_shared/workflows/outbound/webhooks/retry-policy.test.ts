import { describe, expect, it } from "vitest";
import { judgeAttempt, MAX_JITTER, RETRY_DELAYS_MS, retryDelayMs } from "./retry-policy.ts";

describe("the webhook retry policy", () => {
  it("waits 5 s, 15 s, 1 min, 3 min and 10 min after the 1st to 5th failed attempt, then gives up", () => {
    expect([1, 2, 3, 4, 5, 6].map((attempt) => retryDelayMs(attempt, { random: () => 0 }))).toEqual([5_000, 15_000, 60_000, 180_000, 600_000, null]);
    expect(retryDelayMs(0)).toBeNull();
  });

  it("adds up to 10% jitter, never less than the delay nor more than 10% above it", () => {
    expect(MAX_JITTER).toBe(0.1);
    const almostOne = 1 - Number.EPSILON;
    expect([1, 2, 3, 4, 5].map((attempt) => retryDelayMs(attempt, { random: () => almostOne }))).toEqual([5_500, 16_500, 66_000, 198_000, 660_000]);
    for (let draw = 0; draw < 500; draw += 1) {
      const attempt = 1 + (draw % 5);
      const delay = retryDelayMs(attempt) ?? Number.NaN;
      expect(delay).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[attempt - 1]);
      expect(delay).toBeLessThanOrEqual(RETRY_DELAYS_MS[attempt - 1] * (1 + MAX_JITTER));
    }
  });

  it("spreads retries out rather than repeating one delay", () => {
    const delays = new Set(Array.from({ length: 50 }, () => retryDelayMs(3)));
    expect(delays.size).toBeGreaterThan(10);
  });

  it("scales the whole schedule for tests", () => {
    expect([1, 2, 3, 4, 5].map((attempt) => retryDelayMs(attempt, { random: () => 0.5, scale: 0.01 }))).toEqual([53, 158, 630, 1_890, 6_300]);
  });

  it("retries 5xx, 429, timeouts and connection failures; anything else is final", () => {
    expect(judgeAttempt({ kind: "status", status: 200 })).toBe("delivered");
    expect(judgeAttempt({ kind: "status", status: 204 })).toBe("delivered");
    expect(judgeAttempt({ kind: "status", status: 299 })).toBe("delivered");
    for (const status of [500, 502, 503, 504, 599, 429]) expect(judgeAttempt({ kind: "status", status }), String(status)).toBe("retryable");
    for (const status of [100, 301, 302, 304, 400, 401, 403, 404, 408, 409, 410, 422, 499]) expect(judgeAttempt({ kind: "status", status }), String(status)).toBe("final");
    expect(judgeAttempt({ kind: "unreachable" })).toBe("retryable");
    expect(judgeAttempt({ kind: "refused" })).toBe("final");
  });
});
