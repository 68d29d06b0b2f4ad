/**
 * A workflow's flow control (`settings.flowControl` in its state; issue 32 item 2,
 * docs/flow-control.md): a concurrency key with a limit per key, and a priority. They apply to every
 * trigger, so they are resolved where every run is admitted, in Postgres (admit_workflow_run): the
 * key and the priority are references to the trigger's input (`<api.customerId>`,
 * `<webhook.account>`), never code, and the database resolves such paths without a sandbox. The
 * database checks what they may reference (state_issues); this module gives their shape.
 */
import { z } from "zod";

/** Highest concurrency limit per key a workflow may declare. */
export const MAX_KEY_LIMIT = 1000;
/** Longest key template, and priority template, in characters. */
export const MAX_FLOW_TEMPLATE_LENGTH = 200;
/** Highest priority: a run one point higher starts ahead of runs that waited up to a minute longer. */
export const MAX_PRIORITY = 100;

/** Runs sharing a resolved key run at most `limit` at once; the others wait (async) or get 429 (sync). */
export const concurrencyKeySchema = z
  .object({
    key: z.string().min(1).max(MAX_FLOW_TEMPLATE_LENGTH),
    limit: z.number().int().min(1).max(MAX_KEY_LIMIT),
  })
  .strict();

/** The whole section; both parts optional. */
export const flowControlSchema = z
  .object({
    concurrency: concurrencyKeySchema.optional(),
    priority: z.union([z.number().int().min(0).max(MAX_PRIORITY), z.string().min(1).max(MAX_FLOW_TEMPLATE_LENGTH)]).optional(),
  })
  .strict();

/** Workflow-wide settings of the state. */
export const workflowSettingsSchema = z
  .object({
    flowControl: flowControlSchema.optional(),
  })
  .strict();

/** A parsed flow-control section. */
export type FlowControl = z.output<typeof flowControlSchema>;
