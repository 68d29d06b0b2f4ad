import postgres from "postgres";
import type { StackConfig } from "../config/stack-config.ts";
import { createLogger } from "../log/logger.ts";

/**
 * The local stand-in for "pg_cron + pg_net invoke the queue worker function" (see migration
 * 20261121000100_platform-queue-workers.sql): one cheap query per tick asks which registered
 * queues have a visible message, and each such queue's worker function is POSTed through the
 * gateway with the service_role key, exactly as the hosted cron job would call it. A message sent
 * visible at once wakes the loop through the queue table's NOTIFY (`platform_queue_work`), so an
 * async run starts as soon as it is admitted; polling runs every 200 ms after work was seen and
 * slows to once a second when idle, so anything a notification does not announce (a delayed
 * message, a retry, a parked run's due time, a notification lost while the listener reconnected)
 * is handled within about a second of becoming visible.
 */

/** The channel `platform.wake_queue_worker()` notifies, with the queue name as payload. */
const WAKE_CHANNEL = "platform_queue_work";
/** A channel quiet this long is probed; a probe not heard back within PROBE_ANSWER_MS means re-subscribe. */
const PROBE_AFTER_QUIET_MS = 30_000;
const PROBE_ANSWER_MS = 5_000;
const FAST_POLL_MS = 200;
const IDLE_POLL_MS = 1_000;
/** A failing worker (boot error, 5xx, not deployed) is retried after 1 s, doubling up to 30 s. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;
/** Longer than the functions' wall-clock limit, so the host's own 546 arrives first. */
const INVOCATION_TIMEOUT_MS = 160_000;

interface QueueWorkerRow {
  queue_name: string;
  function_name: string;
  batch_size: number;
  visibility_timeout: number;
}

const log = createLogger("queue-workers");

export interface QueueWorkers {
  stop(): Promise<void>;
}

export function startQueueWorkers(config: StackConfig): QueueWorkers {
  const sql = postgres(config.dbUrl, {
    max: 1,
    idle_timeout: 60,
    onnotice: () => {},
    connection: { application_name: "orbita-queue-workers" },
  });
  const inFlight = new Map<string, Promise<void>>();
  const failures = new Map<string, { count: number; retryAt: number }>();
  const abort = new AbortController();
  let stopped = false;
  let wake: (() => void) | null = null;
  // A wake-up that arrives while a tick is querying may announce a message that query did not see
  // (it committed just after): the next sleep then ends at once instead of the wake-up being lost.
  let wokenDuringTick = false;
  let subscription: { unlisten(): Promise<void> } | null = null;
  let lastHeardAt = Date.now();
  let probeSentAt: number | null = null;
  let lastPollError = "";

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (wokenDuringTick) {
        wokenDuringTick = false;
        resolve();
        return;
      }
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });

  async function invoke(worker: QueueWorkerRow): Promise<void> {
    const url = `${config.apiUrl}/functions/v1/${encodeURIComponent(worker.function_name)}`;
    let problem: string | null = null;
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${config.serviceRoleKey}`,
          apikey: config.serviceRoleKey,
          "content-type": "application/json",
        },
        body: JSON.stringify({
          queue_name: worker.queue_name,
          batch_size: worker.batch_size,
          visibility_timeout: worker.visibility_timeout,
        }),
        signal: AbortSignal.any([abort.signal, AbortSignal.timeout(INVOCATION_TIMEOUT_MS)]),
      });
      const text = await response.text();
      if (!response.ok) problem = `HTTP ${response.status}: ${text.slice(0, 300)}`;
    } catch (error) {
      if (stopped) return;
      problem = error instanceof Error ? error.message : String(error);
    }
    if (problem === null) {
      failures.delete(worker.queue_name);
      return;
    }
    const count = (failures.get(worker.queue_name)?.count ?? 0) + 1;
    const delay = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** (count - 1));
    failures.set(worker.queue_name, { count, retryAt: Date.now() + delay });
    log.warn("queue worker invocation failed", { queue: worker.queue_name, function: worker.function_name, error: problem, retryInMs: delay });
  }

  /** Ends the loop's sleep now, or the next one at once when a tick is running. */
  function nudge(): void {
    if (wake) wake();
    else wokenDuringTick = true;
  }

  function onWake(): void {
    lastHeardAt = Date.now();
    nudge();
  }

  /**
   * Keeps the LISTEN alive. postgres.js re-subscribes after a lost connection, but gives up
   * silently when the database is still down then; so a quiet channel is probed now and then with
   * a notification of our own, and one that does not come back is subscribed again.
   */
  async function keepListening(): Promise<void> {
    const now = Date.now();
    if (subscription && probeSentAt !== null && lastHeardAt < probeSentAt && now - probeSentAt > PROBE_ANSWER_MS) {
      const stale = subscription;
      subscription = null;
      await stale.unlisten().catch(() => {});
    }
    if (!subscription) {
      subscription = await sql.listen(WAKE_CHANNEL, onWake);
      lastHeardAt = now;
      probeSentAt = null;
      return;
    }
    if (now - lastHeardAt > PROBE_AFTER_QUIET_MS && (probeSentAt === null || probeSentAt < lastHeardAt)) {
      probeSentAt = now;
      await sql`select pg_notify(${WAKE_CHANNEL}, '')`;
    }
  }

  async function tick(): Promise<boolean> {
    await keepListening();
    const rows = await sql<QueueWorkerRow[]>`
      select queue_name, function_name, batch_size, visibility_timeout
      from platform.queue_workers_with_work()
    `;
    let started = false;
    for (const worker of rows) {
      if (inFlight.has(worker.queue_name)) continue;
      const failure = failures.get(worker.queue_name);
      if (failure && failure.retryAt > Date.now()) continue;
      started = true;
      const run = invoke(worker).finally(() => {
        inFlight.delete(worker.queue_name);
        // Whatever is left in the queue is looked at right away.
        nudge();
      });
      inFlight.set(worker.queue_name, run);
    }
    return started || rows.length > 0;
  }

  const loop = (async () => {
    let interval = FAST_POLL_MS;
    while (!stopped) {
      try {
        const busy = await tick();
        lastPollError = "";
        interval = busy ? FAST_POLL_MS : Math.min(IDLE_POLL_MS, Math.round(interval * 1.5));
      } catch (error) {
        // Typically the database restarting, or a database without the registry migration.
        const message = error instanceof Error ? error.message : String(error);
        if (message !== lastPollError && !stopped) log.error("polling the queue registry failed", { error: message });
        lastPollError = message;
        interval = IDLE_POLL_MS;
      }
      if (!stopped) await sleep(interval);
    }
  })();

  return {
    async stop() {
      stopped = true;
      abort.abort();
      wake?.();
      await loop;
      await Promise.allSettled(inFlight.values());
      await sql.end({ timeout: 5 });
    },
  };
}
