/**
 * Wait: pauses this branch (other branches keep running) for at most 5 minutes, in process.
 * Longer pauses belong to a schedule; asking for more fails with LIMIT_EXCEEDED rather than
 * quietly waiting less.
 */
import { MAX_WAIT_MS } from "./config.ts";
import { WorkflowError } from "../../engine/errors.ts";
import { preview } from "../../engine/values.ts";
import type { BlockHandler } from "../block-handler.ts";

interface WaitInput {
  amount: unknown;
  unit: "ms" | "seconds" | "minutes";
}

const UNIT_MS = { ms: 1, seconds: 1_000, minutes: 60_000 } as const;

/** The wait in ms, or an error naming what is wrong with the amount. */
export function waitMs(input: WaitInput): number {
  const amount = typeof input.amount === "string" && input.amount.trim() !== "" ? Number(input.amount) : input.amount;
  if (typeof amount !== "number" || !Number.isFinite(amount) || amount < 0) {
    throw new WorkflowError("BLOCK_FAILED", `amount must be a number of ${input.unit} of at least 0 (got ${preview(input.amount)})`);
  }
  const ms = Math.round(amount * UNIT_MS[input.unit]);
  if (ms > MAX_WAIT_MS) throw new WorkflowError("LIMIT_EXCEEDED", `a wait of ${ms} ms is longer than the 5 minute limit`);
  return ms;
}

/** Handler of `wait` blocks; its timeout is the wait plus a margin. */
export const waitHandler: BlockHandler<WaitInput> = {
  timeoutMs: (input) => {
    try {
      return waitMs(input) + 5_000;
    } catch {
      return 5_000;
    }
  },
  async execute(run) {
    const ms = waitMs(run.input);
    await run.services.clock.sleep(ms, run.signal);
    return { waitDuration: ms, status: "completed" };
  },
};
