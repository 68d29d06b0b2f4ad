import { describe, expect, it } from "vitest";
import { configRuleProblems, configRuleSchema, fillMessage, type ConfigRule } from "./config-rules.ts";

describe("config rules", () => {
  it("fill message placeholders from the entry at fault", () => {
    expect(fillMessage('"{kind}" needs {what}; {missing}.', { kind: "if", what: 2 })).toBe('"if" needs 2; .');
    expect(fillMessage("{a} and {b}", { a: null, b: { x: 1 } })).toBe('null and {"x":1}');
  });

  it("apply to the config itself when they name no list", () => {
    const rules: ConfigRule[] = [{ rule: "forbids", where: { field: "method", in: ["GET"] }, field: "body", message: "a {method} request has no body" }];
    expect(configRuleProblems(rules, { method: "GET", body: "x" }, "blocks.h.config")).toEqual([{ field: "blocks.h.config.body", message: "a GET request has no body" }]);
    expect(configRuleProblems(rules, { method: "POST", body: "x" }, "blocks.h.config")).toEqual([]);
  });

  it("treat a missing field as in no list of values", () => {
    const rules: ConfigRule[] = [
      { rule: "requires", list: "rows", where: { field: "op", notIn: ["none"] }, field: "arg", message: "needs arg" },
      { rule: "forbids", list: "rows", where: { field: "op", in: ["none"] }, field: "arg", message: "no arg" },
    ];
    expect(configRuleProblems(rules, { rows: [{}, { arg: 1 }] }, "c")).toEqual([{ field: "c.rows[0].arg", message: "needs arg" }]);
  });

  it("count blank text as missing only when asked", () => {
    const rule = (blankIsMissing: boolean): ConfigRule[] => [{ rule: "requires", where: { field: "on", in: [true] }, field: "text", blankIsMissing, message: "m" }];
    expect(configRuleProblems(rule(true), { on: true, text: " \n" }, "c")).toHaveLength(1);
    expect(configRuleProblems(rule(false), { on: true, text: " \n" }, "c")).toHaveLength(0);
  });

  it("are checked against the vocabulary", () => {
    expect(configRuleSchema.safeParse({ rule: "unique", list: "a", field: "id", message: "m" }).success).toBe(true);
    expect(configRuleSchema.safeParse({ rule: "unique", list: "a.b", field: "id", message: "m" }).success).toBe(false);
    expect(configRuleSchema.safeParse({ rule: "requires", where: { field: "x", in: [] }, field: "y", message: "m" }).success).toBe(false);
    expect(configRuleSchema.safeParse({ rule: "sorted", list: "a", field: "id", message: "m" }).success).toBe(false);
  });
});
