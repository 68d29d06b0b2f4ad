import type { SupabaseClient } from "@supabase/supabase-js";
import type { Database } from "../db/database.types.ts";
import { z } from "zod";
import { escapeHtml } from "../http/html.ts";
import type { Logger } from "../http/logger.ts";
import { formatBRL } from "./format.ts";
import { sendPortalEmail } from "./mailer.ts";
import type { ProposalEmail } from "./proposal-email.ts";

/** What the technician's notice says about an answered proposal. */
export const noticeFactsSchema = z.object({
  code: z.string(),
  total_value: z.number(),
  customers: z.object({ company_name: z.string(), contact_name: z.string() }),
  products: z.object({ name: z.string() }),
  profiles: z.object({ full_name: z.string(), email: z.string().nullable() }),
});

/** An answered proposal with its customer, product and technician, as the notice takes it. */
export type NoticeFacts = z.infer<typeof noticeFactsSchema>;

/** The customer's answer, as respond_to_proposal reports it. */
export type Answer = "approved" | "rejected";

/**
 * The e-mail telling a proposal's technician that the customer answered through the link, in
 * HTML and plain text. It carries no approval link: the proposal is answered and the link is dead.
 */
export function buildTechnicianNotice(facts: NoticeFacts, answer: Answer): ProposalEmail {
  const { customers: customer, products: product, profiles: technician } = facts;
  const verb = answer === "approved" ? "aprovou" : "recusou";
  const next = answer === "approved"
    ? "Um administrador pode agora ativá-la no portal (o pedido e a sua comissão são criados na ativação)."
    : "A proposta está encerrada; se o cliente quiser outra condição, crie uma nova proposta.";
  const greeting = `Olá, ${technician.full_name || "técnico"}!`;
  const summary = `${customer.contact_name}, de ${customer.company_name}, ${verb} a proposta ${facts.code} (${product.name}, valor total ${formatBRL(facts.total_value)}) pelo link de aprovação.`;
  const text = [greeting, "", summary, "", next, "", "Equipe Orbita"].join("\n");
  const html = `<!doctype html>
<html lang="pt-BR">
<head><meta charset="utf-8"><title>Proposta ${escapeHtml(facts.code)}</title></head>
<body style="font-family:Arial,Helvetica,sans-serif;color:#1f2430;line-height:1.5">
<p>${escapeHtml(greeting)}</p>
<p>${escapeHtml(summary)}</p>
<p>${escapeHtml(next)}</p>
<p>Equipe Orbita</p>
</body>
</html>`;
  return { subject: `Proposta ${facts.code} ${answer === "approved" ? "aprovada" : "recusada"} pelo cliente`, html, text };
}

const SELECT = "code, total_value, customers (company_name, contact_name), products (name), profiles (full_name, email)";

/**
 * Tells the proposal's technician, by e-mail through the same Resend path as the proposal e-mail,
 * that the customer answered. Returns whether the notice went out, and never throws: the answer
 * is already committed when this runs, so a failed notice (no address, a database or Resend error,
 * no answer within 5 s) is logged and must not turn the customer's confirmation into an error.
 * Reads with the service role because the approval page's visitor is anonymous and the
 * technician's e-mail is no business of theirs.
 */
export async function notifyTechnician(service: SupabaseClient<Database>, code: string, answer: Answer, log: Logger): Promise<boolean> {
  try {
    const { data, error } = await service.from("proposals").select(SELECT).eq("code", code).maybeSingle();
    if (error || !data) {
      log.error("technician_notice_failed", { code, reason: error?.message ?? "proposal not found" });
      return false;
    }
    const facts = noticeFactsSchema.parse(data);
    if (facts.profiles.email === null) {
      log.warn("technician_notice_failed", { code, reason: "the technician has no e-mail" });
      return false;
    }
    const notice = buildTechnicianNotice(facts, answer);
    const sent = await sendPortalEmail({
      to: [facts.profiles.email],
      subject: notice.subject,
      html: notice.html,
      text: notice.text,
      tags: [{ name: "proposal_code", value: facts.code }, { name: "notice", value: `proposal_${answer}` }],
    }, 5_000);
    if (!sent.ok) {
      log.error("technician_notice_failed", { code, reason: sent.message });
      return false;
    }
    log.info("technician_notified", { code, answer, emailId: sent.id });
    return true;
  } catch (error) {
    log.error("technician_notice_failed", { code, reason: error instanceof Error ? error.message : String(error) });
    return false;
  }
}
