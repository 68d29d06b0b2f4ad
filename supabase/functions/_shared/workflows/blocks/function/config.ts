/** Function config: the code, and its time and memory limits. */
import { z } from "zod";
import { timeoutMs } from "../config-parts.ts";

/** Longest run a Function block may ask for; the sandbox's own default is far lower. */
export const MAX_FUNCTION_TIMEOUT_MS = 60_000;

/** Largest heap a Function block may ask for, in MiB. */
export const MAX_FUNCTION_MEMORY_MB = 128;

/** The config of a `function` block. */
export const functionConfigSchema = z
  .object({
    code: z.string(),
    timeoutMs: timeoutMs(MAX_FUNCTION_TIMEOUT_MS),
    memoryLimitMb: z.number().int().min(1).max(MAX_FUNCTION_MEMORY_MB).optional(),
  })
  .strict();
