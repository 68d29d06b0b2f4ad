/**
 * The sandbox as blocks and the executor see it: a `run(request)` that resolves with the code's
 * result or rejects with a WorkflowError. It lives in core/ so that the run context and the
 * handlers name it without loading a runner; the runners are in sandbox/, and the executor picks
 * one (sandbox/sandbox-choice.ts) unless the caller passes its own.
 */

/** What a piece of code is: a function body (may `return` and `await`) or a single expression. */
export type SandboxKind = "function" | "expression";

/** One call into the sandbox. */
export interface SandboxRequest {
  kind: SandboxKind;
  /** The code, with references already replaced by `__refs[i]` (see code-references.ts). */
  source: string;
  /** The values of `__refs`, passed as data. */
  values: readonly unknown[];
  /** The reference each `__refs[i]` stands for, as the user wrote it: error messages name those. */
  refs?: readonly string[];
  /** Epoch milliseconds past which the code never runs, however it waited (the run's time limit). */
  deadline: number;
  /**
   * The code's own time limit, counted from when it starts: time spent waiting for a free sandbox
   * thread does not count against it. Without it the code may run until `deadline`.
   */
  timeoutMs?: number;
  /** Heap limit for this call, in bytes. */
  memoryBytes: number;
  /** Aborting it stops the code at once; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Whose call it is (the execution id): a busy pool serves the runs waiting for it in turn. */
  owner?: string;
  /** The billing account the run is charged to: a pool shares its threads fairly between accounts. */
  account?: string;
}

/** What the code produced: its JSON-serialisable result and what it printed. */
export interface SandboxResult {
  value: unknown;
  stdout: string;
}

/** The sandbox as the executor sees it (tests may substitute their own). */
export interface Sandbox {
  run(request: SandboxRequest): Promise<SandboxResult>;
}

/** Default heap per call. */
export const DEFAULT_SANDBOX_MEMORY_BYTES = 32 * 1024 * 1024;
