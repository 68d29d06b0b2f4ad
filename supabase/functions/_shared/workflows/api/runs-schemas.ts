/**
 * Boundary shapes of the runs API (GET /api/v2/runs, /runs/{runId}, and Sim's
 * /api/v2/workflows/{workflowId}/runs[/{runId}]): the query string as clients send it, the SQL
 * arguments it becomes, and the page position the list function reports. docs/openapi.yaml
 * describes the same parameters. Unknown parameters are refused, as in the logs API, so a misspelt
 * filter is an error rather than a silently unfiltered page.
 */
import { z } from "zod";
import type { RpcArgs } from "../../db/rpc.ts";
import { checkCursorOrder, cursor, order, pageSize, timestamp, trigger, uuid } from "./query-values.ts";

/**
 * A run's statuses in Sim's v2 words (public.workflow_runs's run_state): `paused` is an async run
 * parked at a long Wait.
 */
const RUN_STATUSES = ["queued", "running", "paused", "completed", "failed", "cancelled"] as const;

/** Runs on a page at most, and when `limit` is absent: Sim's v2 figures. */
const RUNS_PAGE = { max: 100, fallback: 50 } as const;

/** The query string of GET /api/v2/runs (for Sim's path, with the path's workflowId in it). */
export const runsQuery = z
  .strictObject({
    workspaceId: uuid.optional(),
    workflowId: uuid.optional(),
    status: z.enum(RUN_STATUSES, { message: `must be ${RUN_STATUSES.join(", ")}` }).optional(),
    trigger: trigger.optional(),
    startDate: timestamp.optional(),
    endDate: timestamp.optional(),
    limit: pageSize(RUNS_PAGE.max, RUNS_PAGE.fallback),
    cursor: cursor.optional(),
    order,
  })
  .superRefine((query, context) => {
    checkCursorOrder(query, context);
    if (query.workspaceId === undefined && query.workflowId === undefined) {
      context.addIssue({ code: "custom", path: ["workspaceId"], message: "is required unless workflowId is given" });
    }
    // Both are UTC to the microsecond in one spelling, so text order is time order.
    if (query.startDate !== undefined && query.endDate !== undefined && query.startDate > query.endDate) {
      context.addIssue({ code: "custom", path: ["startDate"], message: "must not be after endDate" });
    }
  });

/** GET /api/v2/runs query, parsed. */
export type RunsQuery = z.output<typeof runsQuery>;

/** The arguments of public.workflow_runs for a parsed query and key. */
export function runsArguments(apiKey: string, query: RunsQuery): RpcArgs<"workflow_runs"> {
  return {
    p_api_key: apiKey,
    p_workspace_id: query.workspaceId ?? null,
    p_workflow_id: query.workflowId ?? null,
    p_status: query.status ?? null,
    p_trigger: query.trigger ?? null,
    p_start_date: query.startDate ?? null,
    p_end_date: query.endDate ?? null,
    p_limit: query.limit,
    p_cursor_created_at: query.cursor?.at ?? null,
    p_cursor_id: query.cursor?.id ?? null,
    p_order: query.order,
  };
}

/** The keyset position `workflow_runs` reports for the last run of a page. */
export const runPosition = z.object({ createdAt: z.string(), id: z.string() });
