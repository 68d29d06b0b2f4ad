// send-proposal-email: e-mails a pending proposal (HTML and text, the PDF attached, the approval
// link) through Resend; locally RESEND_BASE_URL points the real client at the mail catcher. Only
// the proposal's technician or an admin may send it, and only to the customer's e-mail on file:
// the link lets whoever holds it answer for the customer, so any other recipient is refused (422)
// rather than sent a copy (the caller's own copy, without the link, is generate-proposal-pdf's).
// POST {"proposalId": "<uuid>", "recipientEmail": "<email>"} → 200 {"id", "proposalId", "recipientEmail"}.
import { createServiceRoleClient } from "../_shared/db/supabase-clients.ts";
import { HttpError } from "../_shared/http/errors.ts";
import { approvalLink } from "../_shared/portal/approval-link.ts";
import { requireCaller } from "../_shared/portal/caller.ts";
import { jsonResponse } from "../_shared/portal/errors.ts";
import { readJsonBody, servePortalFunction } from "../_shared/portal/http.ts";
import { loadProposalForCaller } from "../_shared/portal/proposal-document.ts";
import { sendPortalEmail } from "../_shared/portal/mailer.ts";
import { buildProposalEmail, isCustomerAddress } from "../_shared/portal/proposal-email.ts";
import { renderProposalPdf } from "../_shared/portal/proposal-pdf.ts";
import { sendEmailBodySchema } from "../_shared/portal/schemas.ts";

Deno.serve(servePortalFunction("send-proposal-email", ["POST"], async (request, log) => {
  const caller = await requireCaller(request);
  const { proposalId, recipientEmail } = await readJsonBody(request, sendEmailBodySchema);
  const service = createServiceRoleClient();
  const proposal = await loadProposalForCaller(caller, proposalId);
  if (proposal.status !== "pending") {
    throw new HttpError(409, "proposal_not_pending", `Proposal ${proposal.code} is ${proposal.status}: only pending proposals are sent for approval`);
  }
  if (new Date(proposal.approval_token_expires_at) <= new Date()) {
    throw new HttpError(409, "approval_link_expired", `The approval link of proposal ${proposal.code} has expired`);
  }
  const customerEmail = proposal.customers.email;
  if (!isCustomerAddress(proposal, recipientEmail)) {
    throw new HttpError(422, "recipient_not_customer", `Proposal ${proposal.code} carries its approval link, so it is sent only to the customer's e-mail on file, ${customerEmail}`, [
      { path: "recipientEmail", message: `must be the customer's e-mail on file, ${customerEmail}` },
    ]);
  }

  // Only the token's digest is stored, so each sending issues a new one (the previous link stops
  // working): the clear token goes into this message and nowhere else.
  const { data: token, error: issueError } = await service.rpc("issue_approval_token", { _proposal_id: proposal.id });
  if (issueError || typeof token !== "string") {
    // A concurrent answer or cancellation between the checks above and here.
    if (issueError?.code === "P0001") throw new HttpError(409, "proposal_not_pending", issueError.message);
    throw new HttpError(502, "database_error", issueError?.message ?? "no token issued");
  }
  const link = approvalLink(token);
  const email = buildProposalEmail(proposal, link);
  const pdf = await renderProposalPdf(proposal, link);
  const sent = await sendPortalEmail({
    to: [customerEmail],
    subject: email.subject,
    html: email.html,
    text: email.text,
    attachments: [{ filename: `${proposal.code}.pdf`, content: pdf, contentType: "application/pdf" }],
    tags: [{ name: "proposal_code", value: proposal.code }],
  });
  if (!sent.ok) {
    log.error("proposal_email_failed", { proposalId, reason: sent.message });
    throw new HttpError(502, "email_failed", `The e-mail could not be sent: ${sent.message}`);
  }
  log.info("proposal_email_sent", { proposalId, emailId: sent.id });
  return jsonResponse({ id: sent.id, proposalId: proposal.id, recipientEmail: customerEmail });
}));
