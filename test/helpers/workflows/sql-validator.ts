/**
 * The database's workflow validator, called directly over a connection of the test stack: the
 * suites that check its answers (test/workflows/validation-*.test.ts, config-rules.test.ts,
 * block-rules.test.ts, examples.test.ts) state a case and read what it says.
 */
import postgres from "postgres";
import type { ConfigRule } from "../../../supabase/functions/_shared/workflows/state/config-rules.ts";
import type { ValidationIssue } from "../../../supabase/functions/_shared/workflows/state/issues.ts";
import { env } from "../env.ts";

/** `save` accepts work in progress; `deploy` (deploys, and manual runs of a draft) also needs an enabled trigger. */
export type ValidationMode = "save" | "deploy";

/** A problem a config rule found: the field (a dotted path under the base) and the message. */
export interface RuleProblem {
  field: string;
  message: string;
}

/** One connection and the validator's entry points over it; `close` it after the suite. */
export interface SqlValidator {
  sql: postgres.Sql;
  /** workflows_private.state_issues: every issue of a state, in the validator's order. */
  stateIssues(state: unknown, mode?: ValidationMode): Promise<ValidationIssue[]>;
  /** workflows_private.config_rule_problems: what `rules` find in `config`, fields under `base`. */
  ruleProblems(rules: readonly ConfigRule[], config: unknown, base: string): Promise<RuleProblem[]>;
  close(): Promise<void>;
}

/** Opens a connection to the test stack's database. */
export function sqlValidator(): SqlValidator {
  const sql = postgres(env.dbUrl, { max: 1, onnotice: () => {} });
  return {
    sql,
    async stateIssues(state, mode = "save") {
      const [row] = await sql<{ issues: ValidationIssue[] }[]>`select workflows_private.state_issues(${sql.json(state as postgres.JSONValue)}, ${mode}) as issues`;
      return row.issues;
    },
    async ruleProblems(rules, config, base) {
      const rows = await sql<RuleProblem[]>`
        select field, message from workflows_private.config_rule_problems(${sql.json(rules as unknown as postgres.JSONValue)}, ${sql.json(config as postgres.JSONValue)}, ${base})`;
      return rows.map(({ field, message }) => ({ field, message }));
    },
    close: () => sql.end(),
  };
}

/** Which rule an issue reports, and where: `code | blockId | edgeId | field`, `-` for a part it has not. */
export function issueKey(issue: ValidationIssue): string {
  return [issue.code, issue.blockId ?? "-", issue.edgeId ?? "-", issue.field ?? "-"].join(" | ");
}
