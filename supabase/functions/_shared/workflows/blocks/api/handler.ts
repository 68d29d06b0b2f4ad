/**
 * API block: one HTTP request through the outbound guard, retried on timeouts, connection failures,
 * 408, 429 and 5xx answers (outbound/retry.ts), every attempt listed in `attempts`. A 2xx or 3xx
 * answer is the output `{data, status, headers, error: null, attempts}`; a request that finally
 * fails fails the block with `data`, `status` (null when no answer came), `headers` and `attempts`
 * kept beside `{error, code}`, which its `error` edge (when it has one) can read.
 */
import type { BlockOutput } from "../../core/context.ts";
import { WorkflowError } from "../../core/errors.ts";
import { OutboundError } from "../../outbound/errors.ts";
import { DEFAULT_RETRY_POLICY, isRetryableError, isRetryableStatus, retryAfterMs, runWithRetries, type AttemptOutcome } from "../../outbound/retry.ts";
import { DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_OUTBOUND_TIMEOUT_MS } from "../../outbound/guard.ts";
import type { BlockHandler } from "../../core/block-handler.ts";
import { MAX_API_BLOCK_TIMEOUT_MS, type ApiInput } from "./config.ts";
import { apiSecrets, buildApiRequest } from "./request.ts";
import { tracedFetch } from "../../outbound/traced-fetch.ts";

/** What an answer becomes in the output. */
interface Answer {
  data: unknown;
  status: number;
  headers: Record<string, string>;
}

/** The body as data: parsed JSON when the server says it is JSON (and it parses), else text; null when empty. */
async function readAnswer(response: Response): Promise<Answer> {
  const text = await response.text();
  let data: unknown = text === "" ? null : text;
  if (text !== "" && /[/+]json\b/i.test(response.headers.get("content-type") ?? "")) {
    try {
      data = JSON.parse(text);
    } catch {
      // Not JSON after all: the text is kept.
    }
  }
  return { data, status: response.status, headers: Object.fromEntries(response.headers) };
}

function policyOf(input: ApiInput) {
  return {
    retries: input.retries ?? DEFAULT_RETRY_POLICY.retries,
    baseDelayMs: input.retryDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
    maxDelayMs: input.retryMaxDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
  };
}

/** Handler of `api` blocks. */
export const apiHandler: BlockHandler<ApiInput> = {
  // Every attempt at its full time limit, and the longest wait between each.
  timeoutMs: (input) => {
    const policy = policyOf(input);
    return Math.min(MAX_API_BLOCK_TIMEOUT_MS, (policy.retries + 1) * (input.requestTimeoutMs ?? DEFAULT_OUTBOUND_TIMEOUT_MS) + policy.retries * policy.maxDelayMs);
  },
  // Every attempt's time limit ends at the block's deadline and no retry waits past it, so the
  // block ends there with its own OUTBOUND_TIMEOUT answer; a second timer for the same instant
  // raced it on a busy machine and could fail the block with BLOCK_TIMEOUT instead.
  stopsAtDeadline: true,
  secretsOf: apiSecrets,
  async execute(run): Promise<BlockOutput> {
    const input = run.input;
    const request = buildApiRequest(input);
    // The workflow's own traceparent header, when it sets one, is the one sent.
    const fetch = tracedFetch(run.services.outbound.fetch, run.traceHeaders());
    const { last, attempts } = await runWithRetries(policyOf(input), { deadline: run.deadline, signal: run.signal, sleep: (ms, signal) => run.services.clock.sleep(ms, signal) }, async (): Promise<AttemptOutcome<Answer>> => {
      try {
        const response = await fetch(request.url, {
          method: request.method,
          headers: request.headers,
          body: request.body,
          signal: run.signal,
          timeoutMs: Math.max(1, Math.min(input.requestTimeoutMs ?? DEFAULT_OUTBOUND_TIMEOUT_MS, run.deadline - Date.now())),
          maxResponseBytes: input.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
          redirect: input.followRedirects === false ? "manual" : "follow",
        });
        const answer = await readAnswer(response);
        if (answer.status < 400) return { ok: true, value: answer, status: answer.status };
        return {
          ok: false,
          error: new Error(`${answer.status}${response.statusText ? ` ${response.statusText}` : ""}`),
          retryable: isRetryableStatus(answer.status),
          status: answer.status,
          retryAfterMs: retryAfterMs(response.headers.get("retry-after")),
          value: answer,
        };
      } catch (error) {
        // The block's own timeout or the run's end: the engine reports it.
        if (run.signal.aborted) throw run.signal.reason;
        if (error instanceof OutboundError) return { ok: false, error, retryable: isRetryableError(error) };
        throw error;
      }
    });
    if (last.ok) return { ...last.value, error: null, attempts };
    const tries = attempts.length === 1 ? "" : ` after ${attempts.length} attempts`;
    const what = `${request.method} ${request.url}`;
    const output = { data: last.value?.data ?? null, status: last.status ?? null, headers: last.value?.headers ?? {}, attempts };
    if (last.status !== undefined) throw new WorkflowError("HTTP_ERROR", `${what} answered ${last.error.message}${tries}`, { output });
    const code = last.error instanceof OutboundError ? last.error.code : "BLOCK_FAILED";
    throw new WorkflowError(code, `${what} failed${tries}: ${last.error.message}`, { output });
  },
};
