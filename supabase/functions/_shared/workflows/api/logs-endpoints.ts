/**
 * The logs API over HTTP, mounted by the `api` function at LOGS_PREFIX (decisions, "Base URL"):
 *
 *   GET /api/v1/logs                               a filtered page of a workspace's logs
 *   GET /api/v1/logs/{id}                          one log in full
 *   GET /api/v1/logs/executions/{executionId}      the workflow state a run executed
 *
 * Each request needs an `x-api-key` (401 without), has its query or path parsed here (400; an id
 * that is not a UUID names no log: 404), and is answered by one SQL function that authenticates
 * the key, spends a token of the logs rate limit, checks the key may read the workspace and reads
 * the page, over the instance's service-role pool in one round trip (db/service-calls.ts; a lost
 * connection is a 503). The answer carries the logs API's own rate limit in X-RateLimit-Limit /
 * -Remaining / -Reset (ISO), and Retry-After on a 429.
 */
import type { Context, Hono } from "hono";
import { readParams, readQuery, validate } from "../../http/body.ts";
import { HttpError } from "../../http/errors.ts";
import type { RpcArgs } from "../../db/rpc.ts";
import { createRouter } from "../../http/routing.ts";
import { workflowErrors as errors, workflowLog } from "../workflow-errors.ts";
import { callService, type ServiceCall } from "../../db/service-calls.ts";
import { encodeCursor } from "./logs-cursor.ts";
import { logIdPath, logsAnswer, logsArguments, logsQuery, pagePosition } from "./logs-schemas.ts";

/** Where the `api` function mounts the logs API. */
export const LOGS_PREFIX = "/api/v1/logs";

/** What the logs app is built from; tests may pass their own database access. */
export interface LogsOptions {
  rpc?: ServiceCall;
}

/** The X-API-Key of the request; the logs API takes no other credentials. */
function apiKeyOf(request: Request): string {
  const key = request.headers.get("x-api-key")?.trim();
  if (!key) throw new HttpError(401, "UNAUTHORIZED", "API key required: send it in the X-API-Key header");
  return key;
}

/** The SQL functions behind the logs API. */
type LogsFunction = "workflow_logs_json" | "workflow_log_detail" | "workflow_execution_detail";

/**
 * Calls a logs SQL function and answers with its body (reshaped by `render`) and the rate limit
 * headers, or throws its refusal as an HttpError carrying the same headers.
 */
async function answer<Fn extends LogsFunction>(rpc: ServiceCall, fn: Fn, args: RpcArgs<Fn>, render: (body: Record<string, unknown>) => unknown = (body) => body): Promise<Response> {
  const parsed = logsAnswer.safeParse(await rpc(fn, args));
  if (!parsed.success) {
    workflowLog.error("logs_unexpected_answer", { fn });
    throw errors.describe({ kind: "internal" });
  }
  const result = parsed.data;
  const headers: Record<string, string> = { "Cache-Control": "no-store" };
  if (result.rateLimit) {
    headers["X-RateLimit-Limit"] = String(result.rateLimit.limit);
    headers["X-RateLimit-Remaining"] = String(result.rateLimit.remaining);
    headers["X-RateLimit-Reset"] = new Date(result.rateLimit.resetAt).toISOString();
  }
  if (!("body" in result)) {
    const retryAfter = result.status === 429 ? result.retryAfter ?? result.rateLimit?.retryAfter : undefined;
    if (retryAfter !== undefined) headers["Retry-After"] = String(retryAfter);
    throw new HttpError(result.status, result.code, result.error, retryAfter === undefined ? undefined : { retryAfter }, headers);
  }
  return Response.json(render(result.body), { headers });
}

/** GET /api/v1/logs. */
async function listLogs(c: Context, rpc: ServiceCall): Promise<Response> {
  const request = c.req.raw;
  const apiKey = apiKeyOf(request);
  const query = validate(logsQuery, readQuery(request, errors), "query", errors);
  // The json variant: the answer arrives as text to parse either way, so jsonb would only add a conversion.
  return await answer(rpc, "workflow_logs_json", logsArguments(apiKey, query), (body) => {
    const position = pagePosition.nullable().parse(body.nextCursor ?? null);
    return { ...body, nextCursor: position === null ? null : encodeCursor({ ...position, order: query.order }) };
  });
}

/** GET /api/v1/logs/{id} and /logs/executions/{executionId}: `read` answers for the key and the id in `param`. */
async function oneLog(c: Context, param: string, what: string, read: (apiKey: string, id: string) => Promise<Response>): Promise<Response> {
  const request = c.req.raw;
  const apiKey = apiKeyOf(request);
  const value = readParams({ id: c.req.param(param) ?? "" }, errors);
  const path = logIdPath.safeParse(value);
  if (!path.success) throw new HttpError(404, "NOT_FOUND", `${what} ${value.id} not found`);
  return await read(apiKey, path.data.id);
}

/** The logs API as a Hono app, to mount at LOGS_PREFIX. */
export function createLogsApp({ rpc = callService }: LogsOptions = {}): Hono {
  return createRouter(
    [
      { method: "GET", path: "/", handle: (c) => listLogs(c, rpc) },
      // Before "/:id", so that "executions" is never read as a log id.
      {
        method: "GET",
        path: "/executions/:executionId",
        handle: (c) => oneLog(c, "executionId", "Execution", (apiKey, id) => answer(rpc, "workflow_execution_detail", { p_api_key: apiKey, p_execution_id: id })),
      },
      { method: "GET", path: "/:id", handle: (c) => oneLog(c, "id", "Log", (apiKey, id) => answer(rpc, "workflow_log_detail", { p_api_key: apiKey, p_id: id })) },
    ],
    { errors, logger: workflowLog },
  );
}
