/**
 * Wait: pauses this branch (other branches keep running). In a synchronous run it sleeps in
 * process, at most 5 minutes (and within the run's time budget); in an async run it may wait up to
 * 30 days, and a wait longer than the park threshold parks the run instead of holding its worker
 * (executor/durable.ts; the 30 days are in core/limits.ts; docs/workflow-limits.md). Asking for more than the limit fails with
 * LIMIT_EXCEEDED rather than quietly waiting less.
 */
import { MAX_WAIT_MS } from "./config.ts";
import { WorkflowError } from "../../core/errors.ts";
import { MAX_DURABLE_WAIT_MS } from "../../core/limits.ts";
import { preview } from "../../core/values.ts";
import type { BlockHandler } from "../../core/block-handler.ts";

interface WaitInput {
  amount: unknown;
  unit: "ms" | "seconds" | "minutes";
}

const UNIT_MS = { ms: 1, seconds: 1_000, minutes: 60_000 } as const;

/** The wait in ms, or an error naming what is wrong with the amount; `durable` runs (async) may wait 30 days. */
export function waitMs(input: WaitInput, durable = false): number {
  const amount = typeof input.amount === "string" && input.amount.trim() !== "" ? Number(input.amount) : input.amount;
  if (typeof amount !== "number" || !Number.isFinite(amount) || amount < 0) {
    throw new WorkflowError("BLOCK_FAILED", `amount must be a number of ${input.unit} of at least 0 (got ${preview(input.amount)})`);
  }
  const ms = Math.round(amount * UNIT_MS[input.unit]);
  if (durable && ms > MAX_DURABLE_WAIT_MS) throw new WorkflowError("LIMIT_EXCEEDED", `a wait of ${ms} ms is longer than the 30 day limit of async runs`);
  if (!durable && ms > MAX_WAIT_MS) {
    throw new WorkflowError("LIMIT_EXCEEDED", `a wait of ${ms} ms is longer than the 5 minute limit of synchronous runs (run it async to wait up to 30 days)`);
  }
  return ms;
}

/** Handler of `wait` blocks; its timeout is the wait plus a margin (a parked wait ends the attempt before it). */
export const waitHandler: BlockHandler<WaitInput> = {
  timeoutMs: (input) => {
    try {
      return waitMs(input, true) + 5_000;
    } catch {
      return 5_000;
    }
  },
  async execute(run) {
    const ms = waitMs(run.input, run.durable);
    await run.pause(ms);
    return { waitDuration: ms, status: "completed" };
  },
};
