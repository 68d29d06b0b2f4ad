/**
 * The shapes a run works with: how it was started, the services it may use (all injectable, so the
 * executor does no I/O of its own), block outputs, trace spans and the result it returns.
 */
import type { ModelUsage } from "../outbound/model-cost.ts";
import type { OutboundServices } from "../outbound/services.ts";
import type { BlockIdentity, WorkflowErrorCode } from "./errors.ts";
import type { Sandbox } from "./sandbox-contract.ts";

/** How a run was started (the spec's five entry points). */
export type TriggerKind = "manual" | "api" | "webhook" | "schedule" | "chat";

/** The start of a run: which kind, optionally which trigger block, and the request's input. */
export interface TriggerRequest {
  kind: TriggerKind;
  /** The trigger block to start from; chosen by kind when omitted (see trigger-choice.ts). */
  blockId?: string;
  /**
   * The request body (API, webhook), the schedule's tick (`{scheduledFor}`), or for manual runs an
   * override of the Input Format's value column. Manual runs without it use the value column.
   */
  input?: unknown;
}

/** What every block returns: a JSON object readable as `<blockname.field>`. */
export type BlockOutput = Record<string, unknown>;

/** Time, injectable so tests need not wait. */
export interface Clock {
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** A files-field entry of a request (spec, "File input entries"). */
export interface FileEntry {
  type: "file" | "url";
  data: string;
  name: string;
  mime?: string;
}

/** A file as blocks see it (the spec's UserFile). */
export interface UserFile {
  id: string;
  name: string;
  url: string;
  size: number;
  type: string;
  key: string;
  uploadedAt?: string;
  expiresAt?: string;
}

/** Turns checked file entries into UserFiles (storing inline content where there is storage). */
export interface FileStore {
  store(entry: FileEntry, context: { executionId: string; field: string }): Promise<UserFile>;
}

/** Everything a run may use from outside; defaults are in execute.ts. */
export interface ExecutorServices {
  sandbox: Sandbox;
  clock: Clock;
  files: FileStore;
  newId(): string;
  /** The guarded fetch, model providers and model pricing, for blocks that reach outside (outbound/). */
  outbound: OutboundServices;
}

/** Where an iteration span or block span sits inside loops and parallels (innermost). */
export interface IterationRef {
  containerId: string;
  kind: "loop" | "parallel";
  index: number;
}

/** One block execution (or one iteration of a loop/parallel), as the logs API shows it. */
export interface TraceSpan {
  /** Unique within the run: the block id plus its iteration path, e.g. `fn1[loop1:2]`. */
  id: string;
  blockId: string;
  name: string;
  /**
   * The block type, `loop-iteration` / `parallel-branch` for iteration spans, or `truncated` for the
   * marker that stands for spans cut past the trace's budget (trace-budget.ts).
   */
  type: string;
  status: "success" | "error" | "cancelled";
  startedAt: string;
  endedAt: string;
  durationMs: number;
  /** The resolved config the block ran with (a marker when too long to report: trace-budget.ts). */
  input?: unknown;
  output?: unknown;
  error?: string;
  errorCode?: WorkflowErrorCode;
  /** True when an `error` edge took over, so the run went on. */
  errorHandled?: boolean;
  iteration?: IterationRef;
  children?: TraceSpan[];
  /**
   * How many spans past the trace's budget were cut (trace-budget.ts): on a span, among its
   * descendants; on the `truncated` span that ends a run's top-level list, at the top level.
   */
  cut?: { spans: number };
}

/** The final HTTP answer a Response block set. */
export interface ResponseSpec {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** What the execution context held at the end (the spec's execution context, minus secrets). */
export interface ExecutionSnapshot {
  /** Top-level blocks: status and output. Blocks inside loops/parallels are in their container's results. */
  blockStates: Record<string, { status: "success" | "error" | "skipped"; output?: BlockOutput }>;
  /** Top-level blocks that ran, in completion order. */
  activePath: string[];
  /**
   * Routing decisions per choosing block type (`condition`, `router`), by block instance (`blockId`
   * or `blockId[loop1:2]`): the chosen entry's id, or null when nothing was chosen.
   */
  decisions: Record<string, Record<string, string | null>>;
  /** Loop and parallel instances: how many iterations or branches they had and finished. */
  subflows: Record<string, { kind: "loop" | "parallel"; total: number; completed: number }>;
  variables: Record<string, unknown>;
  /** Names of the environment variables the run had (never their values). */
  environment: string[];
}

/** How a run ended; `parked` only in a durable (async) run, whose attempt ended at a long Wait (durable.ts). */
export type RunStatus = "success" | "error" | "timeout" | "cancelled" | "parked";

/** The result of executeWorkflow. */
export interface ExecutionResult {
  executionId: string;
  success: boolean;
  status: RunStatus;
  /**
   * The Response block's output; else the output of the last top-level block without successors
   * that finished; else (every such block was skipped) the last block that finished.
   */
  output: unknown;
  response: ResponseSpec | null;
  error: { code: WorkflowErrorCode; message: string; block: BlockIdentity | null } | null;
  traceSpans: TraceSpan[];
  context: ExecutionSnapshot;
  /** Every model call of the run, in the order they finished (empty when no model was called). */
  modelUsage: ModelUsage[];
  /** When a parked run is due to resume (ISO); only with status `parked`. */
  resumeAt?: string;
  metadata: {
    trigger: TriggerKind;
    triggerBlockId: string | null;
    startTime: string;
    endTime: string;
    durationMs: number;
    blocksExecuted: number;
  };
}
