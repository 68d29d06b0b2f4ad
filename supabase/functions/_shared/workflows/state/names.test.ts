import { describe, expect, it } from "vitest";
import { normalizeBlockName } from "./names.ts";

describe("block names", () => {
  it("lower-cases names and removes every space", () => {
    expect(normalizeBlockName("Check Age 2")).toBe("checkage2");
    expect(normalizeBlockName("  API\tTrigger ")).toBe("apitrigger");
  });
});
