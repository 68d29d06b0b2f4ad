/**
 * HTTP entry points of the workflow service. `handleWorkflowRequest` serves the `/api/workflows/`
 * paths of the `api` function (decisions, "Base URL"); `handleRunFunctionRequest` serves the same
 * manual run as its own function, `workflow-run`, for clients that call functions by name.
 *
 *   POST /api/workflows/{id}/run         run the draft (signed-in editors)
 *   POST /functions/v1/workflow-run/{id} the same
 */
import { supabaseWorkflowStore, type WorkflowStore } from "../runs/workflow-store.ts";
import { handleManualRun } from "./manual-run-endpoint.ts";
import { RequestError } from "./request-error.ts";

const RUN_PATH = /^\/api\/workflows\/([^/]+)\/run\/?$/;
const RUN_FUNCTION_PATH = /\/workflow-run\/([^/]+)\/?$/;

function route(request: Request, workflowId: string | undefined, store: WorkflowStore): Promise<Response> | Response {
  const { pathname } = new URL(request.url);
  if (workflowId === undefined) return new RequestError("NOT_FOUND", `No route for ${request.method} ${pathname}`).toResponse();
  if (request.method !== "POST") return new RequestError("METHOD_NOT_ALLOWED", `Use POST to run a workflow`).toResponse();
  return handleManualRun(request, decodeURIComponent(workflowId), store);
}

/** Requests whose path starts with `/api/workflows/`. */
export async function handleWorkflowRequest(request: Request, store: WorkflowStore = supabaseWorkflowStore()): Promise<Response> {
  return await route(request, RUN_PATH.exec(new URL(request.url).pathname)?.[1], store);
}

/** Requests to the `workflow-run` function: `/workflow-run/{workflowId}`. */
export async function handleRunFunctionRequest(request: Request, store: WorkflowStore = supabaseWorkflowStore()): Promise<Response> {
  return await route(request, RUN_FUNCTION_PATH.exec(new URL(request.url).pathname)?.[1], store);
}
