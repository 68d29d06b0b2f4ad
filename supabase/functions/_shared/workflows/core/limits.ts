/**
 * The engine's caps and budgets (docs/workflow-limits.md has the table of every limit, where it is
 * enforced and its error code). Going past one fails loudly, naming the block, never quietly stops
 * short. Sizes are measured as the length of a value's JSON text (see json-size.ts).
 */

/** `4 MiB (4,194,304 characters of JSON)`: how messages state a size budget. */
export function describeChars(chars: number): string {
  const mib = chars / 1024 / 1024;
  return `${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB (${chars.toLocaleString("en")} characters of JSON)`;
}

/** Most iterations of a loop, and most branches of a parallel (decisions, "Executor semantics"). */
export const MAX_ITERATIONS = 1000;

/** Most parallel branches in flight at once; more branches run in a sliding window. */
export const MAX_CONCURRENT_BRANCHES = 20;

/**
 * Iterations and branches of every loop and parallel of one run together (nested ones count each
 * time they run), so a 300 × 300 nest, let alone 1,000 × 1,000, cannot grow a run without bound.
 */
export const MAX_RUN_ITERATIONS = 10_000;

/** The longest JSON text of one block's output (4 MiB of characters). */
export const MAX_BLOCK_OUTPUT_CHARS = 4 * 1024 * 1024;

/**
 * The outputs of all the blocks of one run together (32 MiB of JSON text). Trigger outputs are
 * not counted: they are the request, which the body cap bounds; loop and parallel results are not
 * counted twice, since they hold outputs counted already.
 */
export const MAX_RUN_OUTPUT_CHARS = 32 * 1024 * 1024;

/** A trace span's input or output (and an output or variable in the context) longer than this is shown as a marker. */
export const MAX_TRACE_VALUE_CHARS = 16 * 1024;

/** How much of a shortened value the marker keeps, as a preview. */
export const TRACE_PREVIEW_CHARS = 512;

/** All the trace spans of a run together; the spans past it are cut and a marker says how many. */
export const MAX_TRACE_CHARS = 2 * 1024 * 1024;

/**
 * The largest request body a run accepts (16 MiB): below the local gateway's 20 MiB for functions,
 * so a caller gets the workflow service's own 413 and not the gateway's; Sim takes 10 MB. An inline
 * file is base64 in the body, so files past about 12 MB go as URL entries.
 */
export const MAX_REQUEST_BODY_BYTES = 16 * 1024 * 1024;

/** The longest time limit a sandbox call may have (a Function block's `timeoutMs` cap). */
export const MAX_SANDBOX_TIMEOUT_MS = 60_000;

/** The largest heap a sandbox call may have (a Function block's `memoryLimitMb` cap). */
export const MAX_SANDBOX_MEMORY_BYTES = 128 * 1024 * 1024;

/**
 * The longest a Wait may pause in a run that can park (an async run): 30 days. The Wait block
 * enforces it and the executor's durable runs honour it; it is here, not in executor/durable.ts,
 * because a block that imports the executor closes an import circle through the spec registry.
 */
export const MAX_DURABLE_WAIT_MS = 30 * 24 * 60 * 60_000;
