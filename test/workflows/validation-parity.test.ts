import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import type { ValidationIssue } from "../../supabase/functions/_shared/workflows/state/issues.ts";
import { catalogueRows, catalogueSql, stateJsonSchema } from "../../supabase/functions/_shared/workflows/state/json-schemas.ts";
import { validateWorkflowState, type ValidationMode } from "../../supabase/functions/_shared/workflows/state/validate.ts";
import { env } from "../helpers/env.ts";
import { loadExamples } from "./examples.ts";
import { corpus } from "./validation-corpus.ts";

const sql = postgres(env.dbUrl, { max: 1, onnotice: () => {} });
afterAll(() => sql.end());

/** What both validators must agree on for each issue: the rule, the block or edge, the field. */
function keys(issues: ValidationIssue[]): string[] {
  return issues.map((issue) => [issue.code, issue.blockId ?? "-", issue.edgeId ?? "-", issue.field ?? "-"].join(" | ")).sort();
}

async function sqlIssues(state: unknown, mode: ValidationMode): Promise<ValidationIssue[]> {
  const [row] = await sql<{ issues: ValidationIssue[] }[]>`select workflows_private.state_issues(${sql.json(state as postgres.JSONValue)}, ${mode}) as issues`;
  return row.issues;
}

describe("the database validates states exactly as state/validate.ts does", () => {
  it("stores the block folders' schemas, rules and handles as the catalogue it validates with", async () => {
    const rows = await sql<{ type: string; category: string; config_schema: unknown; rules: unknown; choice: unknown }[]>`
      select type, category, config_schema, rules, choice from workflows_private.block_types order by position`;
    const [state] = await sql<{ schema: unknown }[]>`select schema from workflows_private.schemas where name = 'state'`;
    const expected = catalogueRows().map((row) => ({ type: row.type, category: row.category, config_schema: row.configSchema, rules: row.rules, choice: row.choice }));
    const hint = `The block catalogue changed: replace supabase/migrations/<timestamp>_workflows-catalogue.sql with\n${catalogueSql()}`;
    expect(rows.map((row) => ({ ...row })), hint).toEqual(expected);
    expect(state.schema, hint).toEqual(stateJsonSchema());
  });

  for (const [name, state] of corpus()) {
    for (const mode of ["save", "deploy"] as const) {
      it(`${name} (${mode})`, async () => {
        const ts = validateWorkflowState(state, mode);
        const fromSql = await sqlIssues(state, mode);
        expect(keys(fromSql)).toEqual(keys(ts.ok ? [] : ts.issues));
        const valid = name === "valid: rich state" || (name === "valid: empty draft" && mode === "save");
        if (valid) expect(fromSql).toEqual([]);
        else expect(fromSql.length).toBeGreaterThan(0);
      });
    }
  }

  for (const example of loadExamples()) {
    it(`accepts the example ${example.file} for deploy`, async () => {
      expect(await sqlIssues(example.state, "deploy")).toEqual([]);
    });
  }

  it("writes messages that name the block and field, like the TypeScript ones", async () => {
    const [, state] = corpus().find(([name]) => name === "config: missing required field") as [string, unknown];
    const [issue] = await sqlIssues(state, "save");
    expect(issue.message).toBe('Block "Work" (function): blocks.work.config.code is required');
  });
});
