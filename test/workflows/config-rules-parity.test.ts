/**
 * The rule vocabulary means the same in both interpreters: every kind of rule, with and without a
 * list, over configs that break it and configs that do not, gives the same fields and messages from
 * config-rules.ts and from `workflows_private.config_rule_problems`. (validation-parity.test.ts
 * covers the rules the block types declare today; this covers what a new block type may declare.)
 */
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { configRuleProblems, configRuleSchema, type ConfigRule, type RuleProblem } from "../../supabase/functions/_shared/workflows/state/config-rules.ts";
import { env } from "../helpers/env.ts";

const sql = postgres(env.dbUrl, { max: 1, onnotice: () => {} });
afterAll(() => sql.end());

async function sqlProblems(rules: readonly ConfigRule[], config: Record<string, unknown>): Promise<RuleProblem[]> {
  const rows = await sql<RuleProblem[]>`
    select field, message from workflows_private.config_rule_problems(${sql.json(rules as unknown as postgres.JSONValue)}, ${sql.json(config as postgres.JSONValue)}, 'blocks.b.config')`;
  return rows.map((row) => ({ field: row.field, message: row.message }));
}

const cases: [name: string, rules: ConfigRule[], configs: Record<string, unknown>[]][] = [
  [
    "unique",
    [{ rule: "unique", list: "items", field: "id", message: 'id "{id}" repeats' }],
    [{ items: [{ id: "a" }, { id: "b" }, { id: "a" }, { id: "a" }] }, { items: [{ id: 1 }, { id: "1" }, { id: 1 }, { id: null }, { id: null }] }, { items: [{ id: { x: 1 } }, { id: { x: 1 } }, {}, {}] }, {}, { items: "no list" }],
  ],
  [
    "first_matches",
    [{ rule: "first_matches", list: "steps", where: { field: "kind", in: ["start", "begin"] }, message: "first is {kind}" }],
    [{ steps: [{ kind: "start" }, { kind: "x" }] }, { steps: [{ kind: "x" }] }, { steps: [{}] }, { steps: [] }],
  ],
  [
    "only_first and only_last",
    [
      { rule: "only_first", list: "steps", where: { field: "kind", in: ["start"] }, message: "{kind} only first" },
      { rule: "only_last", list: "steps", where: { field: "kind", notIn: ["start", "middle"] }, message: "{kind} only last" },
    ],
    [{ steps: [{ kind: "start" }, { kind: "start" }, { kind: "end" }, { kind: "middle" }, {}] }, { steps: [{ kind: "end" }] }],
  ],
  [
    "requires and forbids, blank text missing or not",
    [
      { rule: "requires", list: "rows", where: { field: "op", notIn: ["none"] }, field: "arg", message: '"{op}" needs arg' },
      { rule: "forbids", list: "rows", where: { field: "op", in: ["none"] }, field: "arg", blankIsMissing: true, message: "no arg for {op}" },
      { rule: "requires", list: "rows", where: { field: "op", in: ["eq"] }, field: "note", blankIsMissing: true, message: "note for {op} (had {note})" },
    ],
    [{ rows: [{ op: "eq", arg: 1, note: " \t\n" }, { op: "eq", note: "x" }, { op: "none", arg: "  " }, { op: "none", arg: 0 }, { arg: null }, { op: "gt", arg: "" }] }],
  ],
  [
    "rules on the config itself",
    [
      { rule: "forbids", where: { field: "method", in: ["GET", "HEAD"] }, field: "body", message: "a {method} request has no body" },
      { rule: "requires", where: { field: "auth", in: ["bearer"] }, field: "token", blankIsMissing: true, message: "bearer auth needs a token" },
      { rule: "reserved", field: "name", values: ["input", 3, true], message: "{name} is reserved" },
    ],
    [{ method: "GET", body: {}, auth: "bearer", token: " ", name: "input" }, { method: "POST", body: {}, auth: "none", name: 3 }, { name: true }, {}],
  ],
  [
    "reserved values in a list",
    [{ rule: "reserved", list: "fields", field: "name", values: ["input", "output"], message: "{name} is taken" }],
    [{ fields: [{ name: "input" }, { name: "x" }, { name: "output" }, "not an entry", { other: 1 }] }],
  ],
  [
    "keys matching a pattern, on the config and in a list, in UTF-8 order",
    [
      { rule: "keys_match", field: "headers", pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", message: "name {key} of {kind}" },
      { rule: "keys_match", list: "parts", field: "meta", pattern: "^[a-z]+$", message: "bad key {key}" },
    ],
    [
      { kind: "reply", headers: { "X-Ok": "1", "X-A\nB": "2", "z z": "3", "é": "4", "\u{1F600}": "5", "\uFFFD": "6", "10": "7", "": "8", "tab\t\u0001": "9" } },
      { headers: "not an object", parts: [{ meta: { ok: 1, "Not Ok": 2 } }, { meta: [1, 2] }, "not an entry", { meta: { "a\"b": 1 } }] },
      {},
    ],
  ],
];

describe("config rules mean the same in TypeScript and SQL", () => {
  for (const [name, rules, configs] of cases) {
    it(name, async () => {
      for (const rule of rules) expect(configRuleSchema.safeParse(rule).success, JSON.stringify(rule)).toBe(true);
      for (const config of configs) {
        const ts = configRuleProblems(rules, config, "blocks.b.config");
        expect(await sqlProblems(rules, config), JSON.stringify(config)).toEqual(ts);
      }
    });
  }

  it("finds what each case is there to find", () => {
    const [, uniqueRules, [repeats]] = cases[0];
    expect(configRuleProblems(uniqueRules, repeats, "c")).toEqual([
      { field: "c.items[2].id", message: 'id "a" repeats' },
      { field: "c.items[3].id", message: 'id "a" repeats' },
    ]);
    const [, ownRules, [request]] = cases[4];
    expect(configRuleProblems(ownRules, request, "c").map((problem) => problem.message)).toEqual(["a GET request has no body", "bearer auth needs a token", "input is reserved"]);
  });

  it("refuses a rule neither interpreter knows", async () => {
    const unknown = { rule: "sorted", list: "items", field: "id", message: "m" };
    expect(configRuleSchema.safeParse(unknown).success).toBe(false);
    await expect(sql`select * from workflows_private.config_rule_problems(${sql.json([unknown])}, '{}'::jsonb, 'c')`).rejects.toThrow('Unknown config rule "sorted"');
  });
});
