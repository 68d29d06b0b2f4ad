/**
 * Manual runs: the editor runs the draft (not the active snapshot) from a signed-in session, with
 * the trigger's Input Format value column as input unless the request gives one. The caller must
 * be an editor of the workflow's workspace; a workflow they cannot see is "not found".
 */
import { z } from "zod";
import { WorkflowError } from "../engine/errors.ts";
import { ValidationError } from "../state/issues.ts";
import { DEFAULT_RUN_TIMEOUT_MS, executeWorkflow, type ExecuteOptions } from "../engine/execute.ts";
import { RequestError, runResponse } from "../api/run-response.ts";
import type { ExecutionResult } from "../engine/context.ts";

/** A draft as its caller may see it, with the caller's role in its workspace. */
export interface DraftAccess {
  workflowId: string;
  workspaceId: string;
  name: string;
  state: unknown;
  /** owner, admin, editor or viewer. */
  role: string | null;
}

/** Where manual runs read drafts and environments (Supabase in production, fakes in tests). */
export interface WorkflowStore {
  /** The draft the caller can see, or null; throws RequestError UNAUTHORIZED for a bad session. */
  loadDraft(authorization: string, workflowId: string): Promise<DraftAccess | null>;
  /** The workspace's decrypted environment variables. */
  loadEnvironment(workspaceId: string): Promise<Record<string, string>>;
}

/** The body of a manual run; every part is optional. */
export const manualRunBodySchema = z
  .object({
    /** Replaces the value column (for a webhook or schedule trigger: the body or tick). */
    input: z.unknown().optional(),
    /** Which trigger to start from when the workflow has several. */
    triggerBlockId: z.string().min(1).optional(),
    /** A shorter run timeout than the default. */
    timeoutMs: z.number().int().min(1).max(DEFAULT_RUN_TIMEOUT_MS).optional(),
  })
  .strict();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RUNNING_ROLES = new Set(["owner", "admin", "editor"]);

async function readBody(request: Request): Promise<z.output<typeof manualRunBodySchema>> {
  const text = await request.text();
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
export async function runDraft(request: Request, workflowId: string, store: WorkflowStore, execute: (options: ExecuteOptions) => Promise<ExecutionResult> = executeWorkflow): Promise<Response> {
  try {
    const authorization = request.headers.get("authorization");
    if (!authorization || !/^Bearer\s+\S+/i.test(authorization)) throw new RequestError("UNAUTHORIZED", "Sign in to run workflows (Authorization: Bearer <access token>)");
    if (!UUID.test(workflowId)) throw new RequestError("NOT_FOUND", `Workflow ${workflowId} not found`);
    const body = await readBody(request);
    const draft = await store.loadDraft(authorization, workflowId);
    if (!draft) throw new RequestError("NOT_FOUND", `Workflow ${workflowId} not found`);
    if (!draft.role || !RUNNING_ROLES.has(draft.role)) throw new RequestError("FORBIDDEN", "Only editors, admins and owners of the workspace may run its workflows");
    const env = await store.loadEnvironment(draft.workspaceId);
    const result = await execute({
      workflow: draft.state,
      trigger: { kind: "manual", ...(body.triggerBlockId ? { blockId: body.triggerBlockId } : {}), ...(body.input !== undefined ? { input: body.input } : {}) },
      env,
      signal: request.signal,
      ...(body.timeoutMs ? { timeoutMs: body.timeoutMs } : {}),
    });
    return runResponse(result, { includeTrace: true });
  } catch (error) {
    if (error instanceof RequestError) return error.toResponse();
    if (error instanceof ValidationError) return new RequestError("INVALID_WORKFLOW", error.message, { issues: error.issues }).toResponse();
    if (error instanceof WorkflowError && error.code === "INVALID_INPUT") return new RequestError("INVALID_INPUT", error.message).toResponse();
    return new RequestError("INTERNAL", "The run could not be started").toResponse();
  }
}
