import { describe, expect, it } from "vitest";
import { configRuleProblems } from "../../state/config-rules.ts";
import { variablesRules } from "./rules.ts";

describe("the Variables block's rules", () => {
  it("refuse a name assigned twice", () => {
    expect(configRuleProblems(variablesRules, { assignments: [{ name: "a", value: 1 }, { name: "b", value: 2 }, { name: "a", value: 3 }] }, "c")).toEqual([
      { field: "c.assignments[2].name", message: 'name "a" is used twice in assignments' },
    ]);
  });
});
