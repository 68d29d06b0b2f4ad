/**
 * The `webhook-deliveries` function: the worker of the pgmq queue `webhook_deliveries`, invoked by
 * the queue poller (locally) or its pg_cron job (hosted) with the service role key and
 * `{queue_name, batch_size, visibility_timeout}` (docs/platform.md, "Queue workers"). It drains
 * the queue (drain.ts) and answers what it did. Nobody but the service role may run it: each
 * claimed delivery carries its subscription's signing secret.
 */
import { z } from "zod";
import { type ServiceRpc, serviceRpc } from "../../../db/service-rpc.ts";
import { readJson, validate } from "../../../http/body.ts";
import { resolveCaller } from "../../../http/caller.ts";
import { HttpError } from "../../../http/errors.ts";
import { serveEndpoint } from "../../../http/routing.ts";
import { workflowErrors as errors, workflowLog } from "../../workflow-errors.ts";
import { type AttemptOptions, attemptDelivery } from "./deliver.ts";
import { drainDeliveries } from "./drain.ts";
import { deliverySettings } from "./settings.ts";

/** The queue this worker drains. */
export const DELIVERY_QUEUE = "webhook_deliveries";

/** What the poller sends. */
const invocation = z.object({
  queue_name: z.literal(DELIVERY_QUEUE),
  batch_size: z.number().int().min(1).max(1000),
  visibility_timeout: z.number().int().min(1).max(43_200),
});

/** Stop claiming after this long: within a minute, when hosted cron calls again, and far from the wall-clock limit. */
const BUDGET_MS = 50_000;
/** Stay for deliveries queued shortly after the queue ran dry. */
const IDLE_MS = 5_000;
const POLL_MS = 100;

/** What the endpoint is built from; tests may pass their own. */
export interface DeliveryWorkerOptions {
  rpc?: ServiceRpc;
  attempt?: Partial<AttemptOptions>;
}

/** The request handler of the `webhook-deliveries` function. */
export function deliveryWorker({ rpc = serviceRpc, attempt = {} }: DeliveryWorkerOptions = {}): (request: Request) => Promise<Response> {
  return serveEndpoint({
    methods: ["POST"],
    errors,
    logger: workflowLog,
    async handle(request) {
      const caller = await resolveCaller(request, { errors });
      if (caller.kind !== "service") throw new HttpError(403, "FORBIDDEN", "Only the queue poller (the service role) runs the delivery worker");
      const { batch_size, visibility_timeout } = validate(invocation, await readJson(request, { errors, maxBytes: 4_096 }), "body", errors);
      const settings = deliverySettings();
      const summary = await drainDeliveries({
        rpc,
        concurrency: batch_size,
        // A claimed delivery stays hidden for longer than its attempt can take, or it would be sent twice.
        visibilityTimeoutS: Math.max(visibility_timeout, Math.ceil(settings.timeoutMs / 1_000) + 10),
        budgetMs: BUDGET_MS,
        idleMs: IDLE_MS,
        pollMs: POLL_MS,
        attempt: (delivery) => attemptDelivery(delivery, { timeoutMs: settings.timeoutMs, timing: { scale: settings.retryScale }, ...attempt }),
        logger: workflowLog,
      });
      if (summary.attempts > 0) workflowLog.info("webhook_deliveries_drained", { ...summary });
      return Response.json(summary);
    },
  });
}
