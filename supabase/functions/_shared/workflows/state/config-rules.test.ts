import { describe, expect, it } from "vitest";
import { configRuleSchema } from "./config-rules.ts";

describe("config rules", () => {
  it("are checked against the vocabulary", () => {
    expect(configRuleSchema.safeParse({ rule: "unique", list: "a", field: "id", message: "m" }).success).toBe(true);
    expect(configRuleSchema.safeParse({ rule: "unique", list: "a.b", field: "id", message: "m" }).success).toBe(false);
    expect(configRuleSchema.safeParse({ rule: "requires", where: { field: "x", in: [] }, field: "y", message: "m" }).success).toBe(false);
    expect(configRuleSchema.safeParse({ rule: "sorted", list: "a", field: "id", message: "m" }).success).toBe(false);
  });
});
