import { describe, expect, it } from "vitest";
import { buildProposalEmail, isCustomerAddress } from "./proposal-email.ts";
import { sampleProposal } from "../../../../test/helpers/portal/sample-proposal.ts";

const link = "http://127.0.0.1:54321/functions/v1/approve-proposal?token=abc&x=1";

describe("buildProposalEmail", () => {
  it("names the proposal and product in the subject", () => {
    expect(buildProposalEmail(sampleProposal, link).subject).toBe("Proposta PROP-202611-001 – Google Workspace Business Starter");
  });
  it("gives the facts and the link in plain text", () => {
    const { text } = buildProposalEmail(sampleProposal, link);
    expect(text).toContain("Olá, Marcos Pereira!");
    expect(text).toContain("Cliente: Padaria Pão Dourado Ltda (CNPJ 12.ABC.345/01DE-35)");
    expect(text).toContain("Valor mensal: R$ 149,90");
    expect(text).toContain("Prazo do contrato: 12 meses");
    expect(text).toContain("Valor total: R$ 1.798,80");
    expect(text).toContain(link);
  });
  it("escapes customer-supplied text and the link in HTML", () => {
    const hostile = { ...sampleProposal, customers: { ...sampleProposal.customers, company_name: `<img src=x onerror="alert(1)">` } };
    const { html } = buildProposalEmail(hostile, link);
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    expect(html).toContain(`href="http://127.0.0.1:54321/functions/v1/approve-proposal?token=abc&amp;x=1"`);
    expect(html).toContain('lang="pt-BR"');
  });
});

describe("isCustomerAddress", () => {
  it("accepts the customer's e-mail on file in any case", () => {
    expect(isCustomerAddress(sampleProposal, "marcos@paodourado.com.br")).toBe(true);
    expect(isCustomerAddress(sampleProposal, "Marcos@PaoDourado.com.br")).toBe(true);
  });
  it("refuses any other address, however close", () => {
    expect(isCustomerAddress(sampleProposal, "ana.souza@orbita.local")).toBe(false);
    expect(isCustomerAddress(sampleProposal, "marcos@paodourado.com")).toBe(false);
    expect(isCustomerAddress(sampleProposal, "marcos+copia@paodourado.com.br")).toBe(false);
  });
});
