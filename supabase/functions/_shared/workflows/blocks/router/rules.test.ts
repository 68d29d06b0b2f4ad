import { describe, expect, it } from "vitest";
import { configRuleProblems } from "../../state/config-rules.ts";
import { routerRules } from "./rules.ts";

const problems = (routes: unknown[]) => configRuleProblems(routerRules, { value: 1, routes }, "c").map(({ field, message }) => `${field}: ${message}`);

describe("the Router's rules", () => {
  it("accept operands where needed (null is an operand) and a default last", () => {
    expect(problems([{ id: "a", operator: "equals", operand: null }, { id: "b", operator: "exists" }, { id: "z", operator: "default" }])).toEqual([]);
  });

  it("name a default before the end, a missing operand and a repeated id", () => {
    expect(problems([{ id: "a", operator: "default" }, { id: "b", operator: "gt" }, { id: "b", operator: "not_exists" }])).toEqual([
      'c.routes[2].id: id "b" is used twice in routes',
      'c.routes[0].operator: the "default" route must be the last one',
      'c.routes[1].operand: operator "gt" needs an operand',
    ]);
  });
});
