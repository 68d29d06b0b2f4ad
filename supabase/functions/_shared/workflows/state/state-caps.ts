/**
 * How big a workflow state may be (docs/workflow-limits.md). Checked before anything else, by both
 * validators (the SQL one in migration `..._workflows-validation.sql`), so a state past a cap is
 * refused at once with one clear issue instead of being validated for longer than a save may take
 * (a 4,000-block state used to run into the statement timeout). At the caps, validation stays
 * well inside a signed-in save's 8 s statement timeout (the figures are in the limits page).
 */
import { jsonLength } from "../core/json-size.ts";
import { asRecord } from "../core/values.ts";
import type { ValidationIssue } from "./issues.ts";

/** Most blocks a workflow may have. */
export const MAX_STATE_BLOCKS = 500;

/** Most edges a workflow may have. */
export const MAX_STATE_EDGES = 2_000;

/**
 * The largest state, as JSON text (2 MiB). The database measures the text it prints (`jsonb`
 * puts a space after each `:` and `,`), so it sees a state a little larger than its compact JSON.
 */
export const MAX_STATE_BYTES = 2 * 1024 * 1024;

/** The caps a state passes, as issues (empty when it is within all of them). */
export function stateCapIssues(input: unknown): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const size = jsonLength(input, MAX_STATE_BYTES);
  if (size > MAX_STATE_BYTES) {
    issues.push({ code: "state_too_large", field: "state", message: `The workflow state is more than ${MAX_STATE_BYTES.toLocaleString("en")} characters of JSON; a workflow may have at most ${MAX_STATE_BYTES.toLocaleString("en")}` });
  }
  const state = asRecord(input);
  const blocks = asRecord(state?.blocks);
  const blockCount = blocks ? Object.keys(blocks).length : 0;
  if (blockCount > MAX_STATE_BLOCKS) {
    issues.push({ code: "too_many_blocks", field: "blocks", message: `The workflow has ${blockCount.toLocaleString("en")} blocks; a workflow may have at most ${MAX_STATE_BLOCKS.toLocaleString("en")}` });
  }
  const edges = state?.edges;
  if (Array.isArray(edges) && edges.length > MAX_STATE_EDGES) {
    issues.push({ code: "too_many_edges", field: "edges", message: `The workflow has ${edges.length.toLocaleString("en")} edges; a workflow may have at most ${MAX_STATE_EDGES.toLocaleString("en")}` });
  }
  return issues;
}
