/**
 * The `workflow-approval` function: an approver's link. GET ?token=… renders the approval (message,
 * fields) and its form; POST ?token=… with the form (application/x-www-form-urlencoded `email`,
 * `decision` approve | reject, `comment`, `field.<name>`) records the answer when the e-mail is the
 * approver's (respond_workflow_approval: the token is matched by its SHA-256 digest through a unique
 * index, so no comparison of secrets happens in this code, and a link answers once). verify_jwt is
 * off: the token is the credential. Every answer is a page: 200 form or confirmation; 400 missing
 * token or an incomplete form; 403 an e-mail that is not the approver's; 404 unknown token (or one
 * a newer e-mail replaced); 405 another method; 409 a used link or a closed approval; 410 expired;
 * 413 a body far larger than the form; 415 not a form; 503 outage. The token is never logged: the
 * logger keeps the path only.
 */
import { z } from "zod";
import { readForm, readQuery, validate } from "../../http/body.ts";
import { HttpError, type Problem, type ServiceErrors } from "../../http/errors.ts";
import { TOKEN_PAGE_HEADERS } from "../../http/html.ts";
import { serveEndpoint } from "../../http/routing.ts";
import type { ServiceRpc } from "../../db/service-rpc.ts";
import { workflowLog } from "../workflow-errors.ts";
import { type ApprovalView, approvalViewSchema, type HtmlPage, type LinkProblem, renderAnswered, renderApprovalForm, renderProblem, typedFieldValues } from "./approval-page.ts";

const querySchema = z.object({ token: z.string().min(1).max(200) });

const respondAnswer = z.object({
  outcome: z.enum(["recorded", "unknown_token", "used", "expired", "closed", "email_mismatch", "invalid_decision", "invalid_fields"]),
  decision: z.string().nullish(),
  problem: z.string().optional(),
});

/** The largest form accepted: an e-mail, a comment and ten fields of 2,000 characters, encoded. */
const MAX_FORM_BYTES = 128 * 1024;

function html(page: HtmlPage, headers: Record<string, string> = {}): Response {
  return new Response(page.html, { status: page.status, headers: { ...TOKEN_PAGE_HEADERS, ...headers } });
}

function pageError(problem: LinkProblem): HttpError {
  return new HttpError(renderProblem(problem).status, problem, problem);
}

/** The toolkit's problems as pages (a bad token is the "incomplete link" page). */
const pageErrors: ServiceErrors = {
  describe(problem: Problem): HttpError {
    switch (problem.kind) {
      case "method_not_allowed":
        return pageError("method_not_allowed");
      case "unsupported_media_type":
        return pageError("unsupported_media_type");
      case "body_too_large":
        return pageError("too_large");
      case "unstorable_text":
      case "invalid_input":
        return pageError("missing_token");
      default:
        return pageError("unavailable");
    }
  },
  render: (error) => html(renderProblem(error.code as LinkProblem), error.headers),
};

async function viewOf(rpc: ServiceRpc, token: string): Promise<ApprovalView | null> {
  return approvalViewSchema.nullable().parse(await rpc("workflow_approval_for_token", { p_token: token }));
}

async function formOrProblem(rpc: ServiceRpc, token: string): Promise<HtmlPage> {
  const view = await viewOf(rpc, token);
  if (!view) return renderProblem("unknown_token");
  return view.state === "open" ? renderApprovalForm(view, token) : renderProblem(view.state);
}

async function answer(rpc: ServiceRpc, token: string, request: Request): Promise<HtmlPage> {
  const form = await readForm(request, { errors: pageErrors, maxBytes: MAX_FORM_BYTES });
  const view = await viewOf(rpc, token);
  if (!view) return renderProblem("unknown_token");
  if (view.state !== "open") return renderProblem(view.state);
  const again = (status: number, error: string) => renderApprovalForm(view, token, { status, values: form, error });
  const decision = form.decision;
  if (!form.email?.trim() || (decision !== "approve" && decision !== "reject")) return again(400, "Type your e-mail address and choose approve or reject.");
  const fields = typedFieldValues(view.fields, form);
  if (typeof fields === "string") return again(400, fields);
  const result = respondAnswer.parse(await rpc("respond_workflow_approval", {
    p_token: token, p_email: form.email, p_decision: decision, p_comment: form.comment ?? "", p_fields: fields,
  }));
  switch (result.outcome) {
    case "recorded":
      workflowLog.info("workflow_approval_answered", { answer: decision, decided: result.decision ?? null });
      return renderAnswered(decision, result.decision ?? null);
    case "email_mismatch":
      return again(403, "That is not the e-mail address this link was sent to.");
    case "invalid_fields":
    case "invalid_decision":
      return again(400, result.problem ?? "Choose approve or reject.");
    default:
      return renderProblem(result.outcome);
  }
}

/** The request handler of the `workflow-approval` function. */
export function approvalPageEndpoint(rpc: ServiceRpc): (request: Request) => Promise<Response> {
  return serveEndpoint({
    methods: ["GET", "HEAD", "POST"],
    errors: pageErrors,
    logger: workflowLog.with({ function: "workflow-approval" }),
    async handle(request) {
      const { token } = validate(querySchema, readQuery(request, pageErrors), "query", pageErrors);
      return html(request.method === "POST" ? await answer(rpc, token, request) : await formOrProblem(rpc, token));
    },
  });
}
