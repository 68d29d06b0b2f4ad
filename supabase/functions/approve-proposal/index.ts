// approve-proposal: the customer's approval link. GET ?token=… renders the proposal and a form
// (Portuguese, no JavaScript); POST ?token=… with application/x-www-form-urlencoded `email` and
// `action` (approve | reject) answers it when the e-mail is the customer's. verify_jwt is off: the
// token is the credential, checked by the security-definer functions get_proposal_for_approval and
// respond_to_proposal, which this function calls as an anonymous client. The service role is used
// for one thing only, after an answer is recorded: reading the technician's e-mail to tell them
// (a failed notice is logged and the page says so; the answer stands).
// Statuses: 200 form or confirmation; 400 missing token or incomplete form; 403 e-mail mismatch;
// 404 unknown token; 405 another method; 409 already answered or cancelled; 410 expired; 413 a body
// far larger than the form; 415 not a form; 429 the visitor spent their data-API budget (with
// Retry-After); 503 outage. Every answer is a page, errors included.
import { z } from "zod";
import { createServiceRoleClient } from "../_shared/db/supabase-clients.ts";
import { readForm, readQuery, validate } from "../_shared/http/body.ts";
import { HttpError, type Problem, type ServiceErrors } from "../_shared/http/errors.ts";
import { TOKEN_PAGE_HEADERS } from "../_shared/http/html.ts";
import { type Logger, requestLogger } from "../_shared/http/logger.ts";
import { serveEndpoint } from "../_shared/http/routing.ts";
import {
  type ApprovalPage,
  type ApprovalProblem,
  type ApprovalSummary,
  approvalOutcomeSchema,
  approvalSummarySchema,
  renderAnswered,
  renderApprovalForm,
  renderProblem,
} from "../_shared/portal/approval-page.ts";
import { forwardedFor, portalLog } from "../_shared/portal/http.ts";
import { notifyTechnician } from "../_shared/portal/technician-notice.ts";
import { approvalFormSchema, approvalQuerySchema } from "../_shared/portal/schemas.ts";
import { createVisitor, type Visitor } from "../_shared/portal/visitor-client.ts";

const respondResultSchema = z.object({
  outcome: approvalOutcomeSchema,
  proposal_code: z.string().nullable(),
  proposal_status: z.string().nullable(),
});

const MESSAGES = {
  incomplete: "Informe o e-mail do cliente e escolha aprovar ou recusar.",
  mismatch: "O e-mail informado não é o cadastrado para esta proposta. Confira e tente de novo.",
};

/** The largest form accepted: the page's form sends an e-mail address and a word. */
const MAX_FORM_BYTES = 16 * 1024;

function html(page: ApprovalPage, headers: Record<string, string> = {}): Response {
  return new Response(page.html, { status: page.status, headers: { ...TOKEN_PAGE_HEADERS, ...headers } });
}

/** An error answered with the page for `problem` (its code), e.g. 405 with Allow. */
function pageError(problem: ApprovalProblem | "incomplete_form"): HttpError {
  return new HttpError(problem === "incomplete_form" ? 400 : renderProblem(problem).status, problem, problem);
}

/**
 * The toolkit's problems as this function's pages. A bad token (missing, too long, holding a NUL)
 * is the "incomplete link" page; a bad form is shown again (answer() catches incomplete_form).
 * The HttpErrors thrown here carry their page's name as code (the Visitor's `rate_limited` too),
 * so render shows that page with the error's headers (Allow, Retry-After).
 */
const approvalErrors: ServiceErrors = {
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
        return pageError(problem.part === "query" ? "missing_token" : "incomplete_form");
      default:
        return pageError("unavailable");
    }
  },
  render: (error) => html(renderProblem(error.code === "incomplete_form" ? "missing_token" : (error.code as ApprovalProblem)), error.headers),
};

async function summaryFor(visitor: Visitor, token: string): Promise<ApprovalSummary | null> {
  const rows = z.array(approvalSummarySchema).parse(await visitor.call("get_proposal_for_approval", { _token: token }));
  return rows[0] ?? null;
}

/** The form for an open link, or the page saying why it cannot be answered. */
async function formOrProblem(visitor: Visitor, token: string, options: { status?: number; email?: string; error?: string } = {}): Promise<ApprovalPage> {
  const summary = await summaryFor(visitor, token);
  if (!summary) return renderProblem("unknown_token");
  if (summary.token_state !== "open") return renderProblem(summary.token_state, summary);
  return renderApprovalForm(summary, token, options);
}

async function answer(visitor: Visitor, token: string, request: Request, log: Logger): Promise<ApprovalPage> {
  let fields: Record<string, string>;
  try {
    fields = await readForm(request, { errors: approvalErrors, maxBytes: MAX_FORM_BYTES });
  } catch (error) {
    if (error instanceof HttpError && error.code === "incomplete_form") return await formOrProblem(visitor, token, { status: 400, error: MESSAGES.incomplete });
    throw error;
  }
  const email = fields.email ?? "";
  const form = approvalFormSchema.safeParse({ email, action: fields.action });
  if (!form.success) return await formOrProblem(visitor, token, { status: 400, email, error: MESSAGES.incomplete });

  const result = respondResultSchema.parse(await visitor.call("respond_to_proposal", { _token: token, _email: form.data.email, _action: form.data.action }));
  switch (result.outcome) {
    case "approved":
    case "rejected":
      log.info("proposal_answered", { code: result.proposal_code, outcome: result.outcome });
      return renderAnswered(result.outcome, result.proposal_code ?? "", await notifyTechnician(createServiceRoleClient(), result.proposal_code ?? "", result.outcome, log));
    case "email_mismatch":
      return await formOrProblem(visitor, token, { status: 403, email, error: MESSAGES.mismatch });
    case "invalid_action":
      return await formOrProblem(visitor, token, { status: 400, email, error: MESSAGES.incomplete });
    default:
      // unknown_token, expired, used or closed: the same page a GET would show now.
      return await formOrProblem(visitor, token);
  }
}

const logger = portalLog.with({ function: "approve-proposal" });

Deno.serve(serveEndpoint({
  methods: ["GET", "HEAD", "POST"],
  errors: approvalErrors,
  logger,
  async handle(request) {
    const { token } = validate(approvalQuerySchema, readQuery(request, approvalErrors), "query", approvalErrors);
    const visitor = createVisitor(forwardedFor(request));
    return html(request.method === "POST" ? await answer(visitor, token, request, requestLogger(logger, request)) : await formOrProblem(visitor, token));
  },
}));
