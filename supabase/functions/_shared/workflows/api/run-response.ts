/**
 * How a run's result becomes an HTTP answer (decisions, "Execute responses"): 200 with the output
 * on success; a failed run 500 (`EXECUTION_FAILED`, naming the failed block), a timed-out one 408,
 * and a run that failed on its own input 400. Request errors (request-error.ts) use `{error, code}`.
 */
import type { ExecutionResult } from "../engine/context.ts";
import type { WorkflowErrorCode } from "../engine/errors.ts";

function statusOf(result: ExecutionResult): number {
  if (result.success) return 200;
  if (result.status === "timeout") return 408;
  const inputCodes: WorkflowErrorCode[] = ["INVALID_INPUT"];
  return result.error && inputCodes.includes(result.error.code) ? 400 : 500;
}

/**
 * The JSON answer for a run. `includeTrace` adds the trace spans and the execution context (the
 * editor shows them after a manual run).
 */
export function runResponse(result: ExecutionResult, options: { includeTrace: boolean }): Response {
  const metadata = { duration: result.metadata.durationMs, startTime: result.metadata.startTime, endTime: result.metadata.endTime, trigger: result.metadata.trigger };
  const trace = options.includeTrace ? { traceSpans: result.traceSpans, context: result.context } : {};
  if (result.success) {
    return Response.json({ success: true, executionId: result.executionId, output: result.output, response: result.response, metadata, ...trace }, { status: 200 });
  }
  const error = result.error;
  const status = statusOf(result);
  const code = status === 408 ? "EXECUTION_TIMEOUT" : status === 400 ? "INVALID_INPUT" : "EXECUTION_FAILED";
  return Response.json(
    { success: false, executionId: result.executionId, error: error?.message ?? "the run failed", code, errorCode: error?.code ?? null, failedBlock: error?.block ?? null, metadata, ...trace },
    { status },
  );
}
