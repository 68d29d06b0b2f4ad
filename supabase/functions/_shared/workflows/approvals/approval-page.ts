/**
 * The workflow approval page (the `workflow-approval` function): what an approver sees when they
 * open their link — the message, the form fields, their e-mail to confirm, approve and reject — and
 * the pages saying why a link cannot answer. HTML without scripts, in the portal's frame
 * (http/html.ts); the token travels only in the form's own URL.
 */
import { z } from "zod";
import { escapeHtml, htmlDocument } from "../../http/html.ts";

/** An approval form field, as open_workflow_approval stored it. */
export const approvalFieldSchema = z.object({
  name: z.string(),
  label: z.string(),
  type: z.enum(["text", "number", "boolean"]),
  required: z.boolean().optional(),
});

/** What workflow_approval_for_token answers for a token some approver holds. */
export const approvalViewSchema = z.object({
  state: z.enum(["open", "used", "expired", "closed"]),
  workflowName: z.string(),
  blockName: z.string(),
  message: z.string(),
  fields: z.array(approvalFieldSchema),
  quorum: z.number().int(),
  approvers: z.number().int(),
  expiresAt: z.string(),
});

/** The page's view of an approval. */
export type ApprovalView = z.infer<typeof approvalViewSchema>;

/** An HTML answer and its status. */
export interface HtmlPage {
  status: number;
  html: string;
}

/** Why a link cannot answer (or the request was not one the page makes). */
export type LinkProblem = "missing_token" | "unknown_token" | "used" | "expired" | "closed" | "method_not_allowed" | "unsupported_media_type" | "too_large" | "unavailable";

const LANG = "en";

function fieldInput(field: z.infer<typeof approvalFieldSchema>, value: string | undefined): string {
  const id = `field-${escapeHtml(field.name)}`;
  const label = `<label for="${id}">${escapeHtml(field.label)}${field.required ? " (required)" : ""}</label>`;
  if (field.type === "boolean") {
    return `<label for="${id}"><input id="${id}" name="field.${escapeHtml(field.name)}" type="checkbox" value="true"${value === "true" ? " checked" : ""}> ${escapeHtml(field.label)}</label>`;
  }
  const type = field.type === "number" ? ' type="number" step="any"' : ' type="text" maxlength="2000"';
  return `${label}<input id="${id}" name="field.${escapeHtml(field.name)}"${type}${field.required ? " required" : ""} value="${escapeHtml(value ?? "")}">`;
}

/**
 * The approval form. It posts back to the link itself (the token in the query) with `email`,
 * `decision` (the button pressed), `comment` and `field.<name>` values; `error` re-renders it after a
 * refused answer, with what was typed.
 */
export function renderApprovalForm(view: ApprovalView, token: string, options: { status?: number; values?: Record<string, string>; error?: string } = {}): HtmlPage {
  const values = options.values ?? {};
  const error = options.error ? `<p class="alert" role="alert" id="problem">${escapeHtml(options.error)}</p>` : "";
  const fields = view.fields.map((field) => fieldInput(field, values[`field.${field.name}`])).join("\n");
  const body = `<h1>Approval requested: ${escapeHtml(view.blockName)}</h1>
<p class="muted">Workflow ${escapeHtml(view.workflowName)} · ${view.quorum} of ${view.approvers} approver${view.approvers === 1 ? "" : "s"} must approve · open until ${escapeHtml(new Date(view.expiresAt).toUTCString())}</p>
<section aria-labelledby="message"><h2 id="message">Message</h2><p class="message">${escapeHtml(view.message)}</p></section>
<form method="post" action="?token=${escapeHtml(encodeURIComponent(token))}" aria-labelledby="answer">
<h2 id="answer">Your answer</h2>
${error}
<label for="email">Your e-mail address</label>
<p class="hint" id="email-hint">The address this link was sent to, to confirm the answer is yours.</p>
<input id="email" name="email" type="email" required autocomplete="email" maxlength="254" value="${escapeHtml(values.email ?? "")}" aria-describedby="email-hint${options.error ? " problem" : ""}">
${fields}
<label for="comment">Comment (optional)</label>
<textarea id="comment" name="comment" maxlength="2000" rows="3">${escapeHtml(values.comment ?? "")}</textarea>
<div class="actions">
<button type="submit" name="decision" value="approve" class="approve">Approve</button>
<button type="submit" name="decision" value="reject" class="reject">Reject</button>
</div>
</form>`;
  return { status: options.status ?? 200, html: htmlDocument(LANG, `Approval: ${view.blockName}`, body) };
}

/** The confirmation of a recorded answer; `decision` when this answer decided the approval. */
export function renderAnswered(answer: "approve" | "reject", decision: string | null): HtmlPage {
  const title = answer === "approve" ? "You approved" : "You rejected";
  const outcome = decision === null ? "The approval waits for the other approvers." : `This decided the approval: ${decision}. The workflow goes on.`;
  return { status: 200, html: htmlDocument(LANG, title, `<h1>${title}</h1>\n<p class="ok" role="status">Your answer is recorded. ${escapeHtml(outcome)}</p>\n<p class="muted">You can close this page.</p>`) };
}

const PROBLEMS: Record<LinkProblem, { status: number; title: string; text: string }> = {
  missing_token: { status: 400, title: "Incomplete link", text: "This approval link is incomplete. Open it exactly as the e-mail has it." },
  unknown_token: { status: 404, title: "Link not found", text: "No approval waits on this link. A newer e-mail (a reminder) replaces the link of the earlier ones: use the newest." },
  used: { status: 409, title: "Link already used", text: "This link has already been used to answer; each link answers once." },
  expired: { status: 410, title: "Link expired", text: "The time to answer this approval is over; its default outcome applies." },
  closed: { status: 409, title: "Approval closed", text: "This approval has been decided (or its run has ended) and takes no more answers." },
  method_not_allowed: { status: 405, title: "Not allowed", text: "Open this link in a browser and answer with the page's form." },
  unsupported_media_type: { status: 415, title: "Not a form", text: "Answer with the page's form." },
  too_large: { status: 413, title: "Too large", text: "The answer is larger than the page's form sends." },
  unavailable: { status: 503, title: "Unavailable", text: "The approval cannot be loaded right now. Try again in a few minutes." },
};

/** The page saying why the link cannot answer, with the matching status. */
export function renderProblem(problem: LinkProblem): HtmlPage {
  const page = PROBLEMS[problem];
  return { status: page.status, html: htmlDocument(LANG, page.title, `<h1>${escapeHtml(page.title)}</h1>\n<p class="alert" role="alert">${escapeHtml(page.text)}</p>`) };
}

/**
 * The form's `field.<name>` values as the approval's typed fields: numbers parsed, a checkbox is
 * true when ticked and false otherwise, empty text left out. A number that is not one is an error
 * message; the database checks the rest (respond_workflow_approval).
 */
export function typedFieldValues(fields: ApprovalView["fields"], form: Record<string, string>): Record<string, unknown> | string {
  const values: Record<string, unknown> = {};
  for (const field of fields) {
    const raw = form[`field.${field.name}`];
    if (field.type === "boolean") values[field.name] = raw === "true";
    else if (raw === undefined || raw.trim() === "") continue;
    else if (field.type === "number") {
      const number = Number(raw);
      if (!Number.isFinite(number)) return `${field.label} must be a number`;
      values[field.name] = number;
    } else values[field.name] = raw;
  }
  return values;
}
