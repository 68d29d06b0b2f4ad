// generate-proposal-pdf: renders a proposal as an A4 PDF, stores it in the private proposal-pdfs
// bucket (<technician_id>/<proposal_id>.pdf, replacing an older copy) and answers with a signed
// URL. Only the proposal's technician or an admin may call it. This copy never carries the
// approval link (it says the link goes to the customer's e-mail): with the link, the caller could
// answer for the customer, whose e-mail they know. The customer's copy, with the link, is the one
// send-proposal-email attaches.
// POST {"proposalId": "<uuid>"} → 200 {"proposalId", "code", "path", "signedUrl", "expiresIn"}.
import { createServiceRoleClient } from "../_shared/db/supabase-clients.ts";
import { HttpError } from "../_shared/http/errors.ts";
import { requireCaller } from "../_shared/portal/caller.ts";
import { jsonResponse } from "../_shared/portal/errors.ts";
import { readJsonBody, servePortalFunction } from "../_shared/portal/http.ts";
import { loadProposalForCaller } from "../_shared/portal/proposal-document.ts";
import { renderProposalPdf } from "../_shared/portal/proposal-pdf.ts";
import { generatePdfBodySchema } from "../_shared/portal/schemas.ts";

const BUCKET = "proposal-pdfs";
/** Long enough to open or forward the link right away, short enough not to become a permanent share. */
const SIGNED_URL_SECONDS = 60 * 60;

Deno.serve(servePortalFunction("generate-proposal-pdf", ["POST"], async (request) => {
  const caller = await requireCaller(request);
  const { proposalId } = await readJsonBody(request, generatePdfBodySchema);
  // The bucket has no client policies: the service role writes and signs once the caller is authorised.
  const service = createServiceRoleClient();
  const proposal = await loadProposalForCaller(caller, proposalId);

  const pdf = await renderProposalPdf(proposal, null);
  const path = `${proposal.technician_id}/${proposal.id}.pdf`;
  const upload = await service.storage.from(BUCKET).upload(path, pdf, { contentType: "application/pdf", upsert: true });
  if (upload.error) throw new HttpError(502, "storage_error", upload.error.message);
  const signed = await service.storage.from(BUCKET).createSignedUrl(path, SIGNED_URL_SECONDS);
  if (signed.error) throw new HttpError(502, "storage_error", signed.error.message);

  return jsonResponse({ proposalId: proposal.id, code: proposal.code, path, signedUrl: signed.data.signedUrl, expiresIn: SIGNED_URL_SECONDS });
}));
