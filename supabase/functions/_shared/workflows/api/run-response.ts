/**
 * How a run's result becomes an HTTP answer (decisions, "Execute responses"): 200 with the output
 * on success, or what a Response block set (its status, headers and body, applied); a failed run
 * 500 (`EXECUTION_FAILED`, naming the failed block); a timed-out one 408 (`EXECUTION_TIMEOUT`); a
 * run whose trigger refused its input 400. Answers are built as StoredResponse values first,
 * because that is also what the run's record keeps for Idempotency-Key replays.
 */
import type { ExecutionResult } from "../core/context.ts";
import type { StoredResponse } from "../runs/lifecycle-answers.ts";

/** The run's metadata as answers show it. */
function metadataOf(result: ExecutionResult) {
  return { duration: result.metadata.durationMs, startTime: result.metadata.startTime, endTime: result.metadata.endTime };
}

/** The status of a run that did not succeed. */
function failureStatus(result: ExecutionResult): number {
  if (result.status === "timeout") return 408;
  return result.error?.code === "INVALID_INPUT" ? 400 : 500;
}

/** The body of a run that did not succeed: `{success: false, executionId, error, code, errorCode, failedBlock, metadata}`. */
function failureBody(result: ExecutionResult, status: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const code = status === 408 ? "EXECUTION_TIMEOUT" : status === 400 ? "INVALID_INPUT" : "EXECUTION_FAILED";
  const error = result.error;
  return { success: false, executionId: result.executionId, error: error?.message ?? "the run failed", code, errorCode: error?.code ?? null, failedBlock: error?.block ?? null, metadata: metadataOf(result), ...extra };
}

/** Headers a Response block may not set: the connection's own, and what the runtime computes. */
const RESERVED_HEADERS = new Set(["connection", "content-length", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host"]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** The headers of a Response block that HTTP can carry (a name or value HTTP refuses is dropped). */
export function responseHeaders(headers: Record<string, unknown>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    if (HEADER_NAME.test(name) && !RESERVED_HEADERS.has(name.toLowerCase()) && typeof text === "string" && HEADER_VALUE.test(text)) kept[name] = text;
  }
  return kept;
}

/**
 * The execute endpoint's answer for a run. `output` replaces the run's output (the selected
 * outputs, when the request named some).
 */
export function executeAnswer(result: ExecutionResult, output: unknown = result.output): StoredResponse {
  if (result.success && result.response) {
    const { status, headers, body } = result.response;
    if (status < 200) {
      return { status: 500, headers: {}, body: { success: false, executionId: result.executionId, error: `The Response block set status ${status}, which cannot end a request`, code: "INVALID_RESPONSE", metadata: metadataOf(result) } };
    }
    return { status, headers: responseHeaders(headers ?? {}), body: body === undefined ? null : body };
  }
  if (result.success) return { status: 200, headers: {}, body: { success: true, executionId: result.executionId, output: output === undefined ? null : output, metadata: metadataOf(result) } };
  const status = failureStatus(result);
  return { status, headers: {}, body: failureBody(result, status) };
}

/**
 * The manual run's answer: the editor sees the Response block's settings rather than having them
 * applied, plus the trace spans and the execution context.
 */
export function manualAnswer(result: ExecutionResult): StoredResponse {
  const trace = { traceSpans: result.traceSpans, context: result.context };
  const metadata = { ...metadataOf(result), trigger: result.metadata.trigger };
  if (result.success) {
    return { status: 200, headers: {}, body: { success: true, executionId: result.executionId, output: result.output ?? null, response: result.response, metadata, ...trace } };
  }
  const status = failureStatus(result);
  return { status, headers: {}, body: { ...failureBody(result, status, trace), metadata } };
}

/** Statuses whose answer has no body. */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * A stored answer as a Response, with `extra` headers (rate limits, the execution id). A string
 * body sent with a non-JSON Content-Type is sent as that text; anything else as JSON.
 */
export function toHttpResponse(answer: StoredResponse, extra: Record<string, string> = {}): Response {
  const headers = new Headers(answer.headers);
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  if (NULL_BODY_STATUSES.has(answer.status)) return new Response(null, { status: answer.status, headers });
  const type = headers.get("content-type");
  if (typeof answer.body === "string" && type !== null && !/json/i.test(type)) return new Response(answer.body, { status: answer.status, headers });
  if (type === null) headers.set("content-type", "application/json");
  return new Response(JSON.stringify(answer.body ?? null), { status: answer.status, headers });
}
