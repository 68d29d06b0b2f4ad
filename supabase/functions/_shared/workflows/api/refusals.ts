/**
 * The SQL lifecycle's refusals as the toolkit's HttpError, rendered `{error, code}` by the workflow
 * service's errors, with what clients need beside them: `retryAfter` and `Retry-After` on a 429,
 * the usage on a 402, the execution on a 409, the concurrency limit (and flow-control key) a
 * concurrency 429 hit, and the rate-limit headers whenever the bucket is known.
 */
import { HttpError } from "../../http/errors.ts";
import type { Refusal } from "../runs/lifecycle-answers.ts";
import { rateLimitHeaders } from "./rate-limit-headers.ts";

/** A refusal as an HttpError. */
export function refusalError(refusal: Refusal): HttpError {
  const details: Record<string, unknown> = {};
  if (refusal.retryAfter !== undefined) details.retryAfter = refusal.retryAfter;
  if (refusal.status === 402 && refusal.usage) details.usage = refusal.usage;
  if (refusal.executionId !== undefined) details.executionId = refusal.executionId;
  Object.assign(details, expiryDetails(refusal));
  if (refusal.concurrency) details.concurrency = refusal.concurrency;
  const headers = rateLimitHeaders(refusal.rateLimit, refusal.status === 429 ? refusal.retryAfter ?? 1 : undefined);
  return new HttpError(refusal.status, refusal.code, refusal.error, details, headers);
}

/**
 * `expiredAt` and `retentionDays` of a 410 RUN_EXPIRED, the fields clients need to tell a run that
 * retention removed from one that never existed (docs/retention.md); empty for any other refusal.
 */
export function expiryDetails(refusal: Pick<Refusal, "expiredAt" | "retentionDays">): { expiredAt?: string; retentionDays?: number } {
  return refusal.expiredAt === undefined ? {} : { expiredAt: refusal.expiredAt, retentionDays: refusal.retentionDays };
}
