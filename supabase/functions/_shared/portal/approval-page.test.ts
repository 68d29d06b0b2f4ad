import { describe, expect, it } from "vitest";
import { type ApprovalSummary, renderAnswered, renderApprovalForm, renderProblem } from "./approval-page.ts";

const summary: ApprovalSummary = {
  code: "PROP-202611-001",
  status: "pending",
  token_state: "open",
  company_name: "Padaria <Pão> Dourado",
  contact_name: "Marcos Pereira",
  product_name: "Google Workspace Business Starter",
  product_description: "E-mail profissional",
  monthly_value: 149.9,
  contract_months: 12,
  total_value: 1798.8,
  technician_name: "Ana Souza",
  expires_at: "2026-12-21T12:00:00Z",
  responded_at: null,
};

describe("renderApprovalForm", () => {
  const page = renderApprovalForm(summary, "tok/en+1");

  it("is a Portuguese page with the summary in BRL", () => {
    expect(page.status).toBe(200);
    expect(page.html).toContain('<html lang="pt-BR">');
    expect(page.html).toContain("<dt>Valor mensal</dt><dd>R$ 149,90</dd>");
    expect(page.html).toContain("<dt>Prazo do contrato</dt><dd>12 meses</dd>");
    expect(page.html).toContain("<dt>Valor total</dt><dd>R$ 1.798,80</dd>");
  });
  it("escapes what the technician typed", () => {
    expect(page.html).toContain("Padaria &lt;Pão&gt; Dourado");
    expect(page.html).not.toContain("<Pão>");
  });
  it("posts e-mail and action back to the same link, without scripts", () => {
    expect(page.html).toContain('<form method="post" action="?token=tok%2Fen%2B1"');
    expect(page.html).toContain('<button type="submit" name="action" value="approve"');
    expect(page.html).toContain('<button type="submit" name="action" value="reject"');
    expect(page.html).not.toContain("<script");
  });
  it("labels the e-mail field and describes it", () => {
    expect(page.html).toContain('<label for="email">E-mail do cliente</label>');
    expect(page.html).toMatch(/<input id="email" name="email" type="email" required[^>]*aria-describedby="email-ajuda"/);
  });
  it("announces an error and ties it to the field when re-rendered", () => {
    const again = renderApprovalForm(summary, "t", { status: 403, email: "x@y.test", error: "O e-mail não confere." });
    expect(again.status).toBe(403);
    expect(again.html).toContain('<p class="alert" role="alert" id="erro">O e-mail não confere.</p>');
    expect(again.html).toContain('aria-describedby="email-ajuda erro" aria-invalid="true"');
    expect(again.html).toContain('value="x@y.test"');
  });
});

describe("renderAnswered", () => {
  it("confirms an approval or a rejection", () => {
    expect(renderAnswered("approved", "PROP-1", true).html).toContain("<h1>Proposta aprovada</h1>");
    expect(renderAnswered("rejected", "PROP-1", true).html).toContain("<h1>Proposta recusada</h1>");
  });
  it("says the technician was told only when the notice went out", () => {
    for (const outcome of ["approved", "rejected"] as const) {
      expect(renderAnswered(outcome, "PROP-1", true).html).toContain("O técnico responsável foi avisado por e-mail");
      const unsent = renderAnswered(outcome, "PROP-1", false).html;
      expect(unsent).not.toContain("avisado");
      expect(unsent).toContain("Sua resposta ficou registrada para o técnico responsável");
    }
  });
});

describe("renderProblem", () => {
  it("answers each problem with its own status and explanation", () => {
    expect(renderProblem("missing_token").status).toBe(400);
    expect(renderProblem("unknown_token").status).toBe(404);
    expect(renderProblem("unsupported_media_type").status).toBe(415);
    expect(renderProblem("unavailable").status).toBe(503);
    const limited = renderProblem("rate_limited");
    expect(limited.status).toBe(429);
    expect(limited.html).toContain("<h1>Muitas tentativas</h1>");
    expect(renderProblem("method_not_allowed").status).toBe(405);
    expect(renderProblem("too_large").status).toBe(413);
    const expired = renderProblem("expired", { ...summary, token_state: "expired" });
    expect(expired.status).toBe(410);
    expect(expired.html).toContain("terminou em 21/12/2026");
  });
  it("says whether a used link was approved or rejected", () => {
    const used = renderProblem("used", { ...summary, status: "rejected", token_state: "used", responded_at: "2026-11-22T15:00:00Z" });
    expect(used.status).toBe(409);
    expect(used.html).toContain("já foi recusada em 22/11/2026");
    expect(renderProblem("used", { ...summary, status: "active", token_state: "used" }).html).toContain("já foi aprovada");
    expect(renderProblem("closed", { ...summary, status: "cancelled", token_state: "closed" }).html).toContain("foi cancelada");
  });
});
