import { requireEnv } from "../config/env.ts";

/**
 * The link an e-mail holds for a page that takes a token in its query (the portal's proposal
 * approval, a workflow approval): `base` when the deployment serves the page elsewhere (e.g. on
 * its own domain, which hosted Supabase needs to serve HTML), else the edge function
 * `functionName` under SUPABASE_URL.
 */
export function tokenLink(functionName: string, token: string, base?: string): string {
  const url = new URL(base || `${requireEnv("SUPABASE_URL")}/functions/v1/${functionName}`);
  url.searchParams.set("token", token);
  return url.toString();
}
