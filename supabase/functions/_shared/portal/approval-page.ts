import { z } from "zod";
import { formatBRL, formatDate, formatMonths } from "./format.ts";
import { escapeHtml } from "../http/html.ts";

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

const STYLE = `
body{margin:0;background:#f4f6f9;color:#1f2430;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
main{max-width:40rem;margin:2rem auto;padding:1.5rem 2rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.6rem;margin:.2rem 0 1rem}h2{font-size:1.2rem;margin:1.5rem 0 .5rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1rem;margin:0}dt{font-weight:600;color:#4a5160}dd{margin:0}
label{display:block;font-weight:600;margin-top:1rem}.hint{color:#4a5160;margin:.2rem 0 .4rem;font-size:.95rem}
input{font:inherit;width:100%;box-sizing:border-box;padding:.55rem .7rem;border:2px solid #6b7280;border-radius:6px}
.actions{display:flex;gap:.75rem;flex-wrap:wrap;margin-top:1.25rem}
button{font:inherit;font-weight:600;padding:.65rem 1.2rem;border-radius:6px;border:2px solid transparent;cursor:pointer}
.approve{background:#0b6b3a;color:#fff}.reject{background:#fff;color:#9b1c1c;border-color:#9b1c1c}
:focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}
.alert{border-left:4px solid #9b1c1c;background:#fdf2f2;padding:.6rem .9rem;margin:1rem 0}
.ok{border-left:4px solid #0b6b3a;background:#effaf3;padding:.6rem .9rem;margin:1rem 0}
.muted{color:#4a5160}`;

/** The common page frame: Portuguese, responsive, no scripts. */
function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="pt-BR">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · Orbita</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

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
  return { status: options.status ?? 200, html: layout(`Proposta ${summary.code}`, body) };
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
  return { status: 200, html: layout(approved ? "Proposta aprovada" : "Proposta recusada", body) };
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
  return { status: page.status, html: layout(page.title, `<h1>${escapeHtml(page.title)}</h1>\n<p class="alert" role="alert">${escapeHtml(page.text)}</p>`) };
}
