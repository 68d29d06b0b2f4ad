import { describe, expect, it } from "vitest";
import { NORMALIZED_NAME_PATTERN, normalizeBlockName, RESERVED_NAMES } from "./names.ts";

describe("block names", () => {
  it("lower-cases names and removes every space", () => {
    expect(normalizeBlockName("Check Age 2")).toBe("checkage2");
    expect(normalizeBlockName("  API\tTrigger ")).toBe("apitrigger");
  });

  it("accepts letters, digits, '_' and '-' after normalisation", () => {
    expect(NORMALIZED_NAME_PATTERN.test(normalizeBlockName("Send-Mail_1"))).toBe(true);
    expect(NORMALIZED_NAME_PATTERN.test(normalizeBlockName("Step #1"))).toBe(false);
    expect(NORMALIZED_NAME_PATTERN.test(normalizeBlockName("a.b"))).toBe(false);
  });

  it("reserves the heads that address the run's own state", () => {
    expect([...RESERVED_NAMES].sort()).toEqual(["loop", "parallel", "variable"]);
  });
});
