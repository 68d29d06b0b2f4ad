/**
 * Boundary shapes of the logs API (GET /api/v1/logs, /logs/{id}, /logs/executions/{executionId}):
 * the query string and path values as clients send them, and the answers of the SQL functions
 * behind them. docs/openapi.yaml describes the same parameters.
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
import { decodeCursor, type LogsCursor } from "./logs-cursor.ts";

const TRIGGERS = ["api", "webhook", "schedule", "manual", "chat"] as const;
const MAX_INTEGER = 2_147_483_647;

/** A comma-separated list of 1 to 100 distinct items, each checked by `item`. */
function list<Item extends z.ZodType<string, string>>(item: Item, what: string) {
  return z
    .string()
    .transform((text) => text.split(","))
    .pipe(z.array(item).min(1).max(100, `at most 100 ${what}`))
    .transform((items) => [...new Set(items)]);
}

const uuid = z.string().regex(UUID_PATTERN, "must be a UUID (8-4-4-4-12 hexadecimal digits)");

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

/**
 * An ISO 8601 timestamp with a zone (Z or ±hh:mm), as the UTC instant it names, to the microsecond
 * (what Postgres keeps): a bound copied from a log's startedAt must include that very log.
 */
const timestamp = z.iso
  .datetime({ offset: true, message: "must be an ISO 8601 timestamp with a zone, such as 2026-01-31T23:00:00Z" })
  .transform((text, context) => {
    const date = new Date(text);
    if (Number.isNaN(date.getTime()) || date.getUTCFullYear() < 1 || date.getUTCFullYear() > 9999) {
      context.addIssue({ code: "custom", message: "is not a date between the years 1 and 9999" });
      return z.NEVER;
    }
    // Offsets are whole minutes, so the digits below the millisecond carry over unchanged.
    const fraction = /T[\d:]+\.(\d+)/.exec(text)?.[1] ?? "";
    return `${date.toISOString().slice(0, 19)}.${fraction.padEnd(6, "0").slice(0, 6)}Z`;
  });

/** The query string of GET /api/v1/logs. */
export const logsQuery = z
  .strictObject({
    workspaceId: z.string({ error: (issue) => (issue.input === undefined ? "is required" : undefined) }).regex(UUID_PATTERN, "must be a UUID (8-4-4-4-12 hexadecimal digits)"),
    workflowIds: list(uuid, "workflow ids").optional(),
    folderIds: list(uuid, "folder ids").optional(),
    triggers: list(z.enum(TRIGGERS, { message: `must be ${TRIGGERS.join(", ")}` }), "triggers").optional(),
    level: z.enum(["info", "error"], { message: "must be info or error" }).optional(),
    startDate: timestamp.optional(),
    endDate: timestamp.optional(),
    executionId: uuid.optional(),
    minDurationMs: milliseconds.optional(),
    maxDurationMs: milliseconds.optional(),
    minCost: usd.optional(),
    maxCost: usd.optional(),
    model: z.string().min(1, "must not be empty").max(200, "must be at most 200 characters").optional(),
    limit: z
      .string()
      .regex(/^\d{1,4}$/, "must be a whole number from 1 to 1000")
      .transform(Number)
      .refine((value) => value >= 1 && value <= 1000, "must be a whole number from 1 to 1000")
      .default(100),
    cursor: z
      .string()
      .transform((text, context): LogsCursor => {
        const cursor = decodeCursor(text);
        if (cursor === null) {
          context.addIssue({ code: "custom", message: "is not a cursor this API returned (use nextCursor as it came)" });
          return z.NEVER;
        }
        return cursor;
      })
      .optional(),
    order: z.enum(["desc", "asc"], { message: "must be desc or asc" }).default("desc"),
    details: z.enum(["basic", "full"], { message: "must be basic or full" }).default("basic"),
    includeTraceSpans: flag.default(false),
    includeFinalOutput: flag.default(false),
  })
  .superRefine((query, context) => {
    if (query.cursor && query.cursor.order !== query.order) {
      context.addIssue({ code: "custom", path: ["cursor"], message: `was returned for order=${query.cursor.order}; ask with the same order` });
    }
  });

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
    p_cursor_started_at: query.cursor?.startedAt ?? null,
    p_cursor_id: query.cursor?.id ?? null,
    p_order: query.order,
    p_details: query.details,
    p_include_trace_spans: query.includeTraceSpans,
    p_include_final_output: query.includeFinalOutput,
  };
}

/** Path of GET /api/v1/logs/{id} and /logs/executions/{executionId}: an id that is not a UUID names no log. */
export const logIdPath = z.object({ id: uuid });

/** The logs API bucket as the SQL functions report it (the X-RateLimit-* headers). */
export const rateLimitState = z.object({
  limit: z.number(),
  remaining: z.number(),
  resetAt: z.string(),
  retryAfter: z.number(),
});

/** What a logs SQL function answers: the HTTP body with its status, or a refusal. */
export const logsAnswer = z.union([
  z.object({ status: z.literal(200), body: z.record(z.string(), z.unknown()), rateLimit: rateLimitState }),
  z.object({
    status: z.number().int().min(400).max(499),
    code: z.string(),
    error: z.string(),
    retryAfter: z.number().int().optional(),
    rateLimit: rateLimitState.nullish(),
  }),
]);

/** A logs SQL function's answer, parsed. */
export type LogsAnswer = z.output<typeof logsAnswer>;

/** The keyset position `workflow_logs` reports for the last entry of a page. */
export const pagePosition = z.object({ startedAt: z.string(), id: z.string() });
