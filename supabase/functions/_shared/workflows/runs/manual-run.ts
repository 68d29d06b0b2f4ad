/**
 * Manual runs: the editor runs the draft (not the active snapshot) with the workspace's
 * environment, as the signed-in user, who must be an editor (or above) of the workflow's
 * workspace. Admit (load the draft the caller can see, check the role, load the environment) →
 * execute → finish. Finishing records nothing yet; the logs API will store the run here.
 */
import type { ExecutionResult } from "../engine/context.ts";
import { executeWorkflow, type ExecuteOptions } from "../engine/execute.ts";
import { RequestError } from "../api/request-error.ts";
import type { WorkflowStore } from "./workflow-store.ts";

/** What a manual run needs: who asks, which workflow, and the run's optional settings. */
export interface ManualRunRequest {
  /** The caller's `Authorization` header (`Bearer <access token>`). */
  authorization: string;
  workflowId: string;
  /** Replaces the value column (for a webhook or schedule trigger: the body or tick). */
  input?: unknown;
  /** Which trigger to start from when the workflow has several. */
  triggerBlockId?: string;
  timeoutMs?: number;
  /** Aborting it cancels the run (the client went away). */
  signal?: AbortSignal;
}

const RUNNING_ROLES = new Set(["owner", "admin", "editor"]);

/**
 * Runs a workflow's draft for the caller. Throws a RequestError when the run is not admitted
 * (UNAUTHORIZED, NOT_FOUND, FORBIDDEN), a ValidationError when the draft is not runnable and a
 * WorkflowError INVALID_INPUT for an unknown trigger; everything after the start is in the result.
 */
export async function runDraft(request: ManualRunRequest, store: WorkflowStore, execute: (options: ExecuteOptions) => Promise<ExecutionResult> = executeWorkflow): Promise<ExecutionResult> {
  const draft = await store.loadDraft(request.authorization, request.workflowId);
  if (!draft) throw new RequestError("NOT_FOUND", `Workflow ${request.workflowId} not found`);
  if (!draft.role || !RUNNING_ROLES.has(draft.role)) throw new RequestError("FORBIDDEN", "Only editors, admins and owners of the workspace may run its workflows");
  const env = await store.loadEnvironment(draft.workspaceId);
  return await execute({
    workflow: draft.state,
    trigger: { kind: "manual", ...(request.triggerBlockId ? { blockId: request.triggerBlockId } : {}), ...(request.input !== undefined ? { input: request.input } : {}) },
    env,
    ...(request.signal ? { signal: request.signal } : {}),
    ...(request.timeoutMs ? { timeoutMs: request.timeoutMs } : {}),
  });
}
