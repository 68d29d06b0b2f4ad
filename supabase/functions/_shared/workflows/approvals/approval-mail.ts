/**
 * Approval e-mails (the `workflow-approval-mail` function, worker of the pgmq queue
 * `workflow_approval_mail`): the first request when an approval block opens, and each reminder.
 * claim_workflow_approval_mail hands over each message with fresh tokens for the approvers who have
 * not answered (the database keeps only their digests); each approver gets their own link through
 * Resend (portal/mailer.ts, locally the mail catcher). A message is deleted once every e-mail of
 * it went out; otherwise it comes back after its visibility timeout and is sent again with new
 * links (the newest e-mail's link is the one that works). Tokens are never logged.
 */
import { z } from "zod";
import { readEnv } from "../../config/env.ts";
import type { ServiceRpc } from "../../db/service-rpc.ts";
import { escapeHtml } from "../../http/html.ts";
import { tokenLink } from "../../http/token-link.ts";
import type { PortalEmail, SendResult } from "../../portal/mailer.ts";

/** The queue this worker drains. */
export const APPROVAL_MAIL_QUEUE = "workflow_approval_mail";

/** What the queue poller (or its pg_cron job) POSTs. */
export const approvalMailRequestSchema = z.object({
  queue_name: z.literal(APPROVAL_MAIL_QUEUE),
  batch_size: z.number().int().min(1).max(100),
  visibility_timeout: z.number().int().min(1).max(43_200),
});

/** The sender when WORKFLOW_EMAIL_FROM is unset (use a domain verified in Resend in production). */
export const DEFAULT_APPROVAL_FROM = "Orbita Workflows <workflows@orbita.local>";

const claimedMail = z.array(z.object({
  messageId: z.number().int(),
  kind: z.enum(["request", "reminder"]),
  workflowName: z.string(),
  blockName: z.string(),
  message: z.string(),
  expiresAt: z.string(),
  recipients: z.array(z.object({ email: z.string(), token: z.string() })),
}));

type ClaimedMail = z.infer<typeof claimedMail>[number];

/** The approval page's link for `token`: WORKFLOW_APPROVAL_URL when set, else the workflow-approval function. */
export function approvalPageLink(token: string): string {
  return tokenLink("workflow-approval", token, readEnv("WORKFLOW_APPROVAL_URL"));
}

/** One approver's e-mail. */
export function approvalEmail(mail: ClaimedMail, to: string, link: string): PortalEmail {
  const reminder = mail.kind === "reminder";
  const subject = `${reminder ? "Reminder: approval" : "Approval"} requested: ${mail.blockName} (${mail.workflowName})`;
  const until = new Date(mail.expiresAt).toUTCString();
  const note = reminder ? "This e-mail's link replaces the one sent earlier." : "The link works once, for you alone.";
  return {
    from: readEnv("WORKFLOW_EMAIL_FROM") || DEFAULT_APPROVAL_FROM,
    to: [to],
    subject,
    text: `${mail.message}\n\nApprove or reject before ${until}:\n${link}\n\n${note}`,
    html: `<p style="white-space:pre-wrap">${escapeHtml(mail.message)}</p><p><a href="${escapeHtml(link)}">Approve or reject</a> before ${escapeHtml(until)}.</p><p>${escapeHtml(note)}</p>`,
    tags: [{ name: "kind", value: `workflow_approval_${mail.kind}` }],
  };
}

/** What a drain did. */
export interface ApprovalMailSummary {
  messages: number;
  sent: number;
  failed: number;
}

/** Claims up to `batchSize` messages and sends their e-mails; failures are logged without the link. */
export async function drainApprovalMail(
  { rpc, send, log }: { rpc: ServiceRpc; send: (email: PortalEmail) => Promise<SendResult>; log: (event: string, fields: Record<string, unknown>) => void },
  { batchSize, visibilitySeconds }: { batchSize: number; visibilitySeconds: number },
): Promise<ApprovalMailSummary> {
  const mails = claimedMail.parse(await rpc("claim_workflow_approval_mail", { p_batch_size: batchSize, p_visibility_seconds: visibilitySeconds }));
  const summary: ApprovalMailSummary = { messages: mails.length, sent: 0, failed: 0 };
  const done: number[] = [];
  for (const mail of mails) {
    const results = await Promise.all(mail.recipients.map((recipient) => send(approvalEmail(mail, recipient.email, approvalPageLink(recipient.token)))));
    const failures = results.filter((result) => !result.ok);
    summary.sent += results.length - failures.length;
    summary.failed += failures.length;
    if (failures.length === 0) done.push(mail.messageId);
    else log("workflow_approval_mail_failed", { messageId: mail.messageId, failed: failures.length, error: failures[0].ok ? null : failures[0].message });
  }
  if (done.length > 0) await rpc("ack_workflow_approval_mail", { p_message_ids: done });
  return summary;
}
