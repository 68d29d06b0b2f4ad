/**
 * Each block type's own config rules (blocks/<type>/rules.ts, the Input Format's in
 * blocks/input-format.ts), as the database's interpreter (workflows_private.config_rule_problems)
 * applies them: what each accepts, and each problem it names, `field: message` in its order.
 */
import { afterAll, describe, expect, it } from "vitest";
import { conditionRules } from "../../supabase/functions/_shared/workflows/blocks/condition/rules.ts";
import { inputFormatRules, type InputField } from "../../supabase/functions/_shared/workflows/blocks/input-format.ts";
import { checkedHeaders } from "../../supabase/functions/_shared/workflows/blocks/response/headers.ts";
import { responseRules } from "../../supabase/functions/_shared/workflows/blocks/response/rules.ts";
import { routerRules } from "../../supabase/functions/_shared/workflows/blocks/router/rules.ts";
import { variablesRules } from "../../supabase/functions/_shared/workflows/blocks/variables/rules.ts";
import type { ConfigRule } from "../../supabase/functions/_shared/workflows/state/config-rules.ts";
import { sqlValidator } from "../helpers/workflows/sql-validator.ts";

const validator = sqlValidator();
afterAll(() => validator.close());

async function problems(rules: readonly ConfigRule[], config: Record<string, unknown>): Promise<string[]> {
  return (await validator.ruleProblems(rules, config, "c")).map(({ field, message }) => `${field}: ${message}`);
}

describe("the Condition's rules", () => {
  it("accept if, else if and a bare else, in that order", async () => {
    expect(await problems(conditionRules, { conditions: [{ id: "a", kind: "if", expression: "x" }, { id: "b", kind: "else if", expression: "y" }, { id: "c", kind: "else", expression: "  " }] })).toEqual([]);
  });

  it("name each entry out of order, without its expression, or repeated", async () => {
    expect(await problems(conditionRules, { conditions: [{ id: "a", kind: "else if", expression: "x" }, { id: "b", kind: "else", expression: "y" }, { id: "a", kind: "if", expression: " " }] })).toEqual([
      'c.conditions[2].id: id "a" is used twice in conditions',
      'c.conditions[0].kind: the first condition must be "if"',
      'c.conditions[2].kind: only the first condition may be "if"; use "else if"',
      'c.conditions[1].kind: "else" must be the last condition',
      'c.conditions[1].expression: an "else" condition takes no expression',
      'c.conditions[2].expression: "if" needs an expression',
    ]);
  });
});

describe("the Router's rules", () => {
  const routes = (entries: unknown[]) => problems(routerRules, { value: 1, routes: entries });

  it("accept operands where needed (null is an operand) and a default last", async () => {
    expect(await routes([{ id: "a", operator: "equals", operand: null }, { id: "b", operator: "exists" }, { id: "z", operator: "default" }])).toEqual([]);
  });

  it("name a default before the end, a missing operand and a repeated id", async () => {
    expect(await routes([{ id: "a", operator: "default" }, { id: "b", operator: "gt" }, { id: "b", operator: "not_exists" }])).toEqual([
      'c.routes[2].id: id "b" is used twice in routes',
      'c.routes[0].operator: the "default" route must be the last one',
      'c.routes[1].operand: operator "gt" needs an operand',
    ]);
  });
});

describe("the Variables block's rules", () => {
  it("refuse a name assigned twice", async () => {
    expect(await validator.ruleProblems(variablesRules, { assignments: [{ name: "a", value: 1 }, { name: "b", value: 2 }, { name: "a", value: 3 }] }, "c")).toEqual([
      { field: "c.assignments[2].name", message: 'name "a" is used twice in assignments' },
    ]);
  });
});

describe("the Response's rules", () => {
  const headers = (names: Record<string, string>) => problems(responseRules, { headers: names });

  it("accept every RFC 9110 token as a header name", async () => {
    expect(await headers({ "X-Order": "1", "content-type": "a", "!#$%&'*+-.^_`|~09az": "b" })).toEqual([]);
    expect(await validator.ruleProblems(responseRules, {}, "c")).toEqual([]);
  });

  it("refuse a name with a line break, a space or a colon, naming it as JSON, in the order of their UTF-8 bytes", async () => {
    expect(await headers({ "X-A\nInjected": "1", "X B": "2", "X:C": "3", Fine: "4" })).toEqual([
      'c.headers: header name "X B" is not a valid HTTP field name (RFC 9110: letters, digits and !#$%&\'*+-.^_`|~ only; no spaces or line breaks)',
      'c.headers: header name "X-A\\nInjected" is not a valid HTTP field name (RFC 9110: letters, digits and !#$%&\'*+-.^_`|~ only; no spaces or line breaks)',
      'c.headers: header name "X:C" is not a valid HTTP field name (RFC 9110: letters, digits and !#$%&\'*+-.^_`|~ only; no spaces or line breaks)',
    ]);
  });

  it("refuse at save time exactly the names the run would refuse", async () => {
    const refusedOnSave = async (name: string) => {
      try {
        return (await headers({ [name]: "v" })).length > 0;
      } catch (error) {
        // jsonb cannot hold a NUL (22P05): a state with one is refused before any rule reads it.
        if ((error as { code?: string }).code === "22P05") return true;
        throw error;
      }
    };
    for (const name of ["X-Ok", "X\r\nSet-Cookie", "é", "", "a b", "a\u0000"]) {
      let runFails = false;
      try {
        checkedHeaders({ [name]: "v" });
      } catch {
        runFails = true;
      }
      expect(await refusedOnSave(name), JSON.stringify(name)).toBe(runFails);
    }
  });
});

describe("the Input Format's rules", () => {
  const field = (name: string, type: InputField["type"]): InputField => ({ name, type });

  it("refuse a repeated field name and the reserved name input", async () => {
    const found = await validator.ruleProblems(inputFormatRules, { inputFormat: [field("input", "string"), field("a", "number"), field("a", "json")] }, "c");
    expect(found.map((problem) => problem.field)).toEqual(["c.inputFormat[2].name", "c.inputFormat[0].name"]);
    expect(await validator.ruleProblems(inputFormatRules, {}, "c")).toEqual([]);
  });
});
