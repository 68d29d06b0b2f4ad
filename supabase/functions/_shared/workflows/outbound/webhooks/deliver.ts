/**
 * One delivery attempt: wait until it is due, build and sign the body once, POST those exact bytes
 * through the outbound guard (public addresses only, pinned connection, redirects not followed,
 * the attempt's time limit over the whole exchange), and judge the answer with the retry policy.
 * Only the status counts; of an answer that is not 2xx the start of its body is kept too, so a dead
 * letter says what the receiver said.
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
  /** The start of a non-2xx answer's body (EXCERPT_CHARACTERS at most), null for 2xx or no answer. */
  responseExcerpt: string | null;
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
/** How much of a refusal's body is kept (the database keeps as much, control characters removed). */
const EXCERPT_CHARACTERS = 512;
/** Bytes read for it (a character takes up to 4 in UTF-8), and for how long, so a slow body never holds an attempt slot. */
const EXCERPT_BYTES = EXCERPT_CHARACTERS * 4;
const EXCERPT_WAIT_MS = 1_000;

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The answer of a guarded call that failed: refused before sending, or no usable answer. */
export function failedCall(thrown: unknown): { answer: AttemptAnswer; error: string } {
  if (thrown instanceof OutboundError) {
    const refused = thrown.code === "OUTBOUND_BLOCKED" || thrown.code === "OUTBOUND_INVALID_URL";
    return { answer: { kind: refused ? "refused" : "unreachable" }, error: `${thrown.code}: ${thrown.message}` };
  }
  // Anything else is on our side of the wire; trying again is safer than giving up on the delivery.
  return { answer: { kind: "unreachable" }, error: `The attempt failed: ${thrown instanceof Error ? thrown.message : String(thrown)}` };
}

/** The start of `response`'s body as text, read for at most EXCERPT_WAIT_MS; null when it is empty. */
async function excerptOf(response: Response): Promise<string | null> {
  const reader = response.body?.getReader();
  if (!reader) return null;
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, EXCERPT_WAIT_MS)));
  const read = (async () => {
    while (size < EXCERPT_BYTES) {
      const { done, value } = await reader.read();
      if (done) return;
      chunks.push(value);
      size += value.byteLength;
    }
  })();
  // A body cut off, too slow or over the time limit: what arrived is the excerpt.
  await Promise.race([read, late]).catch(() => {});
  clearTimeout(timer);
  await reader.cancel().catch(() => {});
  const bytes = new Uint8Array(Math.min(size, EXCERPT_BYTES));
  let offset = 0;
  for (const chunk of chunks) {
    if (offset >= bytes.length) break;
    const part = chunk.subarray(0, bytes.length - offset);
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  const text = new TextDecoder().decode(bytes).slice(0, EXCERPT_CHARACTERS);
  return text.length > 0 ? text : null;
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
  let responseExcerpt: string | null = null;
  let answeredAt: number | null = null;
  try {
    // Redirects are answers, not followed: a receiver that moved says so with a 3xx, which is final.
    const response = await send(delivery.url, { method: "POST", headers, body, redirect: "manual", timeoutMs, maxResponseBytes: Number.MAX_SAFE_INTEGER });
    answeredAt = now();
    statusCode = response.status;
    answer = { kind: "status", status: response.status };
    if (response.status < 200 || response.status >= 300) {
      error = `The receiver answered HTTP ${response.status}`;
      responseExcerpt = await excerptOf(response);
    } else {
      await response.body?.cancel().catch(() => {});
    }
  } catch (thrown) {
    ({ answer, error } = failedCall(thrown));
  }
  // Until the status arrived: reading a refusal's excerpt is not the receiver's time.
  const durationMs = Math.max(0, (answeredAt ?? now()) - timestamp);

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
    responseExcerpt,
    outcome: verdict === "delivered" ? "delivered" : retryInMs === null ? "failed" : "retry",
    retryInMs,
  };
}
