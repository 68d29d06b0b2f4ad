/**
 * What a fromBlock re-run replays of its original (docs/workflow-runs.md, "Re-running runs"): the
 * named block and every block downstream of it in the top-level graph run again; every other block
 * instance the original completed returns its recorded outcome (replay.ts).
 *
 * Only a top-level block can be named. A block inside a loop or parallel runs once per iteration,
 * and "from here" inside an iteration has no single meaning; name the loop or parallel instead, and
 * it runs again whole. A named container takes its body's recorded instances with it, since their
 * keys carry its id (`fn1[loop1:2]`, durable.ts's instanceKey).
 */
import type { CompletedCheckpoint } from "./replay.ts";
import { planScope, type CompiledWorkflow } from "./graph.ts";

/** The history a fromBlock re-run replays, or why the block cannot be named. */
export type RerunHistory =
  | { ok: true; history: CompletedCheckpoint[] }
  | { ok: false; code: "UNKNOWN_BLOCK" | "NESTED_BLOCK"; message: string };

/** The top-level block a block instance's key belongs to: itself, or the container of its outermost iteration. */
function topLevelBlockOf(key: string): string {
  const open = key.indexOf("[");
  if (open < 0) return key;
  const iteration = key.slice(open + 1, key.indexOf("]", open));
  return iteration.slice(0, iteration.lastIndexOf(":"));
}

/** The original's completed instances that do not depend on `blockId` (see the module comment). */
export function rerunHistory(workflow: CompiledWorkflow, original: readonly CompletedCheckpoint[], blockId: string): RerunHistory {
  const node = workflow.nodes.get(blockId);
  if (!node) return { ok: false, code: "UNKNOWN_BLOCK", message: `fromBlock: "${blockId}" is not a block of the version the run executed` };
  if (node.scopeId !== null) {
    return { ok: false, code: "NESTED_BLOCK", message: `fromBlock: "${blockId}" is inside the loop or parallel "${node.scopeId}"; name a top-level block (the loop or parallel itself runs again whole)` };
  }
  const { reachable } = planScope(workflow.root, [node.index]);
  const rerun = new Set(workflow.root.nodes.filter((_, index) => reachable[index] === 1).map((each) => each.id));
  return { ok: true, history: original.filter((checkpoint) => !rerun.has(topLevelBlockOf(checkpoint.key))) };
}
