/**
 * A sync run's block outcomes, kept for fromBlock re-runs (docs/workflow-runs.md, "Re-running
 * runs") without a round trip per block: the "collecting" checkpointer beside the async worker's
 * (durable-run.ts). The executor records each completed block instance to it as the durable one
 * would; it only appends to memory, and the run's finish writes the whole list in one batch
 * (finish_workflow_run's `p_checkpoints`, workflows_private.store_run_checkpoints), masked as the
 * run's trace is. Its Waits sleep: it never parks, but at an approval, when it is given a desk
 * (approval-desk.ts): the request then hands the run, with what it recorded, to the async path
 * (api/paused-answer.ts).
 *
 * Given a history (a re-run's original outcomes), the run replays it, and the kept list starts
 * with it, so the re-run's own history is whole and can itself be re-run from a block.
 */
import type { ApprovalDesk } from "../core/approvals.ts";
import type { Checkpoint, KeptDurability } from "../executor/replay.ts";

/** A collecting checkpointer: its history masked once the run ended (`kept`), and as recorded. */
export interface CollectedOutcomes extends KeptDurability {
  /**
   * The history unmasked, as the blocks saw it: what a run paused at an approval hands over, since
   * the blocks after the approval must see what they saw (its final finish stores `kept` over it).
   */
  readonly recorded: readonly Checkpoint[];
}

/** A collecting checkpointer, replaying `history` (none for a first run); `approvals` lets it wait for people. */
export function collectingDurability(history: readonly Checkpoint[] = [], approvals?: ApprovalDesk): CollectedOutcomes {
  const recorded: Checkpoint[] = [...history];
  let masked: Checkpoint[] | null = null;
  let mask: (<T>(value: T) => T) | null = null;
  return {
    history,
    parkAfterMs: null,
    ...(approvals ? { approvals } : {}),
    get recorded() {
      return recorded;
    },
    get kept() {
      if (!mask) return recorded;
      masked ??= recorded.map(mask);
      return masked;
    },
    record(checkpoint) {
      recorded.push(checkpoint);
      return Promise.resolve();
    },
    close(given) {
      mask = given;
    },
  };
}
