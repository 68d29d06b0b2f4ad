/**
 * What the database's validator (`workflows_private.state_issues`) reports, as TypeScript reads it:
 * one issue per problem, each naming its rule (`code`), the block or edge and the field; and the
 * error that carries them to a run's answer (400 INVALID_WORKFLOW with `issues`). The graph
 * compiler raises the same error for the few states it cannot build (executor/graph.ts).
 */
import { WorkflowError } from "../core/errors.ts";

/** Kinds of validation issue, as the database's validator names its rules. */
export type IssueCode =
  /** The state is past a cap (docs/workflow-limits.md): nothing else is checked. */
  | "state_too_large"
  | "too_many_blocks"
  | "too_many_edges"
  | "invalid_shape"
  | "invalid_config"
  | "unknown_block_type"
  | "block_id_mismatch"
  | "invalid_block_name"
  | "duplicate_block_name"
  | "reserved_block_name"
  | "duplicate_edge_id"
  | "duplicate_edge"
  | "dangling_edge"
  | "self_edge"
  | "invalid_edge_handle"
  | "trigger_has_incoming_edge"
  | "response_has_outgoing_edge"
  | "cycle"
  | "multiple_api_triggers"
  | "missing_subflow"
  | "invalid_subflow"
  | "subflow_member"
  | "cross_scope_edge"
  | "misplaced_block"
  | "subflow_without_start"
  | "invalid_block_config"
  | "unknown_reference"
  | "reference_not_upstream"
  | "reference_into_subflow"
  | "reference_outside_subflow"
  | "no_trigger";

/** One thing wrong with a state: which block (or edge) and which field, and why. */
export interface ValidationIssue {
  code: IssueCode;
  message: string;
  blockId?: string;
  blockName?: string;
  edgeId?: string;
  /** Dotted path inside the state, e.g. `blocks.fn1.config.code` or `edges[2].target`. */
  field?: string;
}

/** A state that failed validation; `issues` lists every problem found. */
export class ValidationError extends WorkflowError {
  readonly issues: ValidationIssue[];

  constructor(issues: ValidationIssue[]) {
    const first = issues[0]?.message ?? "invalid workflow state";
    super("INVALID_WORKFLOW", issues.length > 1 ? `${first} (and ${issues.length - 1} more issue${issues.length > 2 ? "s" : ""})` : first);
    this.name = "ValidationError";
    this.issues = issues;
  }
}
