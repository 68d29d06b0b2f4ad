/**
 * The async worker's side of durable runs (executor/durable.ts, docs/workflow-runs.md "Durable async
 * runs"): the run's Durability — its history as claim_workflow_runs handed it over, checkpoints
 * recorded through record_workflow_checkpoint by the attempt that holds the run — and parking a run
 * whose attempt ended at a long Wait (park_workflow_run: the worker is freed and a delayed queue
 * message resumes the run at the Wait's due time).
 *
 * `WORKFLOW_PARK_AFTER_MS` (default 30 s): Waits longer than this park the run instead of sleeping in
 * the worker (as do Waits that would outlast the attempt's time).
 */
import { readEnv } from "../../config/env.ts";
import type { KeptDurability } from "../executor/replay.ts";
import { collectingDurability } from "./collected-outcomes.ts";
import { WorkflowError } from "../core/errors.ts";
import { setting } from "../executor/time-budget.ts";
import type { ParkAnswer, RunPayload } from "./lifecycle-answers.ts";
import { approvalDeskOf } from "./approval-desk.ts";
import { storableCopy, UNSTORABLE_CODES } from "./run-lifecycle.ts";
import { isDatabaseUnavailable, type ServiceCall } from "../../db/service-calls.ts";

/** Waits longer than this park an async run, when WORKFLOW_PARK_AFTER_MS is not set. */
export const DEFAULT_PARK_AFTER_MS = 30_000;

/** The park threshold from the environment (`read` is for tests). */
export function parkAfterMs(read: (name: string) => string | undefined = readEnv): number {
  return setting(read, "WORKFLOW_PARK_AFTER_MS") ?? DEFAULT_PARK_AFTER_MS;
}

/** How many times a checkpoint is sent when its connection is lost. */
const RECORD_ATTEMPTS = 3;

/**
 * The Durability of a claimed run. A checkpoint the database refuses because another attempt holds
 * the run (or it ended) calls `onLost` and stops the run; a lost connection is retried, and when it
 * stays lost the attempt lets go of the run the same way: it is not ended, so when its lease runs
 * out the sweeper queues it again and the next attempt resumes from the last checkpoint, as after a
 * worker that died. Text jsonb cannot store is replaced, as finishRun does. Approval blocks keep
 * their approvals through approval-desk.ts. What it records is kept in memory too, as a sync run's
 * collector keeps it (collected-outcomes.ts): masked once the run ends, for the run's finish to
 * store over the unmasked records (docs/workflow-runs.md, "Re-running runs": what outlives a run is
 * masked).
 */
export function durabilityOf(call: ServiceCall, run: RunPayload, parkAfter: number, onLost: () => void): KeptDurability {
  const memory = collectingDurability(run.checkpoints ?? []);
  return {
    history: memory.history,
    parkAfterMs: parkAfter,
    approvals: approvalDeskOf(call, run, onLost),
    get kept() {
      return memory.kept;
    },
    close: (mask) => memory.close(mask),
    async record(checkpoint) {
      let sent: unknown = checkpoint;
      for (let attempt = 1; ; attempt++) {
        try {
          const answer = (await call("record_workflow_checkpoint", { p_execution_id: run.executionId, p_attempt: run.attempt, p_checkpoint: sent })) as { recorded: boolean };
          if (answer.recorded) return await memory.record(checkpoint);
          onLost();
          throw new WorkflowError("CANCELLED", "another attempt took the run over, or it ended");
        } catch (error) {
          if (UNSTORABLE_CODES.has(String((error as { code?: unknown }).code))) sent = storableCopy(sent);
          else if (!isDatabaseUnavailable(error)) throw error;
          else if (attempt >= RECORD_ATTEMPTS) {
            onLost();
            throw new WorkflowError("CANCELLED", "the database connection was lost; the run goes back to the queue");
          } else await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
        }
      }
    },
  };
}

/** Parks a run whose attempt ended at a long Wait, until `resumeAt`. */
export async function parkRun(call: ServiceCall, run: RunPayload, resumeAt: string): Promise<ParkAnswer> {
  return (await call("park_workflow_run", { p_execution_id: run.executionId, p_attempt: run.attempt, p_resume_at: resumeAt })) as ParkAnswer;
}
