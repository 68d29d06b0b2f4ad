/**
 * The logs API over HTTP, mounted by the `api` function at LOGS_PREFIX (decisions, "Base URL"):
 *
 *   GET /api/v1/logs                               a filtered page of a workspace's logs
 *   GET /api/v1/logs/{id}                          one log in full
 *   GET /api/v1/logs/executions/{executionId}      the workflow state a run executed
 *
 * Each request needs an `x-api-key` (401 without), has its query or path parsed here (400; an id
 * that is not a UUID names no log: 404), and is answered by one SQL function (keyed-read.ts), with
 * the logs API's own rate limit in the X-RateLimit-* headers.
 */
import type { Context, Hono } from "hono";
import { readParams, readQuery, validate } from "../../http/body.ts";
import { HttpError } from "../../http/errors.ts";
import { createRouter } from "../../http/routing.ts";
import { workflowErrors as errors, workflowLog } from "../workflow-errors.ts";
import { callService, type ServiceCall } from "../../db/service-calls.ts";
import { answerKeyedRead, apiKeyOf, type KeyedReadOptions } from "./keyed-read.ts";
import { encodeCursor } from "./keyset-cursor.ts";
import { logIdPath, logsArguments, logsQuery, pagePosition } from "./logs-schemas.ts";

/** Where the `api` function mounts the logs API. */
export const LOGS_PREFIX = "/api/v1/logs";

/** GET /api/v1/logs. */
async function listLogs(c: Context, rpc: ServiceCall): Promise<Response> {
  const request = c.req.raw;
  const apiKey = apiKeyOf(request);
  const query = validate(logsQuery, readQuery(request, errors), "query", errors);
  // The json variant: the answer arrives as text to parse either way, so jsonb would only add a conversion.
  return await answerKeyedRead(rpc, "workflow_logs_json", logsArguments(apiKey, query), (body) => {
    const position = pagePosition.nullable().parse(body.nextCursor ?? null);
    return { ...body, nextCursor: position === null ? null : encodeCursor({ at: position.startedAt, id: position.id, order: query.order }) };
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
export function createLogsApp({ rpc = callService }: KeyedReadOptions = {}): Hono {
  return createRouter(
    [
      { method: "GET", path: "/", handle: (c) => listLogs(c, rpc) },
      // Before "/:id", so that "executions" is never read as a log id.
      { method: "GET", path: "/executions/:executionId", handle: (c) => oneLog(c, "executionId", "Execution", (apiKey, id) => answerKeyedRead(rpc, "workflow_execution_detail", { p_api_key: apiKey, p_execution_id: id })) },
      { method: "GET", path: "/:id", handle: (c) => oneLog(c, "id", "Log", (apiKey, id) => answerKeyedRead(rpc, "workflow_log_detail", { p_api_key: apiKey, p_id: id })) },
    ],
    { errors, logger: workflowLog },
  );
}
