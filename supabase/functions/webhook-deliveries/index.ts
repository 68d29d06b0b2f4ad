// The worker of the `webhook_deliveries` queue: signed completion webhooks, retried on the
// spec's schedule (see _shared/workflows/outbound/webhooks/worker-endpoint.ts and docs/webhooks.md).
import { deliveryWorker } from "../_shared/workflows/outbound/webhooks/worker-endpoint.ts";

Deno.serve(deliveryWorker());
