/**
 * A call to a service the workflow uses (a vector store, a model provider): sent through the
 * guarded fetch, retried on timeouts, connection failures, 408, 429 and 5xx (honouring
 * `Retry-After`), and failing the block with a readable message: the service's own error text for an
 * answer it refused (`PROVIDER_ERROR`), the guard's code otherwise. `accept` reads a successful
 * answer; a failure in it (a malformed answer) is final.
 */
import { WorkflowError, type WorkflowErrorCode } from "../core/errors.ts";
import { OutboundError } from "./errors.ts";
import { DEFAULT_MAX_RESPONSE_BYTES } from "./guard.ts";
import { isRetryableError, isRetryableStatus, retryAfterMs, runWithRetries, type AttemptOutcome, type AttemptRecord, type RetryPolicy } from "./retry.ts";
import type { OutboundFetch } from "./services.ts";

/** Retries of service calls: 2 after the first, from 500 ms. */
export const SERVICE_RETRY_POLICY: RetryPolicy = { retries: 2, baseDelayMs: 500, maxDelayMs: 10_000 };

/** One call: what to send, and how long it may take. */
export interface ServiceCall {
  /** The service's name in messages ("Qdrant", "OpenAI"). */
  service: string;
  url: string;
  method: "GET" | "POST" | "PUT";
  headers: Record<string, string>;
  body?: unknown;
  fetch: OutboundFetch;
  signal: AbortSignal;
  /** Epoch ms by which the call (retries included) must be done. */
  deadline: number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** Per attempt; the time left before the deadline when shorter. */
  timeoutMs: number;
  maxResponseBytes?: number;
  policy?: RetryPolicy;
  /** The service's own explanation in an error body, when it has one. */
  errorText(body: unknown): string | null;
}

/** The value `accept` made of the answer, and every attempt. */
export interface ServiceResult<T> {
  value: T;
  attempts: AttemptRecord[];
}

async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Sends the call (retrying as described) and hands a successful answer to `accept`. */
export async function callService<T>(call: ServiceCall, accept: (response: Response) => Promise<T>): Promise<ServiceResult<T>> {
  const { last, attempts } = await runWithRetries(call.policy ?? SERVICE_RETRY_POLICY, call, async (): Promise<AttemptOutcome<T>> => {
    let response: Response;
    try {
      response = await call.fetch(call.url, {
        method: call.method,
        headers: { "content-type": "application/json", accept: "application/json", ...call.headers },
        body: call.body === undefined ? undefined : JSON.stringify(call.body),
        signal: call.signal,
        timeoutMs: Math.max(1, Math.min(call.timeoutMs, call.deadline - Date.now())),
        maxResponseBytes: call.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      });
      if (!response.ok) {
        const body = await bodyOf(response);
        const explanation = call.errorText(body) ?? (typeof body === "string" && body ? body.slice(0, 300) : response.statusText);
        return { ok: false, error: new Error(`${call.service} answered ${response.status}${explanation ? `: ${explanation}` : ""}`), retryable: isRetryableStatus(response.status), status: response.status, retryAfterMs: retryAfterMs(response.headers.get("retry-after")) };
      }
      return { ok: true, value: await accept(response), status: response.status };
    } catch (error) {
      if (call.signal.aborted) throw call.signal.reason;
      if (error instanceof OutboundError) return { ok: false, error, retryable: isRetryableError(error) };
      throw error;
    }
  });
  if (last.ok) return { value: last.value, attempts };
  const tries = attempts.length > 1 ? ` (after ${attempts.length} attempts)` : "";
  const code: WorkflowErrorCode = last.status !== undefined ? "PROVIDER_ERROR" : last.error instanceof OutboundError ? last.error.code : "PROVIDER_ERROR";
  const message = last.status !== undefined ? `${last.error.message}${tries}` : `${call.service} could not be reached${tries}: ${last.error.message}`;
  throw new WorkflowError(code, message, { output: { attempts } });
}

/** A malformed answer: final, with what was wrong. */
export function malformed(service: string, what: string): WorkflowError {
  return new WorkflowError("PROVIDER_ERROR", `${service} sent a malformed answer: ${what}`);
}
