/**
 * Boundary shapes of the logs API (GET /api/v1/logs, /logs/{id}, /logs/executions/{executionId}):
 * the query string and path values as clients send them, and the page position the list function
 * reports (the answers' envelope is keyed-read.ts's). docs/openapi.yaml describes the same
 * parameters.
 *
 * Every parameter is text in a query string, so each is parsed for what it means: booleans are
 * `true`/`false` (or `1`/`0`), never "any non-empty text" (`includeTraceSpans=false` is false);
 * numbers are whole decimal numbers in range; dates are ISO 8601 timestamps with a zone; lists
 * are comma-separated. Unknown parameters are refused, so a misspelt filter is an error rather
 * than a silently unfiltered page.
 */
import { z } from "zod";
import type { RpcArgs } from "../../db/rpc.ts";
import { UUID_PATTERN } from "../../http/uuid.ts";
import { checkCursorOrder, cursor, order, pageSize, timestamp, trigger, uuid } from "./query-values.ts";

const MAX_INTEGER = 2_147_483_647;

/** A comma-separated list of 1 to 100 distinct items, each checked by `item`. */
function list<Item extends z.ZodType<string, string>>(item: Item, what: string) {
  return z
    .string()
    .transform((text) => text.split(","))
    .pipe(z.array(item).min(1).max(100, `at most 100 ${what}`))
    .transform((items) => [...new Set(items)]);
}

/** `true`, `false`, `1` or `0`. */
const flag = z.enum(["true", "false", "1", "0"], { message: "must be true or false" }).transform((text) => text === "true" || text === "1");

/** A whole number of milliseconds. */
const milliseconds = z
  .string()
  .regex(/^\d{1,10}$/, "must be a whole number of milliseconds")
  .transform(Number)
  .refine((value) => value <= MAX_INTEGER, "is too large");

/** USD, as decimal text (kept as text so Postgres's numeric gets it exactly). */
const usd = z.string().regex(/^\d{1,9}(\.\d{1,10})?$/, "must be a non-negative amount in USD, such as 0.05");

/** The query string of GET /api/v1/logs. */
export const logsQuery = z
  .strictObject({
    workspaceId: z.string({ error: (issue) => (issue.input === undefined ? "is required" : undefined) }).regex(UUID_PATTERN, "must be a UUID (8-4-4-4-12 hexadecimal digits)"),
    workflowIds: list(uuid, "workflow ids").optional(),
    folderIds: list(uuid, "folder ids").optional(),
    triggers: list(trigger, "triggers").optional(),
    level: z.enum(["info", "error"], { message: "must be info or error" }).optional(),
    startDate: timestamp.optional(),
    endDate: timestamp.optional(),
    executionId: uuid.optional(),
    minDurationMs: milliseconds.optional(),
    maxDurationMs: milliseconds.optional(),
    minCost: usd.optional(),
    maxCost: usd.optional(),
    model: z.string().min(1, "must not be empty").max(200, "must be at most 200 characters").optional(),
    limit: pageSize(1000, 100),
    cursor: cursor.optional(),
    order,
    details: z.enum(["basic", "full"], { message: "must be basic or full" }).default("basic"),
    includeTraceSpans: flag.default(false),
    includeFinalOutput: flag.default(false),
  })
  .superRefine(checkCursorOrder);

/** GET /api/v1/logs query, parsed. */
export type LogsQuery = z.output<typeof logsQuery>;

/** The arguments of public.workflow_logs for a parsed query and key. */
export function logsArguments(apiKey: string, query: LogsQuery): RpcArgs<"workflow_logs_json"> {
  return {
    p_api_key: apiKey,
    p_workspace_id: query.workspaceId,
    p_workflow_ids: query.workflowIds ?? null,
    p_folder_ids: query.folderIds ?? null,
    p_triggers: query.triggers ?? null,
    p_level: query.level ?? null,
    p_start_date: query.startDate ?? null,
    p_end_date: query.endDate ?? null,
    p_execution_id: query.executionId ?? null,
    p_min_duration_ms: query.minDurationMs ?? null,
    p_max_duration_ms: query.maxDurationMs ?? null,
    // numeric, sent as the decimal text it was given so Postgres reads it exactly (the generated
    // type of a numeric argument is number).
    p_min_cost: (query.minCost ?? null) as number | null,
    p_max_cost: (query.maxCost ?? null) as number | null,
    p_model: query.model ?? null,
    p_limit: query.limit,
    p_cursor_started_at: query.cursor?.at ?? null,
    p_cursor_id: query.cursor?.id ?? null,
    p_order: query.order,
    p_details: query.details,
    p_include_trace_spans: query.includeTraceSpans,
    p_include_final_output: query.includeFinalOutput,
  };
}

/** Path of GET /api/v1/logs/{id} and /logs/executions/{executionId}: an id that is not a UUID names no log. */
export const logIdPath = z.object({ id: uuid });

/** The keyset position `workflow_logs` reports for the last entry of a page. */
export const pagePosition = z.object({ startedAt: z.string(), id: z.string() });
