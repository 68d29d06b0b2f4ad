/**
 * The runs API over HTTP (read side), mounted by the `api` function at RUNS_PREFIX, on Sim's v2
 * paths as well as its own:
 *
 *   GET /api/v2/runs                                   a filtered page of a workspace's runs
 *   GET /api/v2/runs/{runId}                           one run in full
 *   GET /api/v2/workflows/{workflowId}/runs            the same page, for one workflow (Sim's path)
 *   GET /api/v2/workflows/{workflowId}/runs/{runId}    the same run, if it is that workflow's
 *   POST /api/v2/runs/{runId}/resume                   answer the approval it waits at (runs-resume.ts)
 *   POST /api/v2/workflows/{workflowId}/runs/{runId}/resume   the same, Sim's path
 *   POST …/cancel                                      cancelling runs (runs-cancel-endpoint.ts)
 *   POST /api/v2/runs/{runId}/rerun                    a new run of what it ran (runs-rerun-endpoint.ts)
 *
 * Each request needs an `x-api-key` (401 without), has its query or path parsed here (400; an id
 * that is not a UUID names nothing: 404), and is answered by one SQL function (keyed-read.ts) that
 * spends a token of the logs API's bucket. Bodies are Sim's v2 envelopes, `{data, nextCursor}` and
 * `{data}`; refusals are the workflow service's `{error, code}`.
 */
import type { Context, Hono } from "hono";
import { readQuery, validate } from "../../http/body.ts";
import { createRouter } from "../../http/routing.ts";
import { workflowErrors as errors, workflowLog } from "../workflow-errors.ts";
import { callService, type ServiceCall } from "../../db/service-calls.ts";
import { answerKeyedRead, apiKeyOf, type KeyedReadOptions } from "./keyed-read.ts";
import { encodeCursor } from "./keyset-cursor.ts";
import { pathId } from "./read-endpoints.ts";
import { runPosition, runsArguments, runsQuery } from "./runs-schemas.ts";
import { resumeRun } from "./runs-resume.ts";
import { cancelRun, cancelRuns } from "./runs-cancel-endpoint.ts";
import { defaultRunServices, type RunServices } from "./run-services.ts";
import { handleRerun } from "./runs-rerun-endpoint.ts";

/** Where the `api` function mounts the runs API. */
export const RUNS_PREFIX = "/api/v2";

/** GET /runs, and /workflows/{workflowId}/runs with the path's workflow as the filter. */
async function listRuns(c: Context, rpc: ServiceCall): Promise<Response> {
  const request = c.req.raw;
  const apiKey = apiKeyOf(request);
  const workflowId = c.req.param("workflowId") === undefined ? {} : { workflowId: pathId(c, "workflowId", "Workflow") };
  const query = validate(runsQuery, { ...readQuery(request, errors), ...workflowId }, "query", errors);
  return await answerKeyedRead(rpc, "workflow_runs", runsArguments(apiKey, query), (body) => {
    const position = runPosition.nullable().parse(body.nextCursor ?? null);
    return { ...body, nextCursor: position === null ? null : encodeCursor({ at: position.createdAt, id: position.id, order: query.order }) };
  });
}

/** GET /runs/{runId}, and /workflows/{workflowId}/runs/{runId} for that workflow's run only. */
async function oneRun(c: Context, rpc: ServiceCall): Promise<Response> {
  const apiKey = apiKeyOf(c.req.raw);
  const workflowId = c.req.param("workflowId") === undefined ? null : pathId(c, "workflowId", "Workflow");
  const runId = pathId(c, "runId", "Run");
  return await answerKeyedRead(rpc, "workflow_run_detail", { p_api_key: apiKey, p_run_id: runId, p_workflow_id: workflowId });
}

/** What the runs API is built from: the reads' database access, and the services re-runs run on. */
export interface RunsAppOptions extends KeyedReadOptions {
  services?: () => RunServices;
}

/** The runs API as a Hono app, to mount at RUNS_PREFIX. */
export function createRunsApp({ rpc = callService, services = defaultRunServices }: RunsAppOptions = {}): Hono {
  return createRouter(
    [
      { method: "GET", path: "/runs", handle: (c) => listRuns(c, rpc) },
      { method: "GET", path: "/runs/:runId", handle: (c) => oneRun(c, rpc) },
      { method: "GET", path: "/workflows/:workflowId/runs", handle: (c) => listRuns(c, rpc) },
      { method: "GET", path: "/workflows/:workflowId/runs/:runId", handle: (c) => oneRun(c, rpc) },
      { method: "POST", path: "/runs/:runId/resume", handle: (c) => resumeRun(c, rpc) },
      { method: "POST", path: "/workflows/:workflowId/runs/:runId/resume", handle: (c) => resumeRun(c, rpc) },
      { method: "POST", path: "/runs/cancel", handle: (c) => cancelRuns(c, rpc) },
      { method: "POST", path: "/runs/:runId/cancel", handle: (c) => cancelRun(c, rpc) },
      { method: "POST", path: "/workflows/:workflowId/runs/:runId/cancel", handle: (c) => cancelRun(c, rpc) },
      { method: "POST", path: "/runs/:runId/rerun", handle: (c) => handleRerun(c, services()) },
    ],
    { errors, logger: workflowLog },
  );
}
