import { readEnv, requireEnv } from "../config/env.ts";

/**
 * The link a customer opens to approve or reject: PORTAL_APPROVAL_URL (e.g. a page on the
 * portal's own domain, which hosted Supabase needs to serve HTML) or, by default, the
 * approve-proposal function itself under SUPABASE_URL.
 */
export function approvalLink(token: string): string {
  const base = readEnv("PORTAL_APPROVAL_URL") || `${requireEnv("SUPABASE_URL")}/functions/v1/approve-proposal`;
  const url = new URL(base);
  url.searchParams.set("token", token);
  return url.toString();
}
