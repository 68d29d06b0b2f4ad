/**
 * A sync run's block outcomes, kept for fromBlock re-runs (docs/workflow-runs.md, "Re-running
 * runs") without a round trip per block: the "collecting" checkpointer beside the async worker's
 * (durable-run.ts). The executor records each completed block instance to it as the durable one
 * would; it only appends to memory, and the run's finish writes the whole list in one batch
 * (finish_workflow_run's `p_checkpoints`, workflows_private.store_run_checkpoints), masked as the
 * run's trace is. It never parks: a sync run's Waits sleep.
 *
 * Given a history (a re-run's original outcomes), the run replays it, and the kept list starts
 * with it, so the re-run's own history is whole and can itself be re-run from a block.
 */
import type { Checkpoint, KeptDurability } from "../executor/replay.ts";

/** A collecting checkpointer, replaying `history` (none for a first run). */
export function collectingDurability(history: readonly Checkpoint[] = []): KeptDurability {
  let kept: Checkpoint[] = [...history];
  return {
    history,
    parkAfterMs: null,
    get kept() {
      return kept;
    },
    record(checkpoint) {
      kept.push(checkpoint);
      return Promise.resolve();
    },
    close(mask) {
      kept = kept.map(mask);
    },
  };
}
