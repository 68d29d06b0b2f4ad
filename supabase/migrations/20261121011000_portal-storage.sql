-- Proposals portal, part 11: the private bucket for proposal PDFs. The generate-proposal-pdf
-- function writes <technician_id>/<proposal_id>.pdf with the service role after checking that the
-- caller is the proposal's technician or an admin, and hands out short-lived signed URLs. No
-- storage.objects policy grants clients direct access: the signed URL is the only way in.

insert into storage.buckets (id, name, public, file_size_limit, allowed_mime_types)
values ('proposal-pdfs', 'proposal-pdfs', false, 5 * 1024 * 1024, array['application/pdf'])
on conflict (id) do nothing;
