/** What the queue poller POSTs to the workflow-worker function (platform.queue_workers' row). */
import { z } from "zod";

/** `{queue_name, batch_size, visibility_timeout}`; only the workflow_runs queue is this worker's. */
export const workerRequestSchema = z.object({
  queue_name: z.literal("workflow_runs"),
  batch_size: z.number().int().min(1).max(100),
  visibility_timeout: z.number().int().min(1).max(43_200),
});
