/**
 * One delivery attempt: wait until it is due, build and sign the body once, POST those exact bytes
 * through the outbound guard (public addresses only, pinned connection, redirects not followed,
 * the attempt's time limit over the whole exchange), and judge the answer with the retry policy.
 * The answer's body is not read: only its status counts.
 */
import { guardedFetch, OutboundError } from "../guard.ts";
import { type ClaimedDelivery, eventBody, eventHeaders } from "./event.ts";
import { type AttemptAnswer, judgeAttempt, retryDelayMs, type RetryTiming } from "./retry-policy.ts";

/** An attempt as record_webhook_attempts takes it. */
export interface AttemptRecord {
  deliveryId: string;
  attempt: number;
  /** When the request was sent (ISO), its service-timestamp. */
  startedAt: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  outcome: "delivered" | "retry" | "failed";
  /** The wait before the next attempt, for a retry. */
  retryInMs: number | null;
}

/** How an attempt is sent: guardedFetch, or a stand-in with its shape in tests. */
export type OutboundSend = (url: string, init: RequestInit & { timeoutMs: number; maxResponseBytes: number }) => Promise<Response>;

/** What an attempt depends on. */
export interface AttemptOptions {
  /** The attempt's time limit, answer included (30 s; shorter in the test stack). */
  timeoutMs: number;
  timing?: RetryTiming;
  send?: OutboundSend;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** An early message waits at most this long for its attempt to be due (pgmq delays are whole seconds). */
const MAX_EARLY_WAIT_MS = 2_000;

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The answer of a guarded call that failed: refused before sending, or no usable answer. */
function failedCall(thrown: unknown): { answer: AttemptAnswer; error: string } {
  if (thrown instanceof OutboundError) {
    const refused = thrown.code === "OUTBOUND_BLOCKED" || thrown.code === "OUTBOUND_INVALID_URL";
    return { answer: { kind: refused ? "refused" : "unreachable" }, error: `${thrown.code}: ${thrown.message}` };
  }
  // Anything else is on our side of the wire; trying again is safer than giving up on the delivery.
  return { answer: { kind: "unreachable" }, error: `The attempt failed: ${thrown instanceof Error ? thrown.message : String(thrown)}` };
}

/** Makes one attempt of `delivery` and says what it led to. */
export async function attemptDelivery(delivery: ClaimedDelivery, options: AttemptOptions): Promise<AttemptRecord> {
  const { timeoutMs, timing, send = guardedFetch, now = Date.now, sleep = wait } = options;
  const early = Date.parse(delivery.dueAt) - now();
  if (early > 0) await sleep(Math.min(early, MAX_EARLY_WAIT_MS));

  const timestamp = now();
  const body = eventBody(delivery, timestamp);
  const headers = await eventHeaders(delivery, timestamp, body);
  let answer: AttemptAnswer;
  let error: string | null = null;
  let statusCode: number | null = null;
  try {
    // Redirects are answers, not followed: a receiver that moved says so with a 3xx, which is final.
    const response = await send(delivery.url, { method: "POST", headers, body, redirect: "manual", timeoutMs, maxResponseBytes: Number.MAX_SAFE_INTEGER });
    statusCode = response.status;
    await response.body?.cancel().catch(() => {});
    answer = { kind: "status", status: response.status };
    if (response.status < 200 || response.status >= 300) error = `The receiver answered HTTP ${response.status}`;
  } catch (thrown) {
    ({ answer, error } = failedCall(thrown));
  }
  const durationMs = Math.max(0, now() - timestamp);

  const verdict = judgeAttempt(answer);
  let retryInMs: number | null = null;
  if (verdict === "retryable") {
    retryInMs = retryDelayMs(delivery.roundAttempt, timing);
    if (retryInMs === null) error = `${error}; every retry is used`;
  }
  return {
    deliveryId: delivery.deliveryId,
    attempt: delivery.attempt,
    startedAt: new Date(timestamp).toISOString(),
    durationMs,
    statusCode,
    error,
    outcome: verdict === "delivered" ? "delivered" : retryInMs === null ? "failed" : "retry",
    retryInMs,
  };
}
