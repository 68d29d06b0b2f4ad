// The worker of the `workflow_trace_exports` queue: sends finished runs' spans to their workspace's
// OTLP/HTTP collector in batches, with retries and a cap (_shared/workflows/tracing/export-worker.ts,
// docs/tracing.md). Invoked by the queue poller (locally) or its pg_cron job (hosted) with the
// service-role key; nobody else may run it, as each claimed run carries its exporter's headers.
import { z } from "zod";
import { serviceRpc } from "../_shared/db/service-rpc.ts";
import { readJson, validate } from "../_shared/http/body.ts";
import { resolveCaller } from "../_shared/http/caller.ts";
import { HttpError } from "../_shared/http/errors.ts";
import { serveEndpoint } from "../_shared/http/routing.ts";
import { workflowErrors as errors, workflowLog } from "../_shared/workflows/workflow-errors.ts";
import { EXPORT_TIMEOUT_MS, exportTraces } from "../_shared/workflows/tracing/export-worker.ts";

const invocation = z.object({
  queue_name: z.literal("workflow_trace_exports"),
  batch_size: z.number().int().min(1).max(1000),
  visibility_timeout: z.number().int().min(1).max(43_200),
});

Deno.serve(serveEndpoint({
  methods: ["POST"],
  errors,
  logger: workflowLog,
  async handle(request) {
    const caller = await resolveCaller(request, { errors });
    if (caller.kind !== "service") throw new HttpError(403, "FORBIDDEN", "Only the queue poller (the service role) runs the trace export worker");
    const { batch_size, visibility_timeout } = validate(invocation, await readJson(request, { errors, maxBytes: 4_096 }), "body", errors);
    // A claimed batch stays hidden for longer than its request may take, or it would be sent twice.
    const summary = await exportTraces({ rpc: serviceRpc, batchSize: batch_size, visibilitySeconds: Math.max(visibility_timeout, Math.ceil(EXPORT_TIMEOUT_MS / 1000) + 10) });
    return Response.json(summary);
  },
}));
