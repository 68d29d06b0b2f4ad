// approve-proposal: the customer's approval link. GET ?token=… renders the proposal and a form
// (Portuguese, no JavaScript); POST ?token=… with application/x-www-form-urlencoded `email` and
// `action` (approve | reject) answers it when the e-mail is the customer's. verify_jwt is off: the
// token is the credential, checked by the security-definer functions get_proposal_for_approval and
// respond_to_proposal, which this function calls as an anonymous client (no service role).
// Statuses: 200 form or confirmation; 400 missing token or incomplete form; 403 e-mail mismatch;
// 404 unknown token; 409 already answered or cancelled; 410 expired; 415 not a form; 503 outage.
import type { SupabaseClient } from "@supabase/supabase-js";
import { z } from "zod";
import { requireEnv } from "../_shared/env.ts";
import {
  type ApprovalPage,
  type ApprovalSummary,
  approvalOutcomeSchema,
  approvalSummarySchema,
  renderAnswered,
  renderApprovalForm,
  renderProblem,
} from "../_shared/portal/approval-page.ts";
import { forwardedFor } from "../_shared/portal/http.ts";
import { logEvent } from "../_shared/portal/log.ts";
import { approvalFormSchema, approvalQuerySchema } from "../_shared/portal/schemas.ts";
import { createCallerClient } from "../_shared/supabase-clients.ts";

const HEADERS = {
  "content-type": "text/html; charset=utf-8",
  // The token is in the URL: keep it out of caches, referrers and other sites' frames.
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

const respondResultSchema = z.object({
  outcome: approvalOutcomeSchema,
  proposal_code: z.string().nullable(),
  proposal_status: z.string().nullable(),
});

const MESSAGES = {
  incomplete: "Informe o e-mail do cliente e escolha aprovar ou recusar.",
  mismatch: "O e-mail informado não é o cadastrado para esta proposta. Confira e tente de novo.",
};

function html(page: ApprovalPage): Response {
  return new Response(page.html, { status: page.status, headers: HEADERS });
}

/** The anonymous client and the visitor it acts for. */
interface Visitor {
  client: SupabaseClient;
  address: string | null;
}

async function summaryFor({ client, address }: Visitor, token: string): Promise<ApprovalSummary | null> {
  const query = client.rpc("get_proposal_for_approval", { _token: token });
  const { data, error } = await (address ? query.setHeader("x-forwarded-for", address) : query);
  if (error) throw new Error(`get_proposal_for_approval failed: ${error.code} ${error.message}`);
  const rows = z.array(approvalSummarySchema).parse(data);
  return rows[0] ?? null;
}

/** The form for an open link, or the page saying why it cannot be answered. */
async function formOrProblem(visitor: Visitor, token: string, options: { status?: number; email?: string; error?: string } = {}): Promise<ApprovalPage> {
  const summary = await summaryFor(visitor, token);
  if (!summary) return renderProblem("unknown_token");
  if (summary.token_state !== "open") return renderProblem(summary.token_state, summary);
  return renderApprovalForm(summary, token, options);
}

async function answer(visitor: Visitor, token: string, request: Request): Promise<ApprovalPage> {
  if (!(request.headers.get("content-type") ?? "").toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    return renderProblem("unsupported_media_type");
  }
  const fields = new URLSearchParams(await request.text());
  const email = fields.get("email") ?? "";
  const form = approvalFormSchema.safeParse({ email, action: fields.get("action") ?? undefined });
  if (!form.success) return await formOrProblem(visitor, token, { status: 400, email, error: MESSAGES.incomplete });

  const query = visitor.client.rpc("respond_to_proposal", { _token: token, _email: form.data.email, _action: form.data.action });
  const { data, error } = await (visitor.address ? query.setHeader("x-forwarded-for", visitor.address) : query);
  if (error) throw new Error(`respond_to_proposal failed: ${error.code} ${error.message}`);
  const result = respondResultSchema.parse(data);
  switch (result.outcome) {
    case "approved":
    case "rejected":
      logEvent("info", "proposal_answered", { code: result.proposal_code, outcome: result.outcome });
      return renderAnswered(result.outcome, result.proposal_code ?? "");
    case "email_mismatch":
      return await formOrProblem(visitor, token, { status: 403, email, error: MESSAGES.mismatch });
    case "invalid_action":
      return await formOrProblem(visitor, token, { status: 400, email, error: MESSAGES.incomplete });
    default:
      // unknown_token, expired, used or closed: the same page a GET would show now.
      return await formOrProblem(visitor, token);
  }
}

Deno.serve(async (request) => {
  if (!["GET", "HEAD", "POST"].includes(request.method)) {
    return new Response("Method not allowed", { status: 405, headers: { allow: "GET, HEAD, POST" } });
  }
  const query = approvalQuerySchema.safeParse({ token: new URL(request.url).searchParams.get("token") ?? undefined });
  if (!query.success) return html(renderProblem("missing_token"));
  try {
    // An anonymous client: the approval functions are granted to anon, the token authorises.
    const visitor = { client: createCallerClient(`Bearer ${requireEnv("SUPABASE_ANON_KEY")}`), address: forwardedFor(request) };
    return html(request.method === "POST" ? await answer(visitor, query.data.token, request) : await formOrProblem(visitor, query.data.token));
  } catch (error) {
    logEvent("error", "approval_page_failed", { message: error instanceof Error ? error.message : String(error) });
    return html(renderProblem("unavailable"));
  }
});
