/**
 * The contract between the executor and a block type's handler. A handler gets its config already
 * resolved (references and environment variables filled in; code fields as ResolvedCode), does its
 * one job and returns an output object, or throws a WorkflowError.
 */
import type { ModelUsage } from "../outbound/model-cost.ts";
import type { ApprovalOutcome, ApprovalRequest } from "./approvals.ts";
import type { BlockOutput, ExecutorServices, TriggerRequest } from "./context.ts";
import type { BlockIdentity } from "./errors.ts";

/** What a handler can see and use during one execution of its block. */
export interface BlockRun<Input> {
  block: BlockIdentity;
  executionId: string;
  /** The resolved config. Template fields hold whatever their references resolved to, so check types. */
  input: Input;
  /** Aborted when the block times out, a sibling fails, or the run ends. */
  signal: AbortSignal;
  /** Epoch ms by which the block must be done (its own timeout or the run's, whichever is sooner). */
  deadline: number;
  /** The block's own time limit in ms; sandboxed code counts it from when a sandbox thread starts it. */
  timeoutMs: number;
  /** Epoch ms of the run's own time limit, which nothing in the block may pass. */
  runDeadline: number;
  /** The billing account the run is charged to (the sandbox shares its threads fairly between accounts), or null. */
  account: string | null;
  services: ExecutorServices;
  /** Workflow variables (`<variable.name>`), shared by the whole run. */
  variables: Map<string, unknown>;
  /** The run's start request; set only for the trigger block the run starts from. */
  trigger: TriggerRequest | null;
  /** The blocks an outgoing handle leads to (for Condition and Router `selectedPath`). */
  targetsOf(handle: string): BlockIdentity[];
  /**
   * Streams a piece of the block's output while it runs (an agent's tokens): the execute
   * endpoint sends it as an SSE chunk `{blockId, chunk}`, secrets masked. A no-op when nobody listens.
   */
  emitChunk(chunk: string): void;
  /**
   * The `traceparent` (and `tracestate`) headers naming this block instance's span, for the
   * outbound calls it makes (docs/tracing.md); empty when the run has no trace ids.
   */
  traceHeaders(): Record<string, string>;
  /** Reports a model call's tokens, for the run's cost. */
  recordModelUsage(usage: ModelUsage): void;
  /** True in a durable (async) run, where `pause` may park the run for up to 30 days (executor/durable.ts). */
  durable: boolean;
  /**
   * Pauses the block `ms` from when this block instance first paused. In a durable run a long pause
   * parks the run (the worker is freed; the run resumes at the due time, the block completing then);
   * otherwise it sleeps on the run's clock, ending early with the signal's reason.
   */
  pause(ms: number): Promise<void>;
  /**
   * Asks people to approve (the approval block): resolves with the decision. A run given an approval
   * desk (API runs: async, sync or streamed) parks until the approval is decided or times out; other
   * runs (manual, chat) cannot wait for people and get BLOCK_FAILED.
   */
  awaitApproval(request: ApprovalRequest): Promise<ApprovalOutcome>;
}

/** A block type's behaviour. `execute` is a method so handlers of different inputs share one registry. */
export interface BlockHandler<Input = unknown> {
  /** The block's timeout in ms when its config sets none, given its resolved input. */
  timeoutMs(input: Input): number;
  /**
   * True when the handler stops at `deadline` by itself and says why (sandboxed code ends with
   * SANDBOX_TIMEOUT): the executor then arms no timer of its own, which would race it.
   */
  readonly stopsAtDeadline?: boolean;
  /**
   * Values of the resolved config that are credentials (an API key, an Authorization header): the
   * run masks them in everything it returns, as it masks environment values.
   */
  secretsOf?(input: Input): string[];
  execute(run: BlockRun<Input>): BlockOutput | Promise<BlockOutput>;
}

/** Default timeout for blocks that do not say otherwise. */
export const DEFAULT_BLOCK_TIMEOUT_MS = 30_000;

/**
 * Every block type's handler, by type: blocks/handlers.ts builds it and runs/ hands it to the
 * executor, which imports no handler itself. Generic over the type names so the kernel need not
 * know the catalogue.
 */
export type BlockHandlers<Type extends string = string> = Readonly<Record<Type, BlockHandler<unknown>>>;
