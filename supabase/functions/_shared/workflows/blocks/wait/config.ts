/** Wait config: how long, in which unit. */
import { z } from "zod";
import { numberOrTemplate, timeoutMs } from "../config-parts.ts";

/** The longest a Wait block may pause in process (Sim's limit); longer waits belong in a schedule. */
export const MAX_WAIT_MS = 5 * 60_000;

/** The config of a `wait` block. */
export const waitConfigSchema = z
  .object({
    amount: numberOrTemplate(z.number().min(0)),
    unit: z.enum(["ms", "seconds", "minutes"]),
    timeoutMs: timeoutMs(MAX_WAIT_MS + 60_000),
  })
  .strict();
