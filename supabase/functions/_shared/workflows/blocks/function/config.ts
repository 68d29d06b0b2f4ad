/** Function config: the code, and its time and memory limits. */
import { z } from "zod";
import { MAX_SANDBOX_MEMORY_BYTES, MAX_SANDBOX_TIMEOUT_MS } from "../../core/limits.ts";
import { timeoutMs } from "../config-parts.ts";

/** Longest run a Function block may ask for; the sandbox's own default is far lower. */
export const MAX_FUNCTION_TIMEOUT_MS = MAX_SANDBOX_TIMEOUT_MS;

/** Largest heap a Function block may ask for, in MiB. */
export const MAX_FUNCTION_MEMORY_MB = MAX_SANDBOX_MEMORY_BYTES / 1024 / 1024;

/** The config of a `function` block. */
export const functionConfigSchema = z
  .object({
    code: z.string(),
    timeoutMs: timeoutMs(MAX_FUNCTION_TIMEOUT_MS),
    memoryLimitMb: z.number().int().min(1).max(MAX_FUNCTION_MEMORY_MB).optional(),
  })
  .strict();
