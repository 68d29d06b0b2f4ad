/**
 * Keeping a run's lease while it is alive, for the async worker and for runs answered within their
 * request (sync and streamed). A run holds its record only for its lease; the instance running it
 * renews the lease every third of it with heartbeat_workflow_run. An instance that dies stops
 * renewing, and once the lease runs out the run is ended: an async run goes back to the queue, a
 * sync run is failed WORKER_LOST by whoever sees it first (a retry with its Idempotency-Key, the
 * sweeper, or its own late heartbeat). docs/workflow-runs.md, "Leases".
 */
import { WorkflowError } from "../core/errors.ts";
import type { Heartbeat, RunPayload } from "./lifecycle-answers.ts";
import type { ServiceCall } from "../../db/service-calls.ts";
import type { CancelSignals } from "./cancel-signals.ts";

/**
 * A sync run's lease, in seconds: short, so a retry of a request whose instance died waits at
 * most this long for the recorded ending; renewed every 10 s, so most runs end before any renewal.
 */
export const SYNC_LEASE_SECONDS = 30;

/** What keeping a lease needs. */
export interface LeaseServices {
  call: ServiceCall;
  /** Where a failed heartbeat is reported (it is retried on the next tick). */
  log(event: string, fields: Record<string, unknown>): void;
  /** Where a cancellation is heard at once; the heartbeat still reports it, should a signal be missed. */
  cancelSignals: CancelSignals;
}

/** Why a cancelled run stops: the executor records the run `cancelled` for it. */
function cancellation(): WorkflowError {
  return new WorkflowError("CANCELLED", "the run was cancelled");
}

/**
 * Renews `run`'s lease every third of `leaseSeconds` until the returned function is called; aborts
 * `controller` when the database says to stop: the run ended or another attempt took it over (then
 * `onLost` is called first, with that heartbeat), or its cancellation was signalled or requested.
 */
export function keepAlive(
  services: LeaseServices, run: Pick<RunPayload, "executionId" | "attempt">, leaseSeconds: number, controller: AbortController, onLost: (beat: Heartbeat) => void,
): () => void {
  const cancelled = () => controller.abort(cancellation());
  const unwatch = services.cancelSignals.watch(run.executionId, cancelled);
  const timer = setInterval(async () => {
    try {
      const beat = (await services.call("heartbeat_workflow_run", { p_execution_id: run.executionId, p_attempt: run.attempt, p_lease_seconds: leaseSeconds })) as Heartbeat;
      if (!beat.alive) {
        onLost(beat);
        controller.abort(new WorkflowError("CANCELLED", "another attempt took the run over, or it ended"));
      }
      else if (beat.cancelRequested) cancelled();
    } catch (error) {
      // A missed heartbeat is retried on the next tick; the lease is long enough for a few.
      services.log("heartbeat_failed", { executionId: run.executionId, error });
    }
  }, Math.max(1_000, (leaseSeconds * 1000) / 3));
  return () => {
    clearInterval(timer);
    unwatch();
  };
}

/** A sync run's lease, held while its request runs it: the run stops when `signal` aborts. */
export interface SyncLease {
  signal: AbortSignal;
  /**
   * Whether the database ended the run under this instance (its lease ran out before a renewal
   * reached it, so it is recorded failed WORKER_LOST): the instance records nothing more and
   * answers that ending, as a retry of the request would be answered.
   */
  readonly lost: boolean;
  /** Stops renewing (the run has ended); safe to call more than once. */
  release(): void;
}

/** The ending the database gives a run whose lease ran out (workflows_private.end_expired_run). */
export const WORKER_LOST = { code: "WORKER_LOST", message: "The worker running this run stopped before finishing it" } as const;

/** Starts keeping an admitted sync run's SYNC_LEASE_SECONDS lease (see keepAlive). */
export function holdSyncLease(services: LeaseServices, run: Pick<RunPayload, "executionId" | "attempt">): SyncLease {
  const controller = new AbortController();
  let lost = false;
  // A run cancelled while its lease ran out is recorded cancelled, which is what the stopped run says too.
  const release = keepAlive(services, run, SYNC_LEASE_SECONDS, controller, (beat) => void (lost = beat.runStatus === "failed"));
  return { signal: controller.signal, get lost() { return lost; }, release };
}

/**
 * A run that holds no renewed lease (manual and chat runs, whose lease is their time limit): it
 * stops when its cancellation is signalled (`signal` aborts); the sweeper ends it otherwise.
 * Shaped as a SyncLease that is never lost, so the streamed path takes either.
 */
export function watchCancellation(signals: CancelSignals, executionId: string): SyncLease {
  const controller = new AbortController();
  const release = signals.watch(executionId, () => controller.abort(cancellation()));
  return { signal: controller.signal, lost: false, release };
}
