/**
 * The rule vocabulary as the database's interpreter (workflows_private.config_rule_problems) reads
 * it: every kind of rule, with and without a list, over configs that break it and configs that do
 * not, each with the problems it must give (`field: message`, in the interpreter's order). The
 * corpus (validation-corpus.test.ts) covers the rules the block types declare today and
 * block-rules.test.ts each type's own; this covers what a new block type may declare.
 */
import type postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { configRuleSchema, type ConfigRule } from "../../supabase/functions/_shared/workflows/state/config-rules.ts";
import { sqlValidator } from "../helpers/workflows/sql-validator.ts";

const validator = sqlValidator();
afterAll(() => validator.close());

async function problems(rules: readonly ConfigRule[], config: Record<string, unknown>, base = "c"): Promise<string[]> {
  return (await validator.ruleProblems(rules, config, base)).map(({ field, message }) => `${field}: ${message}`);
}

const cases: [name: string, rules: ConfigRule[], answers: [config: Record<string, unknown>, problems: string[]][]][] = [
  [
    "unique",
    [{ rule: "unique", list: "items", field: "id", message: 'id "{id}" repeats' }],
    [
      [{ items: [{ id: "a" }, { id: "b" }, { id: "a" }, { id: "a" }] }, ['c.items[2].id: id "a" repeats', 'c.items[3].id: id "a" repeats']],
      [{ items: [{ id: 1 }, { id: "1" }, { id: 1 }, { id: null }, { id: null }] }, ['c.items[2].id: id "1" repeats', 'c.items[4].id: id "null" repeats']],
      [{ items: [{ id: { x: 1 } }, { id: { x: 1 } }, {}, {}] }, []],
      [{}, []],
      [{ items: "no list" }, []],
    ],
  ],
  [
    "first_matches",
    [{ rule: "first_matches", list: "steps", where: { field: "kind", in: ["start", "begin"] }, message: "first is {kind}" }],
    [
      [{ steps: [{ kind: "start" }, { kind: "x" }] }, []],
      [{ steps: [{ kind: "x" }] }, ["c.steps[0].kind: first is x"]],
      [{ steps: [{}] }, ["c.steps[0].kind: first is "]],
      [{ steps: [] }, []],
    ],
  ],
  [
    "only_first and only_last",
    [
      { rule: "only_first", list: "steps", where: { field: "kind", in: ["start"] }, message: "{kind} only first" },
      { rule: "only_last", list: "steps", where: { field: "kind", notIn: ["start", "middle"] }, message: "{kind} only last" },
    ],
    [
      [{ steps: [{ kind: "start" }, { kind: "start" }, { kind: "end" }, { kind: "middle" }, {}] }, ["c.steps[1].kind: start only first", "c.steps[2].kind: end only last"]],
      [{ steps: [{ kind: "end" }] }, []],
    ],
  ],
  [
    "requires and forbids, blank text missing or not",
    [
      { rule: "requires", list: "rows", where: { field: "op", notIn: ["none"] }, field: "arg", message: '"{op}" needs arg' },
      { rule: "forbids", list: "rows", where: { field: "op", in: ["none"] }, field: "arg", blankIsMissing: true, message: "no arg for {op}" },
      { rule: "requires", list: "rows", where: { field: "op", in: ["eq"] }, field: "note", blankIsMissing: true, message: "note for {op} (had {note})" },
    ],
    [
      [
        { rows: [{ op: "eq", arg: 1, note: " \t\n" }, { op: "eq", note: "x" }, { op: "none", arg: "  " }, { op: "none", arg: 0 }, { arg: null }, { op: "gt", arg: "" }] },
        ['c.rows[1].arg: "eq" needs arg', "c.rows[3].arg: no arg for none", "c.rows[0].note: note for eq (had  \t\n)"],
      ],
    ],
  ],
  [
    "rules on the config itself",
    [
      { rule: "forbids", where: { field: "method", in: ["GET", "HEAD"] }, field: "body", message: "a {method} request has no body" },
      { rule: "requires", where: { field: "auth", in: ["bearer"] }, field: "token", blankIsMissing: true, message: "bearer auth needs a token" },
      { rule: "reserved", field: "name", values: ["input", 3, true], message: "{name} is reserved" },
    ],
    [
      [{ method: "GET", body: {}, auth: "bearer", token: " ", name: "input" }, ["c.body: a GET request has no body", "c.token: bearer auth needs a token", "c.name: input is reserved"]],
      [{ method: "POST", body: {}, auth: "none", name: 3 }, ["c.name: 3 is reserved"]],
      [{ name: true }, ["c.name: true is reserved"]],
      [{}, []],
    ],
  ],
  [
    "reserved values in a list",
    [{ rule: "reserved", list: "fields", field: "name", values: ["input", "output"], message: "{name} is taken" }],
    [[{ fields: [{ name: "input" }, { name: "x" }, { name: "output" }, "not an entry", { other: 1 }] }, ["c.fields[0].name: input is taken", "c.fields[2].name: output is taken"]]],
  ],
  [
    "keys matching a pattern, on the config and in a list, in UTF-8 order",
    [
      { rule: "keys_match", field: "headers", pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", message: "name {key} of {kind}" },
      { rule: "keys_match", list: "parts", field: "meta", pattern: "^[a-z]+$", message: "bad key {key}" },
    ],
    [
      [
        { kind: "reply", headers: { "X-Ok": "1", "X-A\nB": "2", "z z": "3", "é": "4", "\u{1F600}": "5", "\uFFFD": "6", "10": "7", "": "8", "tab\t\u0001": "9" } },
        [
          'c.headers: name "" of reply',
          'c.headers: name "X-A\\nB" of reply',
          'c.headers: name "tab\\t\\u0001" of reply',
          'c.headers: name "z z" of reply',
          'c.headers: name "é" of reply',
          'c.headers: name "\uFFFD" of reply',
          'c.headers: name "\u{1F600}" of reply',
        ],
      ],
      [{ headers: "not an object", parts: [{ meta: { ok: 1, "Not Ok": 2 } }, { meta: [1, 2] }, "not an entry", { meta: { "a\"b": 1 } }] }, ['c.parts[0].meta: bad key "Not Ok"', 'c.parts[3].meta: bad key "a\\"b"']],
      [{}, []],
    ],
  ],
];

describe("config rules, as the database reads them", () => {
  for (const [name, rules, answers] of cases) {
    it(name, async () => {
      for (const rule of rules) expect(configRuleSchema.safeParse(rule).success, JSON.stringify(rule)).toBe(true);
      for (const [config, expected] of answers) expect(await problems(rules, config), JSON.stringify(config)).toEqual(expected);
    });
  }

  it("fill message placeholders from the entry at fault", async () => {
    const fill = async (template: string, entry: Record<string, unknown>) =>
      (await validator.sql<{ message: string }[]>`select workflows_private.fill_rule_message(${template}, ${validator.sql.json(entry as postgres.JSONValue)}) as message`)[0].message;
    expect(await fill('"{kind}" needs {what}; {missing}.', { kind: "if", what: 2 })).toBe('"if" needs 2; .');
    // Values other than text are shown as JSON, as Postgres prints jsonb.
    expect(await fill("{a} and {b}", { a: null, b: { x: 1 } })).toBe('null and {"x": 1}');
  });

  it("apply to the config itself when they name no list", async () => {
    const rules: ConfigRule[] = [{ rule: "forbids", where: { field: "method", in: ["GET"] }, field: "body", message: "a {method} request has no body" }];
    expect(await validator.ruleProblems(rules, { method: "GET", body: "x" }, "blocks.h.config")).toEqual([{ field: "blocks.h.config.body", message: "a GET request has no body" }]);
    expect(await validator.ruleProblems(rules, { method: "POST", body: "x" }, "blocks.h.config")).toEqual([]);
  });

  it("treat a missing field as in no list of values", async () => {
    const rules: ConfigRule[] = [
      { rule: "requires", list: "rows", where: { field: "op", notIn: ["none"] }, field: "arg", message: "needs arg" },
      { rule: "forbids", list: "rows", where: { field: "op", in: ["none"] }, field: "arg", message: "no arg" },
    ];
    expect(await validator.ruleProblems(rules, { rows: [{}, { arg: 1 }] }, "c")).toEqual([{ field: "c.rows[0].arg", message: "needs arg" }]);
  });

  it("count blank text as missing only when asked", async () => {
    const rule = (blankIsMissing: boolean): ConfigRule[] => [{ rule: "requires", where: { field: "on", in: [true] }, field: "text", blankIsMissing, message: "m" }];
    expect(await validator.ruleProblems(rule(true), { on: true, text: " \n" }, "c")).toHaveLength(1);
    expect(await validator.ruleProblems(rule(false), { on: true, text: " \n" }, "c")).toHaveLength(0);
  });

  it("refuse a rule outside the vocabulary", async () => {
    const unknown = { rule: "sorted", list: "items", field: "id", message: "m" };
    expect(configRuleSchema.safeParse(unknown).success).toBe(false);
    await expect(validator.sql`select * from workflows_private.config_rule_problems(${validator.sql.json([unknown])}, '{}'::jsonb, 'c')`).rejects.toThrow('Unknown config rule "sorted"');
  });
});
