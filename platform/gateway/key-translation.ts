import type { StackConfig } from "../config.ts";
import type { HeaderReader } from "./header-reader.ts";

/**
 * The Authorization value Kong forwards for `supabase start`: a non-`sb_` Bearer token passes
 * through; otherwise the `apikey` header decides (secret key → service_role JWT, publishable key →
 * anon JWT, anything else copied verbatim, which upstream treats as anonymous or invalid).
 */
export function translateAuthorization(headers: HeaderReader, config: StackConfig): string | null {
  const authorization = headers.get("authorization");
  if (authorization && !authorization.startsWith("Bearer sb_")) return authorization;
  const apikey = headers.get("apikey") ?? authorization?.slice("Bearer ".length) ?? null;
  if (apikey === null) return null;
  if (apikey === config.secretKey) return `Bearer ${config.serviceRoleKey}`;
  if (apikey === config.publishableKey) return `Bearer ${config.anonKey}`;
  return apikey.startsWith("ey") ? `Bearer ${apikey}` : apikey;
}
