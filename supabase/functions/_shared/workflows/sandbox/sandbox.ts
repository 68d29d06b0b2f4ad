/**
 * What every sandbox runner shares (a request's deadline, its plain-data call, its settled result)
 * and the inline runner. The contract itself is core/sandbox-contract.ts; where the code runs
 * depends on the runtime (sandbox-choice.ts): a pool of worker threads off the request thread
 * (sandbox-pool.ts), the `workflow-sandbox` function over HTTP (remote-sandbox.ts), or, under Node
 * (vitest, the in-process benchmark), the caller's own thread (`inlineSandbox` below). Each runs the
 * same QuickJS call (quickjs-runner.ts).
 */
import type { QuickJSWASMModule } from "quickjs-emscripten";
import { inUserTerms } from "../core/code-references.ts";
import { WorkflowError } from "../core/errors.ts";
import { MAX_BLOCK_OUTPUT_CHARS } from "../core/limits.ts";
import type { Sandbox, SandboxRequest, SandboxResult } from "../core/sandbox-contract.ts";
import { moduleFor, runQuickJS, type SizedModule, type SandboxCall, type SandboxOutcome, type StopCheck } from "./quickjs-runner.ts";

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
