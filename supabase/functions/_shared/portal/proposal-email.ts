import { formatBRL, formatCnpj, formatDate, formatMonths } from "./format.ts";
import { escapeHtml } from "../http/html.ts";
import type { ProposalDocument } from "./proposal-document.ts";

/** The proposal e-mail in both forms, ready for Resend. */
export interface ProposalEmail {
  subject: string;
  html: string;
  text: string;
}

/**
 * The e-mail that carries a proposal to the customer: the same facts as the PDF (attached
 * separately), and the approval link, in HTML and in plain text for clients that show no HTML.
 */
export function buildProposalEmail(proposal: ProposalDocument, approvalUrl: string): ProposalEmail {
  const { customers: customer, products: product, profiles: technician } = proposal;
  const facts: [string, string][] = [
    ["Cliente", `${customer.company_name} (CNPJ ${formatCnpj(customer.cnpj)})`],
    ["Produto", product.name],
    ["Valor mensal", formatBRL(proposal.monthly_value)],
    ["Prazo do contrato", formatMonths(proposal.contract_months)],
    ["Valor total", formatBRL(proposal.total_value)],
    ["Link válido até", formatDate(proposal.approval_token_expires_at)],
  ];
  const greeting = `Olá, ${customer.contact_name}!`;
  const intro = `${technician.full_name || "Nossa equipe"} preparou a proposta ${proposal.code} para ${customer.company_name}. O PDF com todos os detalhes está anexado.`;
  const instructions = "Para aprovar ou recusar, abra o link abaixo e confirme o e-mail do cliente:";

  const text = [
    greeting,
    "",
    intro,
    "",
    ...facts.map(([label, value]) => `${label}: ${value}`),
    "",
    instructions,
    approvalUrl,
    "",
    "Equipe Orbita",
  ].join("\n");

  const rows = facts
    .map(([label, value]) => `<tr><th scope="row" style="text-align:left;padding:4px 16px 4px 0;color:#555">${escapeHtml(label)}</th><td style="padding:4px 0">${escapeHtml(value)}</td></tr>`)
    .join("");
  const html = `<!doctype html>
<html lang="pt-BR">
<head><meta charset="utf-8"><title>Proposta ${escapeHtml(proposal.code)}</title></head>
<body style="font-family:Arial,Helvetica,sans-serif;color:#1f2430;line-height:1.5">
<p>${escapeHtml(greeting)}</p>
<p>${escapeHtml(intro)}</p>
<table role="presentation" style="border-collapse:collapse">${rows}</table>
<p>${escapeHtml(instructions)}</p>
<p><a href="${escapeHtml(approvalUrl)}" style="background:#0d5499;color:#fff;padding:10px 18px;border-radius:6px;text-decoration:none;display:inline-block">Ver e responder à proposta</a></p>
<p style="font-size:13px;color:#555">Se o botão não funcionar, copie este endereço no navegador:<br>${escapeHtml(approvalUrl)}</p>
<p>Equipe Orbita</p>
</body>
</html>`;

  return { subject: `Proposta ${proposal.code} – ${product.name}`, html, text };
}

/**
 * Whether `address` is the customer's e-mail on file, compared as the database stores it (lower
 * case). The proposal e-mail carries the approval link, so it goes to no other address.
 */
export function isCustomerAddress(proposal: ProposalDocument, address: string): boolean {
  return address.trim().toLowerCase() === proposal.customers.email.toLowerCase();
}
