/**
 * A sync run's block outcomes, kept for fromBlock re-runs (docs/workflow-runs.md, "Re-running
 * runs") without a round trip per block: the "collecting" checkpointer beside the async worker's
 * (durable-run.ts). The executor records each completed block instance to it as the durable one
 * would; it only appends to memory, and the run's finish writes the whole list in one batch
 * (finish_workflow_run's `p_checkpoints`, workflows_private.store_run_checkpoints). It never parks:
 * a sync run's Waits sleep.
 *
 * Given a history (a re-run's original outcomes), the run replays it, and the collected list starts
 * with it, so the re-run's own history is whole and can itself be re-run from a block.
 */
import type { Checkpoint, Durability } from "../executor/replay.ts";

/** A Durability that collects what it is given (see the module comment). */
export interface CollectingDurability extends Durability {
  /** The history it was given, then every checkpoint recorded since, in order: what the run's finish stores. */
  readonly collected: readonly Checkpoint[];
}

/** A collecting checkpointer, replaying `history` (none for a first run). */
export function collectingDurability(history: readonly Checkpoint[] = []): CollectingDurability {
  const collected: Checkpoint[] = [...history];
  return {
    history,
    parkAfterMs: null,
    collected,
    record(checkpoint) {
      collected.push(checkpoint);
      return Promise.resolve();
    },
  };
}
