/**
 * The delivery worker's loop: claim due deliveries as attempt slots free up, make the attempts
 * side by side, and record their results in batches, until the queue has stayed empty for a while
 * or the invocation's time budget is spent. Claiming, attempting and recording overlap, so one
 * invocation keeps a steady stream of deliveries flowing and a delivery queued while it runs is
 * picked up within one poll interval.
 *
 * Nothing here decides what is delivered: claim_webhook_deliveries and record_webhook_attempts do,
 * in SQL. A result that cannot be recorded (the database is restarting) is retried; should that
 * fail for good, the delivery's message reappears after its visibility timeout and the delivery is
 * attempted again under the same id, never lost.
 */
import type { ServiceRpc } from "../../../db/service-rpc.ts";
import type { Logger } from "../../../http/logger.ts";
import type { AttemptRecord } from "./deliver.ts";
import { type ClaimedDelivery, claimedDelivery } from "./event.ts";

/** How one invocation drains the queue. */
export interface DrainOptions {
  rpc: ServiceRpc;
  /** Attempts in flight at most (the queue worker's batch size). */
  concurrency: number;
  /** Seconds a claimed delivery stays hidden from other workers. */
  visibilityTimeoutS: number;
  /** Stop claiming after this long; attempts under way are finished and recorded. */
  budgetMs: number;
  /** Stop once nothing was claimed for this long and nothing is in flight. */
  idleMs: number;
  /** Wait between claims that found nothing. */
  pollMs: number;
  attempt(delivery: ClaimedDelivery): Promise<AttemptRecord>;
  logger: Logger;
  now?: () => number;
}

/** What an invocation did. */
export interface DrainSummary {
  attempts: number;
  delivered: number;
  retried: number;
  failed: number;
}

const claimAnswer = { parse: (value: unknown) => claimedDelivery.array().parse((value as { deliveries?: unknown } | null)?.deliveries) };
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits for records of attempts to reach the database, trying again while it is unreachable. */
async function recordBatch(rpc: ServiceRpc, batch: AttemptRecord[], logger: Logger): Promise<void> {
  for (let retry = 0; ; retry += 1) {
    try {
      await rpc("record_webhook_attempts", { p_attempts: batch });
      return;
    } catch (error) {
      if (retry >= 6) {
        // The messages reappear after their visibility timeout and the deliveries are attempted again.
        logger.error("webhook_attempts_not_recorded", { attempts: batch.length, error });
        return;
      }
      logger.warn("webhook_attempts_record_retry", { attempts: batch.length, retry, error });
      await sleep(250 * 2 ** retry);
    }
  }
}

/** Drains the queue as the module comment says. */
export async function drainDeliveries(options: DrainOptions): Promise<DrainSummary> {
  const { rpc, concurrency, visibilityTimeoutS, budgetMs, idleMs, pollMs, attempt, logger, now = Date.now } = options;
  const summary: DrainSummary = { attempts: 0, delivered: 0, retried: 0, failed: 0 };
  const started = now();
  let lastWork = started;
  const inFlight = new Set<Promise<void>>();
  let results: AttemptRecord[] = [];
  let recording: Promise<void> = Promise.resolve();
  let recorder: Promise<void> | null = null;

  // One record call at a time; results finished meanwhile wait for the next, so batches grow with the load.
  const flush = () => {
    if (recorder !== null || results.length === 0) return;
    const batch = results;
    results = [];
    recorder = recordBatch(rpc, batch, logger).finally(() => {
      recorder = null;
      flush();
    });
    recording = recorder;
  };

  const start = (delivery: ClaimedDelivery) => {
    const task: Promise<void> = attempt(delivery)
      .then((record) => {
        results.push(record);
        summary.attempts += 1;
        if (record.outcome === "delivered") summary.delivered += 1;
        else if (record.outcome === "retry") summary.retried += 1;
        else summary.failed += 1;
        flush();
      })
      .catch((error: unknown) => logger.error("webhook_attempt_crashed", { deliveryId: delivery.deliveryId, error }))
      .finally(() => inFlight.delete(task));
    inFlight.add(task);
  };

  while (now() - started < budgetMs) {
    const free = concurrency - inFlight.size;
    if (free <= 0) {
      await Promise.race(inFlight);
      continue;
    }
    let claimed: ClaimedDelivery[] = [];
    try {
      claimed = claimAnswer.parse(await rpc("claim_webhook_deliveries", { p_batch_size: free, p_visibility_timeout: visibilityTimeoutS }));
    } catch (error) {
      logger.warn("webhook_claim_failed", { error });
    }
    for (const delivery of claimed) start(delivery);
    if (claimed.length > 0) {
      lastWork = now();
      continue;
    }
    if (inFlight.size === 0 && now() - lastWork >= idleMs) break;
    await Promise.race([sleep(pollMs), ...inFlight]);
  }

  await Promise.all(inFlight);
  flush();
  while (recorder !== null) await recording;
  return summary;
}
