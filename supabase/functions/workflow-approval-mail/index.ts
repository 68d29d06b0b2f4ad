// The worker of the `workflow_approval_mail` queue: approval blocks' e-mails, first requests and
// reminders, each approver's own link (_shared/workflows/approvals/approval-mail.ts). The queue
// poller (locally) or pg_cron + pg_net (hosted) POSTs {queue_name, batch_size, visibility_timeout}
// with the service-role key; every other caller is refused, since the e-mails carry fresh tokens.
import { serviceRpc } from "../_shared/db/service-rpc.ts";
import { readJson, validate } from "../_shared/http/body.ts";
import { resolveCaller } from "../_shared/http/caller.ts";
import { HttpError } from "../_shared/http/errors.ts";
import { serveEndpoint } from "../_shared/http/routing.ts";
import { sendPortalEmail } from "../_shared/portal/mailer.ts";
import { workflowErrors as errors, workflowLog } from "../_shared/workflows/workflow-errors.ts";
import { approvalMailRequestSchema, drainApprovalMail } from "../_shared/workflows/approvals/approval-mail.ts";

const log = workflowLog.with({ component: "workflow-approval-mail" });

Deno.serve(serveEndpoint({
  methods: ["POST"],
  errors,
  logger: workflowLog,
  async handle(request) {
    const caller = await resolveCaller(request, { errors });
    if (caller.kind !== "service" || !caller.verified) throw new HttpError(403, "FORBIDDEN", "The approval mailer is invoked with the service-role key");
    const body = validate(approvalMailRequestSchema, await readJson(request, { errors, maxBytes: 4096, contentType: null }), "body", errors);
    const summary = await drainApprovalMail(
      { rpc: serviceRpc, send: (email) => sendPortalEmail(email), log: (event, fields) => log.error(event, fields) },
      { batchSize: body.batch_size, visibilitySeconds: body.visibility_timeout },
    );
    if (summary.messages > 0) log.info("workflow_approval_mail_sent", { ...summary });
    return Response.json(summary);
  },
}));
