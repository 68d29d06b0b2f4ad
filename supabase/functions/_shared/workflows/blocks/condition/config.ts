/** Condition config: if / else if / else entries, each with a JavaScript expression. */
import { z } from "zod";
import { handleId, timeoutMs } from "../config-parts.ts";
import { MAX_FUNCTION_TIMEOUT_MS } from "../function/config.ts";

/** `condition-<id>`: followed when the Condition chose that condition. */
export const CONDITION_HANDLE_PREFIX = "condition-";

/** The config of a `condition` block. */
export const conditionConfigSchema = z
  .object({
    conditions: z
      .array(
        z
          .object({
            id: handleId,
            kind: z.enum(["if", "else if", "else"]),
            expression: z.string().optional(),
          })
          .strict(),
      )
      .min(1)
      .max(50),
    timeoutMs: timeoutMs(MAX_FUNCTION_TIMEOUT_MS),
  })
  .strict();
