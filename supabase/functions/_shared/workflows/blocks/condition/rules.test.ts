import { describe, expect, it } from "vitest";
import { configRuleProblems } from "../../state/config-rules.ts";
import { conditionRules } from "./rules.ts";

const problems = (conditions: unknown[]) => configRuleProblems(conditionRules, { conditions }, "c").map(({ field, message }) => `${field}: ${message}`);

describe("the Condition's rules", () => {
  it("accept if, else if and a bare else, in that order", () => {
    expect(problems([{ id: "a", kind: "if", expression: "x" }, { id: "b", kind: "else if", expression: "y" }, { id: "c", kind: "else", expression: "  " }])).toEqual([]);
  });

  it("name each entry out of order, without its expression, or repeated", () => {
    expect(problems([{ id: "a", kind: "else if", expression: "x" }, { id: "b", kind: "else", expression: "y" }, { id: "a", kind: "if", expression: " " }])).toEqual([
      'c.conditions[2].id: id "a" is used twice in conditions',
      'c.conditions[0].kind: the first condition must be "if"',
      'c.conditions[2].kind: only the first condition may be "if"; use "else if"',
      'c.conditions[1].kind: "else" must be the last condition',
      'c.conditions[1].expression: an "else" condition takes no expression',
      'c.conditions[2].expression: "if" needs an expression',
    ]);
  });
});
