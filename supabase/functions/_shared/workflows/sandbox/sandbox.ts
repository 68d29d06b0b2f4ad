/**
 * The sandbox as the executor sees it: a `run(request)` that resolves with the code's result or
 * rejects with a WorkflowError. Where the code runs depends on the runtime (sandbox-choice.ts):
 * a pool of worker threads off the request thread (sandbox-pool.ts), the `workflow-sandbox`
 * function over HTTP (remote-sandbox.ts), or, under Node (vitest, the in-process benchmark), the
 * caller's own thread (`inlineSandbox` below). Each runs the same QuickJS call (quickjs-runner.ts).
 */
import type { QuickJSWASMModule } from "quickjs-emscripten";
import { inUserTerms } from "../core/code-references.ts";
import { WorkflowError } from "../core/errors.ts";
import { MAX_BLOCK_OUTPUT_CHARS } from "../core/limits.ts";
import { moduleFor, runQuickJS, type SizedModule, type SandboxCall, type SandboxKind, type SandboxOutcome, type StopCheck } from "./quickjs-runner.ts";

export type { SandboxKind };

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

/** When code that starts at `startedAt` must stop: its own limit from then, never past the run's. */
export function stopAt(request: SandboxRequest, startedAt: number = Date.now()): number {
  return request.timeoutMs === undefined ? request.deadline : Math.min(request.deadline, startedAt + request.timeoutMs);
}

/** The request as plain data for wherever the code runs, starting at `startedAt`. */
export function toCall(request: SandboxRequest, startedAt: number = Date.now()): SandboxCall {
  return {
    kind: request.kind,
    source: request.source,
    valuesJson: JSON.stringify(request.values),
    deadline: stopAt(request, startedAt),
    memoryBytes: request.memoryBytes,
    maxResultChars: MAX_BLOCK_OUTPUT_CHARS,
  };
}

/**
 * The outcome as the executor wants it: the result, or a thrown WorkflowError whose message names
 * the code as the user wrote it (`refs`: the request's).
 */
export function settle(outcome: SandboxOutcome, refs: readonly string[] = []): SandboxResult {
  if (!outcome.ok) throw new WorkflowError(outcome.code, inUserTerms(outcome.message, refs));
  return { value: JSON.parse(outcome.resultJson), stdout: outcome.stdout };
}

/** Rejects at once when the request's signal has aborted or its deadline has passed. */
export function refuseEarly(request: SandboxRequest): void {
  if (request.signal?.aborted) throw request.signal.reason;
  if (Date.now() > request.deadline) throw new WorkflowError("SANDBOX_TIMEOUT", "the code had no time left to run");
}

let inlineModule: SizedModule | null = null;
/** Modules a call broke: a call that was still waiting for one of them takes a fresh one. */
const discarded = new WeakSet<SizedModule>();

/**
 * Runs one call on the calling thread. The WebAssembly module loads once per process and memory
 * limit; a call that breaks it (a trap, a memory bomb) discards it, and the next call loads a
 * fresh one.
 */
export async function runInline(call: SandboxCall, stopReason: StopCheck): Promise<SandboxOutcome> {
  for (;;) {
    const sized = moduleFor(inlineModule, call.memoryBytes);
    inlineModule = sized;
    let module: QuickJSWASMModule;
    try {
      module = await sized.module;
    } catch (error) {
      if (inlineModule === sized) inlineModule = null;
      throw error;
    }
    if (discarded.has(sized)) continue;
    const outcome = runQuickJS(module, call, stopReason);
    if (outcome.resetEngine) {
      discarded.add(sized);
      if (inlineModule === sized) inlineModule = null;
    }
    return outcome;
  }
}

/**
 * QuickJS on the caller's own thread, for Node (vitest, the in-process benchmark), which has no
 * Web Workers. The code holds the thread until it ends, so the signal is only checked before it
 * starts: never use this where other requests share the thread.
 */
export const inlineSandbox: Sandbox = {
  async run(request) {
    refuseEarly(request);
    const call = toCall(request);
    return settle(await runInline(call, () => (Date.now() > call.deadline ? "timeout" : null)), request.refs);
  },
};
