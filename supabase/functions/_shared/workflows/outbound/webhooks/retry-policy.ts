/**
 * When a webhook delivery is tried again (decisions item 6): one first attempt and up to five
 * retries, after 5 s, 15 s, 1 min, 3 min and 10 min, each plus up to 10% jitter, so receivers that
 * fail together are not retried in lockstep. Retried: 5xx and 429 answers, timeouts and connection
 * failures (the receiver may be back later). Final: any other answer (a 4xx says the receiver will
 * not take it; a 3xx is not followed), and an address the outbound guard refuses.
 */

/** The delays after the 1st to 5th failed attempt of a round (the first send or a redelivery). */
export const RETRY_DELAYS_MS = [5_000, 15_000, 60_000, 180_000, 600_000] as const;

/** Jitter added to each delay: up to this fraction of it. */
export const MAX_JITTER = 0.1;

/** How an attempt ended, as far as the retry policy cares. */
export type AttemptAnswer =
  | { kind: "status"; status: number }
  /** No complete answer: timed out, or the connection failed or broke. */
  | { kind: "unreachable" }
  /** Not sent: the URL is refused (a non-public address, not http(s), credentials in it). */
  | { kind: "refused" };

/** What an attempt leads to. */
export type AttemptVerdict = "delivered" | "retryable" | "final";

/** The verdict on an attempt's answer. */
export function judgeAttempt(answer: AttemptAnswer): AttemptVerdict {
  if (answer.kind === "unreachable") return "retryable";
  if (answer.kind === "refused") return "final";
  if (answer.status >= 200 && answer.status < 300) return "delivered";
  return answer.status >= 500 || answer.status === 429 ? "retryable" : "final";
}

/** How delays are drawn: the jitter's randomness, and a factor that shortens the whole schedule for tests. */
export interface RetryTiming {
  /** A number in [0, 1), as Math.random returns. */
  random?: () => number;
  /** Multiplies every delay (1 in production). */
  scale?: number;
}

/**
 * The wait before the next attempt after attempt `roundAttempt` (1 for the first send) of a round
 * failed retryably, in milliseconds: the schedule's delay plus up to 10%; null once the five
 * retries are used and the delivery has failed.
 */
export function retryDelayMs(roundAttempt: number, { random = Math.random, scale = 1 }: RetryTiming = {}): number | null {
  const delay = RETRY_DELAYS_MS[roundAttempt - 1];
  if (delay === undefined) return null;
  return Math.round(delay * scale * (1 + MAX_JITTER * random()));
}
