import { describe, expect, it } from "vitest";
import { BLOCK_TYPES, isBlockType, TRIGGER_KINDS } from "./catalogue.ts";

describe("the block catalogue", () => {
  it("knows every block type and its category", () => {
    expect(Object.fromEntries(Object.entries(BLOCK_TYPES).map(([type, info]) => [type, info.category]))).toEqual({
      api_trigger: "trigger",
      manual_trigger: "trigger",
      generic_webhook: "trigger",
      schedule: "trigger",
      condition: "control",
      router: "control",
      function: "core",
      variables: "core",
      wait: "core",
      response: "core",
      loop: "container",
      parallel: "container",
    });
    expect(isBlockType("function")).toBe(true);
    expect(isBlockType("toString")).toBe(false);
    expect(Object.keys(TRIGGER_KINDS).every((type) => BLOCK_TYPES[type as keyof typeof BLOCK_TYPES].category === "trigger")).toBe(true);
  });

  it("parses good configs and refuses unknown fields", () => {
    expect(BLOCK_TYPES.function.configSchema.safeParse({ code: "return 1;" }).success).toBe(true);
    expect(BLOCK_TYPES.function.configSchema.safeParse({ code: "x", codee: "y" }).success).toBe(false);
    expect(BLOCK_TYPES.wait.configSchema.safeParse({ amount: "<api.seconds>", unit: "seconds" }).success).toBe(true);
    expect(BLOCK_TYPES.schedule.configSchema.safeParse({ cronExpression: "* * *" }).success).toBe(false);
    expect(BLOCK_TYPES.loop.configSchema.safeParse({}).success).toBe(true);
  });
});
