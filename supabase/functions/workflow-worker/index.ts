// The async worker of the workflow service (docs/workflows-api.md, "Async runs"): the queue poller
// (locally) or pg_cron + pg_net (hosted) POSTs {queue_name, batch_size, visibility_timeout} with
// the service-role key whenever the workflow_runs queue has visible messages; this claims, runs,
// heartbeats and finishes them (_shared/workflows/runs/async-worker.ts). Service role only.
import { readJson, validate } from "../_shared/http/body.ts";
import { resolveCaller } from "../_shared/http/caller.ts";
import { HttpError } from "../_shared/http/errors.ts";
import { serveEndpoint } from "../_shared/http/routing.ts";
import { workflowErrors as errors, workflowLog } from "../_shared/workflows/workflow-errors.ts";
import { defaultRunServices } from "../_shared/workflows/api/run-services.ts";
import { drainRunQueue } from "../_shared/workflows/runs/async-worker.ts";
import { parkAfterMs } from "../_shared/workflows/runs/durable-run.ts";
import { workerRequestSchema } from "../_shared/workflows/runs/worker-request.ts";
import { asyncRunTimeoutMs } from "../_shared/workflows/executor/time-budget.ts";

const log = workflowLog.with({ component: "workflow-worker" });

Deno.serve(serveEndpoint({
  methods: ["POST"],
  errors,
  logger: workflowLog,
  async handle(request) {
    const caller = await resolveCaller(request, { errors });
    if (caller.kind !== "service" || !caller.verified) throw new HttpError(403, "FORBIDDEN", "The workflow worker is invoked with the service-role key");
    const body = validate(workerRequestSchema, await readJson(request, { errors, maxBytes: 4096, contentType: null }), "body", errors);
    const services = defaultRunServices();
    const result = await drainRunQueue({
      call: services.call, cache: services.cache, files: services.files,
      runTimeoutMs: asyncRunTimeoutMs(), invocationBudgetMs: asyncRunTimeoutMs(), parkAfterMs: parkAfterMs(),
      log: (event, fields) => log.error(event, fields), cancelSignals: services.cancelSignals,
    }, { batchSize: body.batch_size, visibilitySeconds: body.visibility_timeout });
    return Response.json(result);
  },
}));
