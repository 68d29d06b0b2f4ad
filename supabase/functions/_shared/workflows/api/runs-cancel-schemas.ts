/**
 * Boundary shapes of cancelling runs (POST /api/v2/runs/{runId}/cancel, Sim's
 * /api/v2/workflows/{workflowId}/runs/{runId}/cancel, and the bulk POST /api/v2/runs/cancel): the
 * JSON bodies as clients send them and the SQL arguments they become. docs/openapi.yaml describes the
 * same fields. Unknown fields are refused, so a misspelt filter cannot widen a bulk cancel.
 */
import { z } from "zod";
import type { RpcArgs } from "../../db/rpc.ts";
import { timestamp, trigger, uuid } from "./query-values.ts";

/** Characters a cancellation's reason may have (workflows_private.cancel_run keeps the same bound). */
export const MAX_CANCEL_REASON_CHARS = 500;

/** Runs one bulk cancel cancels at most, and when `limit` is absent. */
export const MAX_BULK_CANCEL = 1000;

/** Bytes a cancel body may have: a reason and the filters fit many times over. */
export const CANCEL_BODY_BYTES = 4096;

/** The statuses a run in flight has, the ones a bulk cancel may name. */
const IN_FLIGHT = ["queued", "running", "paused"] as const;

// Counted in code points, as Postgres's char_length counts them.
const reason = z
  .string()
  .refine((text) => [...text].length >= 1 && [...text].length <= MAX_CANCEL_REASON_CHARS, `must be 1 to ${MAX_CANCEL_REASON_CHARS} characters`);

/** The optional body of one run's cancel. */
export const cancelBody = z.strictObject({ reason: reason.optional() });

/** The body of a bulk cancel: the runs list's filters, a cap and a reason. */
export const bulkCancelBody = z
  .strictObject({
    workspaceId: uuid.optional(),
    workflowId: uuid.optional(),
    status: z.enum(IN_FLIGHT, { message: `must be ${IN_FLIGHT.join(", ")}` }).optional(),
    trigger: trigger.optional(),
    startDate: timestamp.optional(),
    endDate: timestamp.optional(),
    limit: z.number().int().min(1).max(MAX_BULK_CANCEL, `must be a whole number from 1 to ${MAX_BULK_CANCEL}`).default(MAX_BULK_CANCEL),
    reason: reason.optional(),
  })
  .superRefine((body, context) => {
    if (body.workspaceId === undefined && body.workflowId === undefined) {
      context.addIssue({ code: "custom", path: ["workspaceId"], message: "is required unless workflowId is given" });
    }
    // Both are UTC to the microsecond in one spelling, so text order is time order.
    if (body.startDate !== undefined && body.endDate !== undefined && body.startDate > body.endDate) {
      context.addIssue({ code: "custom", path: ["startDate"], message: "must not be after endDate" });
    }
  });

/** A bulk cancel's body, parsed. */
export type BulkCancelBody = z.output<typeof bulkCancelBody>;

/** The arguments of public.workflow_runs_cancel for a parsed body and key. */
export function bulkCancelArguments(apiKey: string, body: BulkCancelBody): RpcArgs<"workflow_runs_cancel"> {
  return {
    p_api_key: apiKey,
    p_workspace_id: body.workspaceId ?? null,
    p_workflow_id: body.workflowId ?? null,
    p_status: body.status ?? null,
    p_trigger: body.trigger ?? null,
    p_start_date: body.startDate ?? null,
    p_end_date: body.endDate ?? null,
    p_limit: body.limit,
    p_reason: body.reason ?? null,
  };
}
