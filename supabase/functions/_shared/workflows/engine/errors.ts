/**
 * Typed errors of the workflow service. Every failure carries a stable `code` (what clients and
 * tests branch on) and a message written for the person who built the workflow, naming the block,
 * field or reference at fault.
 */

/** Stable error codes. */
export type WorkflowErrorCode =
  /** The state breaks a structural or config rule (see ValidationIssue). */
  | "INVALID_WORKFLOW"
  /** The trigger's input does not fit its Input Format. */
  | "INVALID_INPUT"
  /** `<block.path>` names no block, a block that has not run, or a path its output lacks. */
  | "REFERENCE_NOT_FOUND"
  /** `{{NAME}}` names no environment variable of the workspace. */
  | "ENV_VAR_NOT_FOUND"
  /** A block's own work failed (user code threw, a bad value, ...). */
  | "BLOCK_FAILED"
  /** User code ran past its time limit. */
  | "SANDBOX_TIMEOUT"
  /** User code ran past its memory limit. */
  | "SANDBOX_MEMORY_LIMIT"
  /** A block ran past its timeout. */
  | "BLOCK_TIMEOUT"
  /** A loop, parallel or wait asked for more than its cap. */
  | "LIMIT_EXCEEDED"
  /** A Router matched no route and has no `default` route. */
  | "NO_ROUTE"
  /** The whole run ran past its timeout. */
  | "RUN_TIMEOUT"
  /** The run was cancelled by its caller. */
  | "CANCELLED";

/** The block a failure belongs to, as the spec's `failedBlock` reports it. */
export interface BlockIdentity {
  id: string;
  name: string;
  type: string;
}

/** Base class: a message plus a stable code. */
export class WorkflowError extends Error {
  readonly code: WorkflowErrorCode;

  constructor(code: WorkflowErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "WorkflowError";
    this.code = code;
  }
}

/** A failure inside one block; `block` is the innermost block at fault (inside loops too). */
export class BlockError extends WorkflowError {
  readonly block: BlockIdentity;

  constructor(code: WorkflowErrorCode, message: string, block: BlockIdentity, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = "BlockError";
    this.block = block;
  }
}

/** Kinds of validation issue; the SQL validator reports the same codes for the same rules. */
export type IssueCode =
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

/** The message of any thrown value, for places that must report whatever they caught. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === "string" ? error : JSON.stringify(error);
}
