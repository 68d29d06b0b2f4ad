import { z } from "zod";
import { uuidSchema } from "../http/uuid.ts";
import { type Caller, databaseFailure } from "./caller.ts";
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

/**
 * Loads a proposal for a caller who asks to print or send it: 404 unless it exists and the caller
 * is its technician or an admin, as public.proposal_document decides in one call. Someone else's
 * proposal gets the very answer a missing one does, so an id's existence is never confirmed.
 */
export async function loadProposalForCaller(caller: Caller, proposalId: string): Promise<ProposalDocument> {
  const { data, error } = await caller.client.rpc("proposal_document", { p_proposal_id: proposalId });
  if (error) throw databaseFailure(error);
  if (data === null) throw new HttpError(404, "proposal_not_found", `No proposal ${proposalId}`);
  return proposalDocumentSchema.parse(data);
}
