/**
 * `POST /api/workflows/{id}/run` (and `/functions/v1/workflow-run/{id}`): reads the request
 * (session, workflow id, body), hands it to runs/manual-run.ts, and answers with the result and its
 * trace (decisions, "Execute responses"). Every refusal is `{error, code}` with its status.
 */
import type { ExecutionResult } from "../engine/context.ts";
import { readBodyBytes } from "../../http/body.ts";
import { HttpError } from "../../http/errors.ts";
import { workflowErrors } from "../../http/workflow-errors.ts";
import { WorkflowError } from "../engine/errors.ts";
import { MAX_REQUEST_BODY_BYTES } from "../engine/limits.ts";
import type { ExecuteOptions } from "../engine/execute.ts";
import { runDraft } from "../runs/manual-run.ts";
import type { WorkflowStore } from "../runs/workflow-store.ts";
import { ValidationError } from "../state/issues.ts";
import { RequestError } from "./request-error.ts";
import { runResponse } from "./run-response.ts";
import { manualRunBodySchema, type ManualRunBody } from "./schemas.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The body's text, refused past the run's body cap (engine/limits.ts) before it is all buffered. */
async function readText(request: Request): Promise<string> {
  try {
    return new TextDecoder().decode(await readBodyBytes(request, { errors: workflowErrors, maxBytes: MAX_REQUEST_BODY_BYTES }));
  } catch (error) {
    if (error instanceof HttpError && error.status === 413) throw new RequestError("BODY_TOO_LARGE", `The request body is larger than ${MAX_REQUEST_BODY_BYTES.toLocaleString("en")} bytes`);
    throw error;
  }
}

async function readBody(request: Request): Promise<ManualRunBody> {
  const text = await readText(request);
  if (text.trim() === "") return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new RequestError("INVALID_BODY", "The request body is not valid JSON");
  }
  const parsed = manualRunBodySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RequestError("INVALID_BODY", `Invalid request body: ${[...issue.path].join(".") || "body"} ${issue.message.replace(/^Invalid input: /, "")}`);
  }
  return parsed.data;
}

/** Runs a workflow's draft for the caller and answers with the result and its trace. */
export async function handleManualRun(request: Request, workflowId: string, store: WorkflowStore, execute?: (options: ExecuteOptions) => Promise<ExecutionResult>): Promise<Response> {
  try {
    const authorization = request.headers.get("authorization");
    if (!authorization || !/^Bearer\s+\S+/i.test(authorization)) throw new RequestError("UNAUTHORIZED", "Sign in to run workflows (Authorization: Bearer <access token>)");
    if (!UUID.test(workflowId)) throw new RequestError("NOT_FOUND", `Workflow ${workflowId} not found`);
    const body = await readBody(request);
    const result = await runDraft({ authorization, workflowId, ...body, signal: request.signal }, store, execute);
    return runResponse(result, { includeTrace: true });
  } catch (error) {
    if (error instanceof RequestError) return error.toResponse();
    if (error instanceof ValidationError) return new RequestError("INVALID_WORKFLOW", error.message, { issues: error.issues }).toResponse();
    if (error instanceof WorkflowError && error.code === "INVALID_INPUT") return new RequestError("INVALID_INPUT", error.message).toResponse();
    return new RequestError("INTERNAL", "The run could not be started").toResponse();
  }
}
