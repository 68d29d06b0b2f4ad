/**
 * The run's budgets for work and size (limits.ts), charged as the run goes: iterations when a loop
 * or parallel starts, output size when a block finishes. Going past one fails the block at fault
 * with a message saying which budget and by how much (block-execution.ts names the block), so an
 * `error` edge can take over like for any other failure. The counters are plain numbers on the
 * run, so a run's state stays plain data.
 */
import type { BlockOutput } from "../core/context.ts";
import { WorkflowError } from "../core/errors.ts";
import type { CompiledNode } from "./graph.ts";
import { jsonLength } from "../core/json-size.ts";
import { describeChars, MAX_BLOCK_OUTPUT_CHARS, MAX_RUN_ITERATIONS, MAX_RUN_OUTPUT_CHARS } from "../core/limits.ts";
import type { Run } from "./run-state.ts";

/** Charges a loop's iterations or a parallel's branches to the run, before any of them starts. */
export function chargeIterations(run: Run, node: CompiledNode, count: number): void {
  if (run.iterationsUsed + count > MAX_RUN_ITERATIONS) {
    const noun = node.subflow?.kind === "parallel" ? "branches" : "iterations";
    throw new WorkflowError(
      "LIMIT_EXCEEDED",
      `asks for ${count.toLocaleString("en")} ${noun}, but the run has already used ${run.iterationsUsed.toLocaleString("en")} of the ` +
        `${MAX_RUN_ITERATIONS.toLocaleString("en")} iterations and branches its loops and parallels may have together`,
    );
  }
  run.iterationsUsed += count;
}

/**
 * Checks a finished block's output against the budget of one block and, unless it is a loop or
 * parallel (whose results hold outputs counted already), adds it to the run's total.
 */
export function chargeOutput(run: Run, node: CompiledNode, output: BlockOutput): void {
  const counted = node.subflow === null;
  const room = counted ? Math.min(MAX_BLOCK_OUTPUT_CHARS, MAX_RUN_OUTPUT_CHARS - run.outputChars) : MAX_BLOCK_OUTPUT_CHARS;
  const size = jsonLength(output, room, run.sizes);
  if (size > MAX_BLOCK_OUTPUT_CHARS) {
    throw new WorkflowError("OUTPUT_TOO_LARGE", `its output is larger than the budget of ${describeChars(MAX_BLOCK_OUTPUT_CHARS)} for one block`);
  }
  if (!counted) return;
  if (size > room) {
    throw new WorkflowError("OUTPUT_TOO_LARGE", `the outputs of the run's blocks together passed their budget of ${describeChars(MAX_RUN_OUTPUT_CHARS)} with this block's`);
  }
  run.outputChars += size;
}
