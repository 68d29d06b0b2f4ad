/**
 * Function: the user's JavaScript, run in the sandbox as the body of an async function. Its return
 * value is `<fn.result>`, what it printed is `<fn.stdout>`. References in the code are values
 * (`<api.items>.length` is a number), not text pasted into the source.
 */
import { DEFAULT_SANDBOX_MEMORY_BYTES } from "../../core/sandbox-contract.ts";
import type { ResolvedCode } from "../../core/resolver.ts";
import type { BlockHandler } from "../../core/block-handler.ts";

/** Time a Function block may run unless its config says otherwise. */
export const DEFAULT_FUNCTION_TIMEOUT_MS = 10_000;

interface FunctionInput {
  code: ResolvedCode;
  timeoutMs?: number;
  memoryLimitMb?: number;
}

/** Handler of `function` blocks. */
export const functionHandler: BlockHandler<FunctionInput> = {
  stopsAtDeadline: true,
  timeoutMs: () => DEFAULT_FUNCTION_TIMEOUT_MS,
  async execute(run) {
    const { value, stdout } = await run.services.sandbox.run({
      kind: "function",
      source: run.input.code.source,
      values: run.input.code.values,
      refs: run.input.code.refs,
      deadline: run.runDeadline,
      timeoutMs: run.timeoutMs,
      memoryBytes: run.input.memoryLimitMb ? run.input.memoryLimitMb * 1024 * 1024 : DEFAULT_SANDBOX_MEMORY_BYTES,
      signal: run.signal,
      owner: run.executionId,
      account: run.account ?? undefined,
    });
    return { result: value, stdout };
  },
};
