/**
 * Typed errors of the workflow service. Every failure carries a stable `code` (what clients and
 * tests branch on) and a message written for the person who built the workflow, naming the block,
 * field or reference at fault. Validation issues and their error are in state/issues.ts.
 */
import type { OutboundErrorCode } from "../outbound/errors.ts";

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
  /** A loop, parallel or wait asked for more than its cap, or the run's iterations passed their budget. */
  | "LIMIT_EXCEEDED"
  /** A block's output, or the outputs of the run together, passed their size budget. */
  | "OUTPUT_TOO_LARGE"
  /** A Router matched no route and has no `default` route. */
  | "NO_ROUTE"
  /** The whole run ran past its timeout. */
  | "RUN_TIMEOUT"
  /** The run was cancelled by its caller. */
  | "CANCELLED"
  /** An API block's request got a non-2xx answer (after its retries). */
  | "HTTP_ERROR"
  /** A model provider or vector store refused the call or answered something unusable. */
  | "PROVIDER_ERROR"
  /** An outbound call failed before any answer: blocked address, timeout, connection, size cap (outbound/errors.ts). */
  | OutboundErrorCode;

/** The block a failure belongs to, as the spec's `failedBlock` reports it. */
export interface BlockIdentity {
  id: string;
  name: string;
  type: string;
}

/** Base class: a message plus a stable code. */
export class WorkflowError extends Error {
  readonly code: WorkflowErrorCode;
  /**
   * What the block produced before it failed (an API block's `status` and `headers`): laid under
   * `{error, code}` in the output its `error` edge sees, and shown in its trace span.
   */
  readonly output?: Record<string, unknown>;

  constructor(code: WorkflowErrorCode, message: string, options?: { cause?: unknown; output?: Record<string, unknown> }) {
    super(message, options);
    this.name = "WorkflowError";
    this.code = code;
    if (options?.output) this.output = options.output;
  }
}

/** A failure inside one block; `block` is the innermost block at fault (inside loops too). */
export class BlockError extends WorkflowError {
  readonly block: BlockIdentity;

  constructor(code: WorkflowErrorCode, message: string, block: BlockIdentity, options?: { cause?: unknown; output?: Record<string, unknown> }) {
    super(code, message, options);
    this.name = "BlockError";
    this.block = block;
  }
}

/** `Block "Check age" (condition)`: how every message names a block. */
export function describeBlock(block: Pick<BlockIdentity, "name" | "type">): string {
  return `Block "${block.name}" (${block.type})`;
}

/** The message of any thrown value, for places that must report whatever they caught. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === "string" ? error : JSON.stringify(error);
}
