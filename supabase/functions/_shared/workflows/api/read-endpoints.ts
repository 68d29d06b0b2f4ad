/**
 * The workflow service's read endpoints, each one SQL call (docs/workflow-runs.md, "Read endpoints"):
 *
 *   GET /api/jobs/{executionId}          a run's status, output or error, and metadata
 *   GET /api/users/me/usage-limits       the caller's rate limits (not spent) and usage
 *   GET /api/workflows/{id}/status       {isDeployed, deployedAt, deployedVersion, needsRedeployment}
 *
 * The caller is an X-API-Key (whatever else the request carries, so supabase-js's anon
 * Authorization header beside it does not hide it), else a signed-in user's verified session.
 */
import type { Context } from "hono";
import { readParams } from "../../http/body.ts";
import type { RpcArgs } from "../../db/rpc.ts";
import { resolveCaller } from "../../http/caller.ts";
import { HttpError } from "../../http/errors.ts";
import { isUuid } from "../../http/uuid.ts";
import { workflowErrors as errors } from "../workflow-errors.ts";
import type { ReadAnswer } from "../runs/lifecycle-answers.ts";
import { refusalError } from "./refusals.ts";
import type { RunServices } from "./run-services.ts";

/** The principal arguments of the read functions: the key, else the verified user, else neither (401). */
export async function principalArguments(request: Request): Promise<{ p_api_key?: string; p_user_id?: string }> {
  const key = request.headers.get("x-api-key")?.trim();
  if (key) return { p_api_key: key };
  const caller = await resolveCaller(request, { errors });
  if (caller.kind === "user" && caller.verified) return { p_user_id: caller.userId };
  return {};
}

/** The SQL functions behind the read endpoints. */
type ReadFunction = "workflow_job_status" | "workflow_usage_limits" | "workflow_deployment_status";

/** Calls a read function and answers its body, or its refusal. */
async function answerRead<Fn extends ReadFunction>(services: RunServices, fn: Fn, args: RpcArgs<Fn>): Promise<Response> {
  const answer = (await services.call(fn, args)) as ReadAnswer;
  if (answer.outcome === "refused") throw refusalError(answer);
  return Response.json(answer.body);
}

/** The path's id, or the 404 an unknown id gets (an id Postgres could not even read names nothing). */
export function pathId(c: Context, name: string, what: string): string {
  const value = readParams(c.req.param() as Record<string, string>, errors)[name];
  if (!isUuid(value)) throw new HttpError(404, "NOT_FOUND", `${what} ${value} not found`);
  return value;
}

/** GET /api/jobs/{executionId}. */
export async function handleJobStatus(c: Context, services: RunServices): Promise<Response> {
  const executionId = pathId(c, "executionId", "Job");
  return await answerRead(services, "workflow_job_status", { p_execution_id: executionId, ...(await principalArguments(c.req.raw)) });
}

/** GET /api/users/me/usage-limits. */
export async function handleUsageLimits(c: Context, services: RunServices): Promise<Response> {
  return await answerRead(services, "workflow_usage_limits", await principalArguments(c.req.raw));
}

/** GET /api/workflows/{id}/status. */
export async function handleDeploymentStatus(c: Context, services: RunServices): Promise<Response> {
  const workflowId = pathId(c, "id", "Workflow");
  return await answerRead(services, "workflow_deployment_status", { p_workflow_id: workflowId, ...(await principalArguments(c.req.raw)) });
}
