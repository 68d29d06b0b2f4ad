import type { SupabaseClient } from "@supabase/supabase-js";
import { z } from "zod";
import { uuidSchema } from "../http/uuid.ts";
import { type Caller, isAdministrator, rolesOf } from "./caller.ts";
import { HttpError } from "../http/errors.ts";

/** What the PDF and the e-mail say about a proposal: the proposal with its customer, product and technician. */
export const proposalDocumentSchema = z.object({
  id: uuidSchema(),
  code: z.string(),
  status: z.enum(["pending", "approved", "rejected", "active", "cancelled"]),
  technician_id: uuidSchema(),
  monthly_value: z.number(),
  contract_months: z.number().int(),
  total_value: z.number(),
  approval_token_expires_at: z.string(),
  created_at: z.string(),
  customers: z.object({
    company_name: z.string(),
    contact_name: z.string(),
    email: z.string(),
    phone: z.string(),
    cnpj: z.string(),
  }),
  products: z.object({ name: z.string(), description: z.string() }),
  profiles: z.object({ full_name: z.string(), email: z.string().nullable() }),
});

/** A proposal with its customer, product and technician, as the PDF and e-mail renderers take it. */
export type ProposalDocument = z.infer<typeof proposalDocumentSchema>;

const SELECT = `id, code, status, technician_id, monthly_value, contract_months, total_value,
  approval_token_expires_at, created_at,
  customers (company_name, contact_name, email, phone, cnpj),
  products (name, description),
  profiles (full_name, email)`;

/**
 * Loads a proposal for a caller who asks to print or send it: 404 unless it exists and the caller
 * is its technician or an admin. Someone else's proposal gets the very answer a missing one does,
 * as RLS gives it, so an id's existence is never confirmed. Read with the service role (the
 * approval token used to be a column no API role could read; it is now issued separately, by
 * issue_approval_token, when the e-mail goes out), and the caller's right is checked here.
 */
export async function loadProposalForCaller(service: SupabaseClient, caller: Caller, proposalId: string): Promise<ProposalDocument> {
  const { data, error } = await service.from("proposals").select(SELECT).eq("id", proposalId).maybeSingle();
  if (error) throw new HttpError(502, "database_error", error.message);
  const notFound = new HttpError(404, "proposal_not_found", `No proposal ${proposalId}`);
  if (!data) throw notFound;
  const proposal = proposalDocumentSchema.parse(data);
  if (proposal.technician_id !== caller.userId && !isAdministrator(await rolesOf(caller.client, caller.userId))) throw notFound;
  return proposal;
}
