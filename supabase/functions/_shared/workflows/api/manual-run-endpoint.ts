/**
 * `POST /api/workflows/{id}/run` (and `/functions/v1/workflow-run/{id}`): the editor runs the
 * workflow's draft as the signed-in user, who must be an editor (or above) of its workspace.
 * Admitted by admit_workflow_run with the user the session's verified token names (trigger
 * `manual`: no rate limit, usage charged and limited, the draft stored as the run's snapshot),
 * executed with the workspace's environment, and recorded by finish_workflow_run, like every run.
 * The answer shows the Response block's settings instead of applying them, and the trace.
 */
import type { Context } from "hono";
import { hasNoBody, readJson, readParams, validate } from "../../http/body.ts";
import { resolveCaller } from "../../http/caller.ts";
import { HttpError } from "../../http/errors.ts";
import { requestLogger } from "../../http/logger.ts";
import { isUuid } from "../../http/uuid.ts";
import { workflowErrors as errors, workflowLog } from "../workflow-errors.ts";
import type { TriggerRequest } from "../core/context.ts";
import { WorkflowError } from "../core/errors.ts";
import { runWorkflow } from "../runs/run-workflow.ts";
import { MAX_REQUEST_BODY_BYTES } from "../core/limits.ts";
import { ValidationError } from "../state/issues.ts";
import type { AdmitAnswer, StoredResponse } from "../runs/lifecycle-answers.ts";
import { endingOf, finishRun, prepareRun, recordUnexpectedEnd, refusedEnding, type PreparedRun } from "../runs/run-lifecycle.ts";
import { watchCancellation } from "../runs/run-lease.ts";
import { refusalError } from "./refusals.ts";
import { manualAnswer, toHttpResponse } from "./run-response.ts";
import type { RunServices } from "./run-services.ts";
import { MAX_KEPT_INPUT_BYTES, manualRunBodySchema } from "./schemas.ts";

/** A manual run's refusal after admission, recorded with the run. */
async function refuse(services: RunServices, executionId: string, status: number, code: string, message: string, extra: Record<string, unknown> = {}): Promise<Response> {
  const answer: StoredResponse = { status, headers: {}, body: { error: message, code, executionId, ...extra } };
  await finishRun(services.call, executionId, refusedEnding(code, message, answer));
  return toHttpResponse(answer, { "X-Execution-Id": executionId });
}

/** Serves one manual run (see the module comment). */
export async function handleManualRun(c: Context, services: RunServices): Promise<Response> {
  const request = c.req.raw;
  const caller = await resolveCaller(request, { errors });
  if (caller.kind !== "user") throw new HttpError(401, "UNAUTHORIZED", "Sign in to run workflows (Authorization: Bearer <access token>)");
  if (!caller.verified) throw new HttpError(401, "UNAUTHORIZED", "The access token was not signed by this project's keys");
  const { id } = readParams(c.req.param() as Record<string, string>, errors);
  if (!isUuid(id)) throw new HttpError(404, "NOT_FOUND", `Workflow ${id} not found`);
  const empty = hasNoBody(request);
  const body = validate(manualRunBodySchema, empty ? {} : await readJson(request, { errors, maxBytes: MAX_REQUEST_BODY_BYTES, contentType: null }), "body", errors);

  const hints = services.cache.admitHints(id);
  const answer = (await services.call("admit_workflow_run", {
    p_workflow_id: id, p_trigger: "manual", p_mode: "sync", p_user_id: caller.userId,
    // Kept like an API run's, so the run's record (and a re-run) shows what the editor typed.
    p_input: body.input !== undefined && new TextEncoder().encode(JSON.stringify(body.input)).length <= MAX_KEPT_INPUT_BYTES ? body.input : null,
    p_environment_version: hints.p_environment_version ?? null,
    p_lease_seconds: Math.ceil((body.timeoutMs ?? services.syncTimeoutMs) / 1000) + 60,
  })) as AdmitAnswer;
  if (answer.outcome === "refused") throw refusalError(answer);
  if (answer.outcome !== "admitted" || answer.status !== 200) throw new Error(`admit answered a manual run with ${answer.outcome} ${answer.status}`);

  const watched = watchCancellation(services.cancelSignals, answer.executionId);
  try {
    let prepared: PreparedRun;
    try {
      prepared = await prepareRun(services.call, services.cache, answer, hints.workspaceId);
    } catch (error) {
      if (error instanceof ValidationError) return await refuse(services, answer.executionId, 400, "INVALID_WORKFLOW", error.message, { issues: error.issues });
      throw error;
    }
    const trigger: TriggerRequest = { kind: "manual", ...(body.triggerBlockId ? { blockId: body.triggerBlockId } : {}), ...(body.input !== undefined ? { input: body.input } : {}) };
    const files = services.files({ workspaceId: answer.workflow.workspaceId, workflowId: id, executionId: answer.executionId });
    let result;
    try {
      result = await runWorkflow({
        workflow: prepared.compiled, trigger, env: prepared.env, executionId: answer.executionId, account: answer.workflow.billingAccountId, trace: answer.trace, signal: AbortSignal.any([request.signal, watched.signal]),
        timeoutMs: Math.min(body.timeoutMs ?? services.syncTimeoutMs, services.syncTimeoutMs), services: { files },
      });
    } catch (error) {
      // An unknown or ambiguous trigger is refused before the run starts.
      if (error instanceof WorkflowError && error.code === "INVALID_INPUT") return await refuse(services, answer.executionId, 400, "INVALID_INPUT", error.message);
      throw error;
    }
    const response = manualAnswer(result);
    await finishRun(services.call, answer.executionId, { ...endingOf(result, files.files), response: { status: response.status, headers: {}, body: null } });
    return toHttpResponse(response, { "X-Execution-Id": answer.executionId });
  } catch (error) {
    requestLogger(workflowLog, request).error("run_failed_unexpectedly", { executionId: answer.executionId, error });
    await recordUnexpectedEnd(services.call, answer.executionId, error);
    throw error;
  } finally {
    watched.release();
  }
}
