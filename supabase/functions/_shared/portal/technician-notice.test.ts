import { describe, expect, it } from "vitest";
import { buildTechnicianNotice, type NoticeFacts } from "./technician-notice.ts";

const facts: NoticeFacts = {
  code: "PROP-202612-007",
  total_value: 1798.8,
  customers: { company_name: "Padaria <Pão> Dourado", contact_name: "Marcos Pereira" },
  products: { name: "Google Workspace" },
  profiles: { full_name: "Ana Souza", email: "ana.souza@orbita.local" },
};

describe("buildTechnicianNotice", () => {
  it("says who answered what, in the subject and the text", () => {
    const approved = buildTechnicianNotice(facts, "approved");
    expect(approved.subject).toBe("Proposta PROP-202612-007 aprovada pelo cliente");
    expect(approved.text).toContain("Olá, Ana Souza!");
    expect(approved.text).toContain("Marcos Pereira, de Padaria <Pão> Dourado, aprovou a proposta PROP-202612-007 (Google Workspace, valor total R$ 1.798,80)");
    const rejected = buildTechnicianNotice(facts, "rejected");
    expect(rejected.subject).toBe("Proposta PROP-202612-007 recusada pelo cliente");
    expect(rejected.text).toContain("recusou a proposta PROP-202612-007");
  });
  it("escapes customer-supplied text in HTML and carries no link", () => {
    const { html, text } = buildTechnicianNotice(facts, "approved");
    expect(html).toContain("Padaria &lt;Pão&gt; Dourado");
    expect(html).not.toContain("<Pão>");
    expect(`${html}${text}`).not.toContain("token=");
  });
});
