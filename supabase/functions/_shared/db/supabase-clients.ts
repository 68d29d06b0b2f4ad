import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { requireEnv } from "../config/env.ts";
import type { Database } from "./database.types.ts";

const serverOptions = { auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false } };

/**
 * The one place a service-role client is created. It bypasses row-level security, so every use
 * must be a deliberate server-side decision; search for this function to audit them all.
 */
export function createServiceRoleClient(): SupabaseClient<Database> {
  return createClient<Database>(requireEnv("SUPABASE_URL"), requireEnv("SUPABASE_SERVICE_ROLE_KEY"), serverOptions);
}

/**
 * A client that acts as the caller: their `Authorization` header is forwarded, so PostgREST
 * applies row-level security for that user exactly as for a direct data-API call.
 */
export function createCallerClient(authorization: string): SupabaseClient<Database> {
  return createClient<Database>(requireEnv("SUPABASE_URL"), requireEnv("SUPABASE_ANON_KEY"), {
    ...serverOptions,
    global: { headers: { Authorization: authorization } },
  });
}

/** An anonymous client whose requests go through `fetch` (the approval page's visitor, portal/visitor-client.ts). */
export function createAnonClient(fetch: typeof globalThis.fetch): SupabaseClient<Database> {
  return createClient<Database>(requireEnv("SUPABASE_URL"), requireEnv("SUPABASE_ANON_KEY"), { ...serverOptions, global: { fetch } });
}
