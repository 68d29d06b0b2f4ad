/**
 * Retrying outbound calls: which failures are worth another attempt (a timeout, a connection that
 * failed or was reset, 408, 429 and 5xx answers), how long to wait before it (the server's
 * `Retry-After` when it sends one, else exponential backoff with jitter), and a record of every
 * attempt for the trace span. Nothing waits past the caller's deadline: a retry that could not
 * start in time is not made.
 */
import { OutboundError, TRANSIENT_OUTBOUND_CODES } from "./errors.ts";

/** How a block retries. */
export interface RetryPolicy {
  /** Attempts after the first (0: none). */
  retries: number;
  /** The first backoff; each later one doubles, up to `maxDelayMs`. */
  baseDelayMs: number;
  /** The longest wait between attempts; a `Retry-After` asking for more ends the retries. */
  maxDelayMs: number;
}

/** The defaults the spec leaves open: 3 retries (4 attempts), 500 ms doubling to at most 10 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { retries: 3, baseDelayMs: 500, maxDelayMs: 10_000 };

/** The most retries a block may ask for. */
export const MAX_RETRIES = 10;

/** One attempt, as the trace span shows it. */
export interface AttemptRecord {
  attempt: number;
  startedAt: string;
  durationMs: number;
  /** The HTTP status, when an answer came. */
  status?: number;
  /** Why it failed, when it did. */
  error?: string;
  code?: string;
  /** The wait before the next attempt, when one followed. */
  retryInMs?: number;
  /** Why no further attempt was made although this one may have been worth retrying. */
  gaveUp?: string;
}

/** One attempt's outcome, as the caller judges it. */
export type AttemptOutcome<T> =
  | { ok: true; value: T; status?: number }
  | { ok: false; error: Error & { code?: string }; retryable: boolean; status?: number; retryAfterMs?: number | null; value?: T };

/** What runWithRetries needs of the run. */
export interface RetryContext {
  /** Epoch ms by which everything must be done. */
  deadline: number;
  signal: AbortSignal;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** [0, 1); Math.random by default. */
  random?: () => number;
}

/** True for statuses that say "try again later": 408, 429 and every 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}

/** True for outbound failures that may pass on another attempt (timeouts, connection failures). */
export function isRetryableError(error: unknown): boolean {
  return error instanceof OutboundError && TRANSIENT_OUTBOUND_CODES.has(error.code);
}

/** `Retry-After` in ms: delta seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/**
 * The backoff before retry number `retry` (1 for the first): base × 2^(retry−1), capped, with
 * "equal jitter" (half fixed, half random), so retries of many runs spread out but never come
 * sooner than half the nominal wait.
 */
export function backoffMs(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const nominal = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(nominal / 2 + random() * (nominal / 2));
}

/**
 * Calls `once` until it succeeds, fails for good, or the retries are spent; resolves with the last
 * outcome and every attempt. Waits use `sleep`, so an aborted run stops waiting at once.
 */
export async function runWithRetries<T>(policy: RetryPolicy, context: RetryContext, once: (attempt: number) => Promise<AttemptOutcome<T>>): Promise<{ last: AttemptOutcome<T>; attempts: AttemptRecord[] }> {
  const attempts: AttemptRecord[] = [];
  for (let attempt = 1; ; attempt++) {
    const started = Date.now();
    const outcome = await once(attempt);
    const record: AttemptRecord = { attempt, startedAt: new Date(started).toISOString(), durationMs: Date.now() - started };
    if (outcome.status !== undefined) record.status = outcome.status;
    if (!outcome.ok) {
      record.error = outcome.error.message;
      if (outcome.error.code) record.code = outcome.error.code;
    }
    attempts.push(record);
    if (outcome.ok || !outcome.retryable) return { last: outcome, attempts };
    if (attempt > policy.retries) {
      if (policy.retries > 0) record.gaveUp = `no retries left (${policy.retries} allowed)`;
      return { last: outcome, attempts };
    }
    const asked = outcome.retryAfterMs ?? null;
    if (asked !== null && asked > policy.maxDelayMs) {
      record.gaveUp = `the server asked to wait ${asked} ms, longer than the ${policy.maxDelayMs} ms allowed`;
      return { last: outcome, attempts };
    }
    const wait = asked ?? backoffMs(policy, attempt, context.random);
    if (Date.now() + wait >= context.deadline) {
      record.gaveUp = `waiting ${wait} ms for another attempt would pass the block's deadline`;
      return { last: outcome, attempts };
    }
    record.retryInMs = wait;
    await context.sleep(wait, context.signal);
  }
}
