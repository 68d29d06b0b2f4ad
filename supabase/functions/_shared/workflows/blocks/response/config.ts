/** Response config: the status, headers and body a run answers with. */
import { z } from "zod";
import { numberOrTemplate } from "../config-parts.ts";

/** The config of a `response` block. */
export const responseConfigSchema = z
  .object({
    status: numberOrTemplate(z.number().int().min(100).max(599)).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    body: z.unknown().optional(),
  })
  .strict();
