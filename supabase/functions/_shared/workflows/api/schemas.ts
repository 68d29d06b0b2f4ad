/** The request shapes of the workflow service's HTTP surfaces, in one place (docs/openapi.yaml agrees). */
import { z } from "zod";
import { syncRunTimeoutMs } from "../engine/time-budget.ts";

/** The body of a manual run; every part is optional. */
export const manualRunBodySchema = z
  .object({
    /** Replaces the value column (for a webhook or schedule trigger: the body or tick). */
    input: z.unknown().optional(),
    /** Which trigger to start from when the workflow has several. */
    triggerBlockId: z.string().min(1).optional(),
    /** A shorter run timeout than the synchronous budget (engine/time-budget.ts), which is the default. */
    timeoutMs: z.number().int().min(1).max(syncRunTimeoutMs()).optional(),
  })
  .strict();

/** A parsed manual-run body. */
export type ManualRunBody = z.output<typeof manualRunBodySchema>;
