import { describe, expect, it } from "vitest";
import { DELIVERY_TIMEOUT_MS, deliverySettings } from "./settings.ts";

describe("the delivery worker's settings", () => {
  it("defaults to the spec: a 30 s time limit and the full retry schedule", () => {
    expect(DELIVERY_TIMEOUT_MS).toBe(30_000);
    expect(deliverySettings(() => undefined)).toEqual({ timeoutMs: 30_000, retryScale: 1 });
  });

  it("takes shorter figures for the test stack", () => {
    const env: Record<string, string> = { WEBHOOK_DELIVERY_TIMEOUT_MS: "3000", WEBHOOK_RETRY_DELAY_SCALE: "0.01" };
    expect(deliverySettings((name) => env[name])).toEqual({ timeoutMs: 3_000, retryScale: 0.01 });
  });

  it("refuses figures that make no sense, naming the variable", () => {
    for (const [name, value] of [["WEBHOOK_DELIVERY_TIMEOUT_MS", "60000"], ["WEBHOOK_DELIVERY_TIMEOUT_MS", "fast"], ["WEBHOOK_RETRY_DELAY_SCALE", "0"], ["WEBHOOK_RETRY_DELAY_SCALE", "2"]]) {
      expect(() => deliverySettings((asked) => (asked === name ? value : undefined)), `${name}=${value}`).toThrow(name);
    }
  });
});
