import type { ProposalDocument } from "../../../supabase/functions/_shared/portal/proposal-document.ts";

/** Test data for the pure renderers: a proposal as loadProposalForCaller returns it, with text that needs care. */
export const sampleProposal: ProposalDocument = {
  id: "5e3d3000-0000-4000-8000-000000000001",
  code: "PROP-202611-001",
  status: "pending",
  technician_id: "5e3d0000-0000-4000-8000-000000000003",
  monthly_value: 149.9,
  contract_months: 12,
  total_value: 1798.8,
  approval_token_expires_at: "2026-12-21T12:00:00Z",
  created_at: "2026-11-21T12:00:00Z",
  customers: { company_name: "Padaria Pão Dourado Ltda", contact_name: "Marcos Pereira", email: "marcos@paodourado.com.br", phone: "11987654321", cnpj: "12ABC34501DE35" },
  products: { name: "Google Workspace Business Starter", description: "E-mail profissional 🚀\ncom 30 GB" },
  profiles: { full_name: "Ana Souza", email: "ana.souza@orbita.local" },
};
