import { z } from "zod";
import { formatBRL, formatDate, formatMonths } from "./format.ts";
import { escapeHtml, htmlDocument } from "../http/html.ts";

/** A row of public.get_proposal_for_approval: what the customer may see, and the token state. */
export const approvalSummarySchema = z.object({
  code: z.string(),
  status: z.enum(["pending", "approved", "rejected", "active", "cancelled"]),
  token_state: z.enum(["open", "expired", "used", "closed"]),
  company_name: z.string(),
  contact_name: z.string(),
  product_name: z.string(),
  product_description: z.string(),
  monthly_value: z.number(),
  contract_months: z.number().int(),
  total_value: z.number(),
  technician_name: z.string(),
  expires_at: z.string(),
  responded_at: z.string().nullable(),
});

/** The proposal summary the approval page shows. */
export type ApprovalSummary = z.infer<typeof approvalSummarySchema>;

/** Outcomes of public.respond_to_proposal. */
export const approvalOutcomeSchema = z.enum(["approved", "rejected", "unknown_token", "expired", "used", "closed", "email_mismatch", "invalid_action"]);

/** An HTML answer: the status it goes with and the document. */
export interface ApprovalPage {
  status: number;
  html: string;
}

/** Why the customer cannot answer through this link. */
export type ApprovalProblem =
  | "missing_token"
  | "unknown_token"
  | "expired"
  | "used"
  | "closed"
  | "method_not_allowed"
  | "unsupported_media_type"
  | "too_large"
  | "rate_limited"
  | "unavailable";


function summaryList(summary: ApprovalSummary): string {
  const items: [string, string][] = [
    ["Cliente", summary.company_name],
    ["Contato", summary.contact_name],
    ["Produto", summary.product_name],
    ...(summary.product_description ? [["Descrição", summary.product_description] as [string, string]] : []),
    ["Valor mensal", formatBRL(summary.monthly_value)],
    ["Prazo do contrato", formatMonths(summary.contract_months)],
    ["Valor total", formatBRL(summary.total_value)],
    ["Técnico responsável", summary.technician_name || "—"],
    ["Link válido até", formatDate(summary.expires_at)],
  ];
  return `<dl>${items.map(([term, value]) => `<dt>${escapeHtml(term)}</dt><dd>${escapeHtml(value)}</dd>`).join("")}</dl>`;
}

/**
 * The proposal summary and the answer form. The form posts back to the same link (the token in
 * the query), with the e-mail and the button pressed as `action`. `error` re-renders it after a
 * refused answer, announced to screen readers and tied to the field.
 */
export function renderApprovalForm(summary: ApprovalSummary, token: string, options: { status?: number; email?: string; error?: string } = {}): ApprovalPage {
  const error = options.error
    ? `<p class="alert" role="alert" id="erro">${escapeHtml(options.error)}</p>`
    : "";
  const describedBy = options.error ? "email-ajuda erro" : "email-ajuda";
  const body = `<h1>Proposta ${escapeHtml(summary.code)}</h1>
<p>${escapeHtml(summary.technician_name || "Nossa equipe")} enviou esta proposta para ${escapeHtml(summary.company_name)}. Confira os dados e responda abaixo.</p>
<section aria-labelledby="resumo">
<h2 id="resumo">Resumo da proposta</h2>
${summaryList(summary)}
</section>
<form method="post" action="?token=${escapeHtml(encodeURIComponent(token))}" aria-labelledby="resposta">
<h2 id="resposta">Sua resposta</h2>
${error}
<label for="email">E-mail do cliente</label>
<p class="hint" id="email-ajuda">Digite o e-mail cadastrado para ${escapeHtml(summary.company_name)}, para confirmarmos que a resposta é sua.</p>
<input id="email" name="email" type="email" required autocomplete="email" maxlength="254" value="${escapeHtml(options.email ?? "")}" aria-describedby="${describedBy}"${options.error ? ' aria-invalid="true"' : ""}>
<div class="actions">
<button type="submit" name="action" value="approve" class="approve">Aprovar proposta</button>
<button type="submit" name="action" value="reject" class="reject">Recusar proposta</button>
</div>
</form>`;
  return { status: options.status ?? 200, html: htmlDocument("pt-BR", `Proposta ${summary.code}`, body) };
}

/** The confirmation after the customer approved or rejected. */
export function renderAnswered(outcome: "approved" | "rejected", code: string, technicianNotified: boolean): ApprovalPage {
  const approved = outcome === "approved";
  // Says the technician was told only when the notice really went out; the answer is recorded
  // either way, and the technician sees it in the portal.
  const told = technicianNotified ? "O técnico responsável foi avisado por e-mail" : "Sua resposta ficou registrada para o técnico responsável";
  const body = `<h1>${approved ? "Proposta aprovada" : "Proposta recusada"}</h1>
<p class="ok" role="status">${approved
    ? `Obrigado! A proposta ${escapeHtml(code)} foi aprovada. ${told} e ele entrará em contato para os próximos passos.`
    : `A proposta ${escapeHtml(code)} foi recusada. Obrigado por responder. ${told}.`}</p>
<p class="muted">Você já pode fechar esta página.</p>`;
  return { status: 200, html: htmlDocument("pt-BR", approved ? "Proposta aprovada" : "Proposta recusada", body) };
}

function answeredVerb(summary: ApprovalSummary | undefined): string {
  return summary?.status === "rejected" ? "recusada" : "aprovada";
}

/** A page explaining why this link cannot be answered, with the HTTP status that says the same. */
export function renderProblem(problem: ApprovalProblem, summary?: ApprovalSummary): ApprovalPage {
  const pages: Record<ApprovalProblem, { status: number; title: string; text: string }> = {
    missing_token: {
      status: 400,
      title: "Link incompleto",
      text: "Este link de aprovação está incompleto. Abra o link exatamente como recebido no e-mail ou peça um novo ao técnico responsável.",
    },
    unknown_token: {
      status: 404,
      title: "Proposta não encontrada",
      text: "Não encontramos uma proposta para este link. Confira se o endereço está completo ou peça um novo link ao técnico responsável.",
    },
    expired: {
      status: 410,
      title: "Link expirado",
      text: `O prazo para responder${summary ? ` à proposta ${summary.code}` : ""} terminou${summary ? ` em ${formatDate(summary.expires_at)}` : ""}. Peça ao técnico responsável uma nova proposta.`,
    },
    used: {
      status: 409,
      title: "Proposta já respondida",
      text: `Esta proposta${summary ? ` (${summary.code})` : ""} já foi ${answeredVerb(summary)}${summary?.responded_at ? ` em ${formatDate(summary.responded_at)}` : ""}. O link só pode ser usado uma vez.`,
    },
    closed: {
      status: 409,
      title: "Proposta encerrada",
      text: `Esta proposta${summary ? ` (${summary.code})` : ""} foi cancelada e não aceita mais respostas. Fale com o técnico responsável se precisar de uma nova.`,
    },
    method_not_allowed: {
      status: 405,
      title: "Ação não permitida",
      text: "Este link só pode ser aberto no navegador ou respondido pelo formulário da página.",
    },
    too_large: {
      status: 413,
      title: "Envio grande demais",
      text: "A resposta enviada é maior do que o formulário desta página produz. Responda pelo formulário.",
    },
    unsupported_media_type: {
      status: 415,
      title: "Envio não reconhecido",
      text: "A resposta deve ser enviada pelo formulário desta página.",
    },
    rate_limited: {
      status: 429,
      title: "Muitas tentativas",
      text: "Recebemos muitos acessos da sua conexão em pouco tempo. Aguarde um minuto e abra o link novamente.",
    },
    unavailable: {
      status: 503,
      title: "Serviço indisponível",
      text: "Não conseguimos carregar a proposta agora. Tente novamente em alguns minutos.",
    },
  };
  const page = pages[problem];
  return { status: page.status, html: htmlDocument("pt-BR", page.title, `<h1>${escapeHtml(page.title)}</h1>\n<p class="alert" role="alert">${escapeHtml(page.text)}</p>`) };
}
