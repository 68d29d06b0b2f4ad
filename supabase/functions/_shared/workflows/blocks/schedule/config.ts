/** Schedule config: a cron expression and its timezone. */
import { z } from "zod";

/** The config of a `schedule` block. */
export const scheduleConfigSchema = z
  .object({
    // Five cron fields (minute resolution, as pg_cron); the scheduler itself checks them in full.
    cronExpression: z.string().regex(/^\s*\S+(\s+\S+){4}\s*$/),
    timezone: z.string().min(1).optional(),
  })
  .strict();
