import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { randomUUID } from "node:crypto";
import WebSocket from "ws";
import { env } from "./env.ts";

/**
 * A client address of its own (IPv6 documentation range) for each client. The gateway rate-limits
 * per user or client address and trusts X-Forwarded-For from loopback, so each simulated client
 * gets its own budget, as separate devices would.
 */
export function simulatedClientAddress(): string {
  return `2001:db8::${randomUUID().slice(0, 4)}:${randomUUID().slice(0, 4)}`;
}

function options(address = simulatedClientAddress()) {
  return {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    // Node 20 has no global WebSocket; supabase-js needs one for its realtime transport.
    realtime: { transport: WebSocket as unknown as typeof globalThis.WebSocket },
    global: { headers: { "x-forwarded-for": address } },
  };
}

/** A client with the anon key, as a signed-out browser would have. */
export function anonClient(address?: string): SupabaseClient {
  return createClient(env.url, env.anonKey, options(address));
}

/** A client with the service_role key (bypasses RLS). */
export function serviceClient(address?: string): SupabaseClient {
  return createClient(env.url, env.serviceRoleKey, options(address));
}

/** A user created through the admin API, and a client signed in as that user. */
export interface TestUser {
  id: string;
  email: string;
  password: string;
  client: SupabaseClient;
  accessToken: string;
}

/** Creates a confirmed user with the admin API and signs in as it with the password grant. */
export async function createTestUser(metadata: Record<string, unknown> = {}, appMetadata: Record<string, unknown> = {}): Promise<TestUser> {
  const email = `user-${randomUUID()}@example.test`;
  const password = `pw-${randomUUID()}`;
  const { data, error } = await serviceClient().auth.admin.createUser({
    email,
    password,
    email_confirm: true,
    user_metadata: metadata,
    app_metadata: appMetadata,
  });
  if (error) throw error;
  const client = anonClient();
  const signIn = await client.auth.signInWithPassword({ email, password });
  if (signIn.error) throw signIn.error;
  return { id: data.user.id, email, password, client, accessToken: signIn.data.session.access_token };
}
