/** The request shapes of the workflow service's HTTP surfaces, in one place (docs/openapi.yaml agrees). */
import { z } from "zod";
import { syncRunTimeoutMs } from "../executor/time-budget.ts";

/** The body of a manual run; every part is optional. */
export const manualRunBodySchema = z
  .object({
    /** Replaces the value column (for a webhook or schedule trigger: the body or tick). */
    input: z.unknown().optional(),
    /** Which trigger to start from when the workflow has several. */
    triggerBlockId: z.string().min(1).max(200).optional(),
    /** A shorter run timeout than the synchronous budget (executor/time-budget.ts), which is the default. */
    timeoutMs: z.number().int().min(1).max(syncRunTimeoutMs()).optional(),
  })
  .strict();

/** A parsed manual-run body. */
export type ManualRunBody = z.output<typeof manualRunBodySchema>;

/**
 * The control fields of an execute body, beside the Input Format's fields: `stream` (SSE) and
 * `selectedOutputs` (`blockName.attribute` entries). They are taken out of the body before it
 * becomes the trigger's input.
 */
export const executeControlSchema = z.object({
  stream: z.boolean({ message: "stream must be true or false" }).optional(),
  selectedOutputs: z.array(z.string().min(1).max(500), { message: "selectedOutputs must be a list of blockName.attribute strings" }).max(100).optional(),
});

/** The control fields of an execute body. */
export type ExecuteControls = z.output<typeof executeControlSchema>;

/** Largest execute body: one 20 MB file as a base64 data URL (about 26.7 MiB) plus its other fields. */
export const MAX_EXECUTE_BODY_BYTES = 32 * 1024 * 1024;

/**
 * The largest request body whose input a sync run keeps for re-runs (an async run keeps its input
 * whatever its size: its worker needs it), and the largest re-run body: a sync run's admission
 * writes its input with it, and inline files up to 20 MB would make every such write (and the
 * table) heavy. A larger sync input is run but not kept; its run is re-run with an input.
 */
export const MAX_KEPT_INPUT_BYTES = 1024 * 1024;

