/**
 * The database's validator (workflows_private.state_issues) gives each state of the corpus the
 * answer written beside it (validation-corpus.ts), in save and in deploy mode, and validates with
 * the catalogue the block folders declare.
 */
import { afterAll, describe, expect, it } from "vitest";
import { catalogueRows, catalogueSql, stateJsonSchema } from "../../supabase/functions/_shared/workflows/state/json-schemas.ts";
import { issueKey, sqlValidator } from "../helpers/workflows/sql-validator.ts";
import { corpus } from "./validation-corpus.ts";

const validator = sqlValidator();
afterAll(() => validator.close());

describe("the database's validator answers each state of the corpus as written", () => {
  it("stores the block folders' schemas, rules and handles as the catalogue it validates with", async () => {
    const rows = await validator.sql<{ type: string; category: string; config_schema: unknown; rules: unknown; choice: unknown }[]>`
      select type, category, config_schema, rules, choice from workflows_private.block_types order by position`;
    const [state] = await validator.sql<{ schema: unknown }[]>`select schema from workflows_private.schemas where name = 'state'`;
    const expected = catalogueRows().map((row) => ({ type: row.type, category: row.category, config_schema: row.configSchema, rules: row.rules, choice: row.choice }));
    const hint = `The block catalogue changed: replace supabase/migrations/<timestamp>_workflows-catalogue.sql with\n${catalogueSql()}`;
    expect(rows.map((row) => ({ ...row })), hint).toEqual(expected);
    expect(state.schema, hint).toEqual(stateJsonSchema());
  });

  for (const { name, state, expected } of corpus()) {
    for (const mode of ["save", "deploy"] as const) {
      it(`${name} (${mode})`, async () => {
        expect((await validator.stateIssues(state, mode)).map(issueKey).sort()).toEqual(expected[mode]);
      });
    }
  }

  it("writes messages that name the block and field", async () => {
    const { state } = corpus().find(({ name }) => name === "config: missing required field") as { state: unknown };
    const [issue] = await validator.stateIssues(state, "save");
    expect(issue.message).toBe('Block "Work" (function): blocks.work.config.code is required');
  });
});
