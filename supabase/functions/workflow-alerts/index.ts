// The worker of the `workflow_alerts` queue: fired alerts, e-mailed or POSTed signed to a webhook
// receiver (_shared/workflows/alerts/alert-delivery.ts). The queue poller (locally) or pg_cron +
// pg_net (hosted) POSTs {queue_name, batch_size, visibility_timeout} with the service-role key;
// every other caller is refused, since claiming hands over webhook secrets.
import { serviceRpc } from "../_shared/db/service-rpc.ts";
import { readJson, validate } from "../_shared/http/body.ts";
import { resolveCaller } from "../_shared/http/caller.ts";
import { HttpError } from "../_shared/http/errors.ts";
import { serveEndpoint } from "../_shared/http/routing.ts";
import { sendPortalEmail } from "../_shared/portal/mailer.ts";
import { guardedFetch } from "../_shared/workflows/outbound/guard.ts";
import { alertWorkerRequestSchema, drainAlerts } from "../_shared/workflows/alerts/alert-delivery.ts";
import { workflowErrors as errors, workflowLog } from "../_shared/workflows/workflow-errors.ts";

const log = workflowLog.with({ component: "workflow-alerts" });

Deno.serve(serveEndpoint({
  methods: ["POST"],
  errors,
  logger: workflowLog,
  async handle(request) {
    const caller = await resolveCaller(request, { errors });
    if (caller.kind !== "service" || !caller.verified) throw new HttpError(403, "FORBIDDEN", "The alerts worker is invoked with the service-role key");
    const body = validate(alertWorkerRequestSchema, await readJson(request, { errors, maxBytes: 4096, contentType: null }), "body", errors);
    const summary = await drainAlerts(
      { rpc: serviceRpc, sendEmail: (email) => sendPortalEmail(email), post: guardedFetch, log: (event, fields) => log.warn(event, fields) },
      { batchSize: body.batch_size, visibilitySeconds: body.visibility_timeout },
    );
    return Response.json(summary);
  },
}));
