/**
 * `POST /api/workflows/{id}/execute`: runs the workflow's active deployment for an API key.
 *
 *   parse (413, 400) → admit (401, 404, 403, Idempotency-Key replay or 409, 402, 429) →
 *   check what needs the deployed workflow (selectedOutputs 400, typed input 400, files 413) →
 *   execute → finish → answer
 *
 * A request is answered in one of three modes: synchronously (the run's answer, or what its
 * Response block set), as Server-Sent Events (`"stream": true`, execute-stream.ts), or queued
 * (`X-Execution-Mode: async`: 202 and a job link; the workflow-worker function runs it). Refusals
 * before admission record nothing and spend nothing; once admitted, a run is always finished,
 * refused input included, so no record is left `running`. docs/workflows-api.md has the contract.
 */
import type { Context } from "hono";
import { hasNoBody, readJson, readParams, validate } from "../../http/body.ts";
import { HttpError } from "../../http/errors.ts";
import { requestLogger } from "../../http/logger.ts";
import { isUuid } from "../../http/uuid.ts";
import { workflowErrors as errors, workflowLog } from "../workflow-errors.ts";
import type { TriggerRequest } from "../core/context.ts";
import { WorkflowError } from "../core/errors.ts";
import { runWorkflow } from "../runs/run-workflow.ts";
import { FileTooLargeError } from "../core/files.ts";
import { ValidationError } from "../state/issues.ts";
import type { AdmitAnswer, AdmittedSync, Replay, StoredResponse } from "../runs/lifecycle-answers.ts";
import { holdSyncLease, SYNC_LEASE_SECONDS, WORKER_LOST } from "../runs/run-lease.ts";
import { endingOf, finishRun, prepareRun, recordUnexpectedEnd, refusedEnding, type PreparedRun } from "../runs/run-lifecycle.ts";
import { checkTriggerInput } from "../runs/trigger-input.ts";
import { collectingDurability } from "../runs/collected-outcomes.ts";
import type { Checkpoint } from "../executor/replay.ts";
import { rateLimitHeaders } from "./rate-limit-headers.ts";
import { refusalError } from "./refusals.ts";
import { executeAnswer, toHttpResponse } from "./run-response.ts";
import type { RunServices } from "./run-services.ts";
import { executeControlSchema, MAX_EXECUTE_BODY_BYTES, MAX_KEPT_INPUT_BYTES, type ExecuteControls } from "./schemas.ts";
import { resolveSelectedOutputs, selectedOutput, type SelectedOutput } from "./selected-outputs.ts";
import { streamRun } from "./execute-stream.ts";
import { handOverPausedRun } from "./paused-answer.ts";
import { approvalDeskOf } from "../runs/approval-desk.ts";
import { incomingTrace } from "../tracing/trace-context.ts";

/** What the request asked for, read before admission. */
interface ExecuteRequest {
  workflowId: string;
  mode: "sync" | "async";
  apiKey: string | null;
  idempotencyKey: string | null;
  requestHash: string | null;
  timeoutMs: number;
  controls: ExecuteControls;
  /** The body without its control fields: the trigger's input. */
  input: unknown;
  /** Whether a sync run keeps its input for re-runs (a body of at most MAX_KEPT_INPUT_BYTES). */
  keepsInput: boolean;
}

/** The job link of an async run, as Sim's clients read it (`taskId` is the execution id). */
export function queuedBody(executionId: string, createdAt: string, status = "queued") {
  return { success: true, taskId: executionId, executionId, status, createdAt, links: { status: `/api/jobs/${executionId}` } };
}

/** A 400 for a request header whose value is not one the endpoint takes. */
function badHeader(name: string, message: string): HttpError {
  return new HttpError(400, "INVALID_HEADER", `${name}: ${message}`, { header: name });
}

/** SHA-256 of the parsed body (so whitespace and key spacing do not make a retry a new request). */
export async function requestHash(body: unknown, mode: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${mode}\n${JSON.stringify(body) ?? ""}`));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Reads and checks everything that does not need the workflow (see the module comment). */
async function readExecuteRequest(c: Context, services: RunServices): Promise<ExecuteRequest> {
  const request = c.req.raw;
  const { id } = readParams(c.req.param() as Record<string, string>, errors);
  if (!isUuid(id)) throw new HttpError(404, "NOT_FOUND", `Workflow ${id} not found`);

  const modeHeader = request.headers.get("x-execution-mode")?.trim().toLowerCase();
  if (modeHeader && modeHeader !== "sync" && modeHeader !== "async") throw badHeader("X-Execution-Mode", "use async, or leave the header out");
  const mode = modeHeader === "async" ? "async" : "sync";
  const idempotencyKey = request.headers.get("idempotency-key");
  if (idempotencyKey !== null && (idempotencyKey.length < 1 || idempotencyKey.length > 255)) throw new HttpError(400, "INVALID_IDEMPOTENCY_KEY", "Idempotency-Key must be 1 to 255 characters");
  let timeoutMs = services.syncTimeoutMs;
  const timeoutHeader = request.headers.get("x-execution-timeout-seconds");
  if (timeoutHeader !== null) {
    const seconds = Number(timeoutHeader);
    if (!Number.isInteger(seconds) || seconds < 1 || seconds * 1000 > services.syncTimeoutMs) {
      throw badHeader("X-Execution-Timeout-Seconds", `a whole number of seconds from 1 to ${services.syncTimeoutMs / 1000}`);
    }
    timeoutMs = seconds * 1000;
  }

  const empty = hasNoBody(request);
  const body = empty ? {} : await readJson(request, { errors, maxBytes: MAX_EXECUTE_BODY_BYTES, contentType: null });
  let controls: ExecuteControls = {};
  let input = body;
  if (body !== null && typeof body === "object" && !Array.isArray(body) && ("stream" in body || "selectedOutputs" in body)) {
    const { stream, selectedOutputs, ...rest } = body as Record<string, unknown>;
    controls = validate(executeControlSchema, { stream, selectedOutputs }, "body", errors);
    input = rest;
  }
  if (mode === "async" && (controls.stream || controls.selectedOutputs)) {
    throw new HttpError(400, "INVALID_BODY", "stream and selectedOutputs apply to runs answered within the request, not to X-Execution-Mode: async");
  }
  return {
    workflowId: id,
    mode,
    apiKey: request.headers.get("x-api-key"),
    idempotencyKey,
    requestHash: idempotencyKey === null ? null : await requestHash(body, mode),
    timeoutMs,
    controls,
    input,
    keepsInput: mode === "async" || bodySize(request, body) <= MAX_KEPT_INPUT_BYTES,
  };
}

/** The body's size in bytes: its Content-Length, or (a chunked body) the parsed body's JSON length. */
function bodySize(request: Request, body: unknown): number {
  const declared = request.headers.get("content-length");
  return declared !== null ? Number(declared) : new TextEncoder().encode(JSON.stringify(body) ?? "").length;
}

/** The answer to a repeated Idempotency-Key: the first execution's answer, or its job link. */
function replayResponse(replay: Replay): Response {
  const headers = { "X-Execution-Id": replay.executionId, "Idempotent-Replayed": "true" };
  if (replay.mode === "async") return Response.json(queuedBody(replay.executionId, replay.createdAt, replay.runStatus), { status: 202, headers });
  if (replay.response) return toHttpResponse(replay.response, headers);
  const body = replay.runStatus === "completed"
    ? { success: true, executionId: replay.executionId, output: replay.output ?? null }
    : recordedFailure(replay.executionId, replay.status, replay.error);
  return Response.json(body, { status: replay.status, headers });
}

/** The body of a sync run recorded failed without a stored answer (swept, or lost), as its replay shows it. */
function recordedFailure(executionId: string, status: number, error: Replay["error"]) {
  return { success: false, executionId, error: error?.message ?? "the run failed", code: status === 408 ? "EXECUTION_TIMEOUT" : "EXECUTION_FAILED", errorCode: error?.code ?? null, failedBlock: error?.failedBlock ?? null };
}

/** A run refused after admission: recorded as failed with the answer, which is returned. */
async function refuseAdmitted(services: RunServices, run: AdmittedSync, status: number, code: string, message: string, extra: Record<string, unknown> = {}): Promise<Response> {
  const answer: StoredResponse = { status, headers: {}, body: { error: message, code, executionId: run.executionId, ...extra } };
  await finishRun(services.call, run.executionId, refusedEnding(code, message, answer));
  return toHttpResponse(answer, { ...rateLimitHeaders(run.rateLimit), "X-Execution-Id": run.executionId });
}

/**
 * How an admitted sync run is to run: the execute endpoint's request, or a re-run's
 * (runs-rerun-endpoint.ts), which replays part of its original and answers with X-Rerun-Of.
 */
export interface SyncRunPlan {
  trigger: TriggerRequest;
  controls: ExecuteControls;
  timeoutMs: number;
  /** The workspace the instance's cached environment is assumed to be for (RunCache.environmentFor). */
  assumedWorkspaceId?: string;
  /** The block outcomes the run replays, chosen against its compiled workflow, or why it is refused (400). */
  replay?: (prepared: PreparedRun) => { ok: true; history: readonly Checkpoint[] } | { ok: false; code: string; message: string };
  /** Headers the answer carries besides the rate limit and X-Execution-Id. */
  headers?: Record<string, string>;
}

/** What an admitted run needs checked against its deployed workflow, or the refusal's answer. */
async function checkAdmitted(services: RunServices, run: AdmittedSync, prepared: PreparedRun, plan: SyncRunPlan): Promise<SelectedOutput[] | null | Response> {
  let selected: SelectedOutput[] | null = null;
  if (plan.controls.selectedOutputs) {
    const resolved = resolveSelectedOutputs(prepared.compiled, plan.controls.selectedOutputs);
    if (!resolved.ok) return await refuseAdmitted(services, run, 400, "UNKNOWN_SELECTED_OUTPUT", `selectedOutputs entry "${resolved.entry}" is unknown: ${resolved.reason}`, { entry: resolved.entry });
    selected = resolved.selected;
  }
  try {
    await checkTriggerInput(prepared.compiled, plan.trigger);
  } catch (error) {
    if (error instanceof FileTooLargeError) return await refuseAdmitted(services, run, 413, "FILE_TOO_LARGE", error.message);
    if (error instanceof WorkflowError) return await refuseAdmitted(services, run, 400, "INVALID_INPUT", error.message);
    throw error;
  }
  return selected;
}

/**
 * Runs an admitted sync run and answers with its result (or streams it), keeping its short lease
 * meanwhile (run-lease.ts): the run stops if the database says it was lost or cancelled. Its block
 * outcomes are collected as it goes and stored with its finish (collected-outcomes.ts), for re-runs;
 * a run that reaches an approval is answered paused and goes on asynchronously (paused-answer.ts).
 */
async function runAdmitted(c: Context, services: RunServices, run: AdmittedSync, plan: SyncRunPlan): Promise<Response> {
  const logger = requestLogger(workflowLog, c.req.raw);
  const lease = holdSyncLease({ call: services.call, log: (event, fields) => logger.warn(event, fields), cancelSignals: services.cancelSignals }, run);
  let streaming = false;
  try {
    let prepared: PreparedRun;
    try {
      prepared = await prepareRun(services.call, services.cache, run, plan.assumedWorkspaceId);
    } catch (error) {
      if (error instanceof ValidationError) return await refuseAdmitted(services, run, 400, "INVALID_WORKFLOW", error.message, { issues: error.issues });
      throw error;
    }
    const replayed = plan.replay?.(prepared) ?? { ok: true, history: [] };
    if (!replayed.ok) return await refuseAdmitted(services, run, 400, replayed.code, replayed.message);
    const selected = await checkAdmitted(services, run, prepared, plan);
    if (selected instanceof Response) return selected;
    const headers = { ...rateLimitHeaders(run.rateLimit), "X-Execution-Id": run.executionId, ...plan.headers };
    const files = services.files({ workspaceId: run.workflow.workspaceId, workflowId: run.workflow.id, executionId: run.executionId });
    // An approval opens through the async runs' desk; the run is then handed to the async path (paused-answer.ts).
    const outcomes = collectingDurability(replayed.history, approvalDeskOf(services.call, run, () => {}));
    const trigger = plan.trigger;
    if (plan.controls.stream) {
      const streamed = streamRun({ services, run, prepared, trigger, selected, files, timeoutMs: plan.timeoutMs, request: c.req.raw, headers, lease, outcomes });
      // The stream outlives this call: it releases the lease when its run ends.
      streaming = true;
      return streamed;
    }
    const result = await runWorkflow({
      workflow: prepared.compiled, trigger, env: prepared.env, executionId: run.executionId, account: run.workflow.billingAccountId, trace: run.trace, timeoutMs: plan.timeoutMs,
      signal: AbortSignal.any([c.req.raw.signal, lease.signal]), services: { files }, durable: outcomes,
    });
    if (lease.lost) return Response.json(recordedFailure(run.executionId, 500, { ...WORKER_LOST, failedBlock: null }), { status: 500, headers });
    if (result.status === "parked") {
      const paused = await handOverPausedRun(services.call, run, result, outcomes);
      if ("status" in paused) return toHttpResponse(paused, headers);
      return Response.json(recordedFailure(run.executionId, 500, { ...paused, failedBlock: null }), { status: 500, headers });
    }
    const answer = executeAnswer(result, selected ? selectedOutput(selected, result.traceSpans) : result.output);
    await finishRun(services.call, run.executionId, { ...endingOf(result, files.files), response: answer, checkpoints: outcomes.kept });
    return toHttpResponse(answer, headers);
  } finally {
    if (!streaming) lease.release();
  }
}

/**
 * Runs an admitted sync run (runAdmitted) and answers; whatever breaks after admission, the run is
 * recorded as ended (recordUnexpectedEnd) before the error goes on to the router's 500.
 */
export async function answerAdmittedRun(c: Context, services: RunServices, run: AdmittedSync, plan: SyncRunPlan): Promise<Response> {
  try {
    return await runAdmitted(c, services, run, plan);
  } catch (error) {
    // Whatever broke after admission, the record must not stay `running`.
    requestLogger(workflowLog, c.req.raw).error("run_failed_unexpectedly", { executionId: run.executionId, error });
    await recordUnexpectedEnd(services.call, run.executionId, error);
    throw error;
  }
}

/** Serves one execute request (see the module comment). */
export async function handleExecute(c: Context, services: RunServices): Promise<Response> {
  const request = await readExecuteRequest(c, services);
  const hints = services.cache.admitHints(request.workflowId);
  const answer = (await services.call("admit_workflow_run", {
    p_workflow_id: request.workflowId,
    p_trigger: "api",
    p_mode: request.mode,
    p_api_key: request.apiKey,
    p_input: request.keepsInput ? request.input : null,
    p_idempotency_key: request.idempotencyKey,
    p_request_hash: request.requestHash,
    p_cached_deployment_ids: hints.p_cached_deployment_ids ?? null,
    p_environment_version: hints.p_environment_version ?? null,
    // A short lease, renewed while the run is alive (runAdmitted), so a retry of a request whose
    // instance died is answered within it (async runs are leased by the worker that claims them).
    p_lease_seconds: SYNC_LEASE_SECONDS,
    // A valid traceparent makes the run join the caller's trace; otherwise it starts its own.
    p_trace: incomingTrace(c.req.raw.headers),
  })) as AdmitAnswer;

  if (answer.outcome === "refused") throw refusalError(answer);
  if (answer.outcome === "replay") return replayResponse(answer);
  if (answer.status === 202) {
    return Response.json(queuedBody(answer.executionId, answer.createdAt), { status: 202, headers: { ...rateLimitHeaders(answer.rateLimit), "X-Execution-Id": answer.executionId } });
  }
  const trigger: TriggerRequest = { kind: "api", input: request.input };
  return await answerAdmittedRun(c, services, answer, { trigger, controls: request.controls, timeoutMs: request.timeoutMs, assumedWorkspaceId: hints.workspaceId });
}
