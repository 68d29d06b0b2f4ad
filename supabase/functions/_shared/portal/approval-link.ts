import { readEnv } from "../config/env.ts";
import { tokenLink } from "../http/token-link.ts";

/**
 * The link a customer opens to approve or reject: PORTAL_APPROVAL_URL (e.g. a page on the
 * portal's own domain, which hosted Supabase needs to serve HTML) or, by default, the
 * approve-proposal function itself under SUPABASE_URL.
 */
export function approvalLink(token: string): string {
  return tokenLink("approve-proposal", token, readEnv("PORTAL_APPROVAL_URL"));
}
