/**
 * Cancelling runs over HTTP, mounted with the rest of the runs API (runs-endpoints.ts):
 *
 *   POST /api/v2/runs/{runId}/cancel                          one run; optional body {reason}
 *   POST /api/v2/workflows/{workflowId}/runs/{runId}/cancel   the same, if the run is that workflow's (Sim's path)
 *   POST /api/v2/runs/cancel                                  the runs in flight matching the list's filters, oldest first, 1,000 a call at most
 *
 * Same door as the reads (keyed-read.ts): an `x-api-key`, one token of the logs bucket, the answer
 * or refusal of one SQL function (workflow_run_cancel, workflow_runs_cancel), which records who
 * (the key) and why (the reason) and signals a running run's instance at once (cancel-signals.ts).
 * An editor's personal key or a workspace key may cancel; a viewer's is 403.
 */
import type { Context } from "hono";
import { readBodyBytes, readJson, validate } from "../../http/body.ts";
import { workflowErrors as errors } from "../workflow-errors.ts";
import type { ServiceCall } from "../../db/service-calls.ts";
import { answerKeyedRead, apiKeyOf } from "./keyed-read.ts";
import { pathId } from "./read-endpoints.ts";
import { bulkCancelArguments, bulkCancelBody, CANCEL_BODY_BYTES, cancelBody } from "./runs-cancel-schemas.ts";

/** The JSON body, or `{}` when none was sent (a body is optional for one run's cancel). */
async function optionalJson(request: Request): Promise<unknown> {
  const bytes = await readBodyBytes(request, { errors, maxBytes: CANCEL_BODY_BYTES });
  if (bytes.byteLength === 0) return {};
  return await readJson(new Request(request.url, { method: "POST", headers: request.headers, body: Uint8Array.from(bytes) }), { errors, maxBytes: CANCEL_BODY_BYTES });
}

/** POST /runs/{runId}/cancel, and /workflows/{workflowId}/runs/{runId}/cancel for that workflow's run only. */
export async function cancelRun(c: Context, rpc: ServiceCall): Promise<Response> {
  const apiKey = apiKeyOf(c.req.raw);
  const workflowId = c.req.param("workflowId") === undefined ? null : pathId(c, "workflowId", "Workflow");
  const runId = pathId(c, "runId", "Run");
  const body = validate(cancelBody, await optionalJson(c.req.raw), "body", errors);
  return await answerKeyedRead(rpc, "workflow_run_cancel", { p_api_key: apiKey, p_run_id: runId, p_workflow_id: workflowId, p_reason: body.reason ?? null });
}

/** POST /runs/cancel. */
export async function cancelRuns(c: Context, rpc: ServiceCall): Promise<Response> {
  const apiKey = apiKeyOf(c.req.raw);
  const body = validate(bulkCancelBody, await readJson(c.req.raw, { errors, maxBytes: CANCEL_BODY_BYTES }), "body", errors);
  return await answerKeyedRead(rpc, "workflow_runs_cancel", bulkCancelArguments(apiKey, body));
}
