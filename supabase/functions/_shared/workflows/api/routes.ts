/**
 * HTTP entry points of the workflow service, as one Hono app on the toolkit's router (404, 405 with
 * Allow, `{error, code}` for every refusal, a logged 500 for the unexpected). The `api` function
 * mounts it at `/api` (decisions, "Base URL"); the `workflow-run` function serves the manual run
 * on its own, for clients that call functions by name.
 *
 *   POST /api/workflows/{id}/execute     run the active deployment (X-API-Key): sync, SSE or async
 *   GET  /api/workflows/{id}/status      deployed?, since when, draft changed since?
 *   POST /api/workflows/{id}/run         run the draft (signed-in editors)
 *   GET  /api/jobs/{executionId}         an async (or any) run's status
 *   GET  /api/users/me/usage-limits      rate limits and usage of the caller's billing account
 *   POST /api/webhooks/trigger/{path}    start the workflow listening on a webhook path (async, 202)
 *   POST /functions/v1/workflow-run/{id} the manual run, as its own function
 */
import type { Hono } from "hono";
import { createRouter, type Route } from "../../http/routing.ts";
import { workflowErrors, workflowLog } from "../workflow-errors.ts";
import { handleExecute } from "./execute-endpoint.ts";
import { handleManualRun } from "./manual-run-endpoint.ts";
import { handleDeploymentStatus, handleJobStatus, handleUsageLimits } from "./read-endpoints.ts";
import { defaultRunServices, type RunServices } from "./run-services.ts";
import { handleWebhookTrigger } from "./webhook-trigger-endpoint.ts";

/** The routes under `/api`, for the `api` function to mount there. */
export function createWorkflowApp(services: () => RunServices = defaultRunServices): Hono {
  const routes: Route[] = [
    { method: "POST", path: "/workflows/:id/execute", handle: (c) => handleExecute(c, services()) },
    { method: "GET", path: "/workflows/:id/status", handle: (c) => handleDeploymentStatus(c, services()) },
    { method: "POST", path: "/workflows/:id/run", handle: (c) => handleManualRun(c, services()) },
    { method: "GET", path: "/jobs/:executionId", handle: (c) => handleJobStatus(c, services()) },
    { method: "GET", path: "/users/me/usage-limits", handle: (c) => handleUsageLimits(c, services()) },
    { method: "POST", path: "/webhooks/trigger/:path", handle: (c) => handleWebhookTrigger(c, services()) },
  ];
  return createRouter(routes, { errors: workflowErrors, logger: workflowLog });
}

/** The `workflow-run` function: the manual run at `/workflow-run/{id}` (as the runtime passes the path). */
export function createRunFunctionApp(services: () => RunServices = defaultRunServices): Hono {
  const handle: Route["handle"] = (c) => handleManualRun(c, services());
  return createRouter([
    { method: "POST", path: "/workflow-run/:id", handle },
    { method: "POST", path: "/functions/v1/workflow-run/:id", handle },
  ], { errors: workflowErrors, logger: workflowLog });
}
