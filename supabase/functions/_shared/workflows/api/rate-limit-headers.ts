/**
 * The rate-limit headers of the workflow service's answers (decisions, "Rate limits"):
 * `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (ISO time the bucket is full
 * again) on every answer that was admitted or limited, and `Retry-After` (seconds) on a 429.
 */
import type { RateLimitState } from "../runs/lifecycle-answers.ts";

/** The headers for a bucket's state (none when the run had no bucket: manual and schedule runs). */
export function rateLimitHeaders(rateLimit: RateLimitState | null | undefined, retryAfter?: number): Record<string, string> {
  const headers: Record<string, string> = {};
  if (rateLimit) {
    headers["X-RateLimit-Limit"] = String(rateLimit.limit);
    headers["X-RateLimit-Remaining"] = String(rateLimit.remaining);
    headers["X-RateLimit-Reset"] = new Date(rateLimit.resetAt).toISOString();
  }
  if (retryAfter !== undefined) headers["Retry-After"] = String(Math.max(1, Math.ceil(retryAfter)));
  return headers;
}
