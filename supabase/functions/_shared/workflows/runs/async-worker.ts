/**
 * The async worker's loop: what the `workflow-worker` function does each time the queue poller
 * (locally) or pg_cron + pg_net (hosted) POSTs it `{queue_name, batch_size, visibility_timeout}`.
 *
 * It claims queued runs (claim_workflow_runs: each comes back `running` with its next attempt and
 * a lease of `visibility_timeout` seconds, which its queue message shares), runs up to a batch of
 * them side by side, heartbeats each every third of its lease (so a long run keeps both), finishes
 * each one, and claims more as runs end (or every 250 ms while some are running), while the
 * invocation is young enough that a run it takes can still end within the function's wall clock. A worker that dies stops heartbeating: once the
 * lease ends the message is visible again and the next claim takes the same execution id with the
 * next attempt, so a run is never lost nor recorded twice (finish is idempotent and the first
 * finish wins). A heartbeat that answers `alive: false` (another attempt took over, or the run
 * ended) or `cancelRequested` stops the run; a run stopped because it is no longer this attempt's is
 * not finished (the attempt that holds it does that).
 *
 * Runs are durable (durable-run.ts): each completed block is checkpointed, a later attempt resumes
 * from the checkpoints, and a long Wait parks the run (park_workflow_run) instead of holding a slot.
 */
import { runWorkflow } from "./run-workflow.ts";
import { ValidationError } from "../state/issues.ts";
import type { RunPayload } from "./lifecycle-answers.ts";
import type { RunCache } from "./run-cache.ts";
import { durabilityOf, parkRun } from "./durable-run.ts";
import { keepAlive } from "./run-lease.ts";
import type { CancelSignals } from "./cancel-signals.ts";
import { endingOf, finishRun, prepareRun, recordUnexpectedEnd, triggerOf } from "./run-lifecycle.ts";
import { isDatabaseUnavailable, type ServiceCall } from "../../db/service-calls.ts";
import type { RecordingFileStore, RunFilesTarget } from "./storage-files.ts";

/** What the worker runs on. */
export interface WorkerServices {
  call: ServiceCall;
  cache: RunCache;
  files(target: RunFilesTarget): RecordingFileStore;
  /** The longest one attempt of an async run may take; also bounded by what is left of the invocation. */
  runTimeoutMs: number;
  /** Waits longer than this park the run (durable-run.ts). */
  parkAfterMs: number;
  /** How long one invocation may last (the function's wall clock, less a margin). */
  invocationBudgetMs: number;
  /** Errors worth a log line (a run that broke the worker's own code). */
  log(event: string, fields: Record<string, unknown>): void;
  /** Where a run hears at once that it was cancelled (cancel-signals.ts). */
  cancelSignals: CancelSignals;
}

/** What the poller sends. */
export interface DrainRequest {
  batchSize: number;
  visibilitySeconds: number;
}

/** A run is claimed only while at least this much of the invocation is left for it. */
const MIN_RUN_TIME_MS = 30_000;

/** Runs one claimed run to its end and records it. */
async function runClaimed(services: WorkerServices, run: RunPayload, leaseSeconds: number, deadline: number): Promise<void> {
  const controller = new AbortController();
  let lost = false;
  const onLost = () => void (lost = true);
  const stop = keepAlive(services, run, leaseSeconds, controller, onLost);
  try {
    let prepared;
    try {
      prepared = await prepareRun(services.call, services.cache, run);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      await finishRun(services.call, run.executionId, { status: "failed", error: { message: error.message, code: "INVALID_WORKFLOW" } });
      return;
    }
    const files = services.files({ workspaceId: run.workflow.workspaceId, workflowId: run.workflow.id, executionId: run.executionId });
    const durable = durabilityOf(services.call, run, services.parkAfterMs, onLost);
    const result = await runWorkflow({
      workflow: prepared.compiled, trigger: triggerOf(run), env: prepared.env, executionId: run.executionId, account: run.workflow.billingAccountId, trace: run.trace, signal: controller.signal,
      timeoutMs: Math.max(1_000, Math.min(services.runTimeoutMs, deadline - Date.now())), services: { files }, durable,
    });
    if (result.status === "parked") {
      const parked = await parkRun(services.call, run, result.resumeAt as string);
      if (parked.parked || !parked.alive) return;
      await finishRun(services.call, run.executionId, { status: "cancelled", durationMs: result.metadata.durationMs });
      return;
    }
    if (lost) return;
    // Its history is kept for re-runs, masked (it was recorded unmasked, for the blocks after each).
    await finishRun(services.call, run.executionId, { ...endingOf(result, files.files), checkpoints: durable.kept });
  } catch (error) {
    services.log("async_run_failed", { executionId: run.executionId, attempt: run.attempt, error });
    // A lost database connection (a 503 of ours) is no failure of the run: it is left to its lease,
    // and the sweeper queues it again; the next attempt resumes from the checkpoints.
    if (isDatabaseUnavailable(error)) return;
    await recordUnexpectedEnd(services.call, run.executionId, error);
  } finally {
    stop();
  }
}

/** How often a worker with runs in flight looks for more. */
const POLL_WHILE_BUSY_MS = 250;

/**
 * Claims and runs queued runs, up to a batch in flight at once, until the queue is empty and every
 * run has ended, or the invocation is too old to take more (see the module comment).
 */
export async function drainRunQueue(services: WorkerServices, request: DrainRequest): Promise<{ processed: number }> {
  const deadline = Date.now() + services.invocationBudgetMs;
  const inFlight = new Set<Promise<void>>();
  let processed = 0;
  for (;;) {
    if (inFlight.size < request.batchSize && deadline - Date.now() >= MIN_RUN_TIME_MS) {
      const { runs } = (await services.call("claim_workflow_runs", {
        p_batch_size: request.batchSize - inFlight.size, p_lease_seconds: request.visibilitySeconds, ...services.cache.claimHints(),
      })) as { runs: RunPayload[] };
      for (const run of runs) {
        const running: Promise<void> = runClaimed(services, run, request.visibilitySeconds, deadline).finally(() => inFlight.delete(running));
        inFlight.add(running);
      }
      processed += runs.length;
      if (runs.length > 0) continue;
    }
    if (inFlight.size === 0) break;
    await Promise.race([...inFlight, new Promise((resolve) => setTimeout(resolve, POLL_WHILE_BUSY_MS))]);
  }
  return { processed };
}
