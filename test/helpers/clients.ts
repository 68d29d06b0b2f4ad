import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { randomInt, randomUUID } from "node:crypto";
import { Agent, FormData as UndiciFormData, fetch as undiciFetch } from "undici";
import WebSocket from "ws";
import { env } from "./env.ts";

/**
 * A loopback address of its own for a simulated client (a separate device). The gateway
 * rate-limits per user or per TCP peer address, so each gets its own budget. Linux routes all of
 * 127.0.0.0/8 to the loopback interface; 127.0.0.0/16 is left out, which keeps clear of
 * 127.0.0.1 (everything else on the machine) and 127.0.0.2 (the functions host's calls).
 */
export function simulatedClientAddress(): string {
  return `127.${randomInt(1, 255)}.${randomInt(256)}.${randomInt(1, 255)}`;
}

const agents = new Map<string, Agent>();
type UndiciInput = Parameters<typeof undiciFetch>[0];
type UndiciInit = NonNullable<Parameters<typeof undiciFetch>[1]>;

/**
 * undici's fetch reads only its own FormData class, not the global one Node's built-in fetch
 * uses (storage-js builds multipart uploads with it), so a global FormData is copied over.
 */
function undiciBody(body: RequestInit["body"]): UndiciInit["body"] {
  if (!(body instanceof FormData)) return body as UndiciInit["body"];
  const copy = new UndiciFormData();
  for (const [name, value] of body) copy.append(name, value);
  return copy;
}

/** `fetch` whose connections come from `address` (a simulatedClientAddress), as that device's would. */
export function fetchFrom(address: string): typeof fetch {
  let dispatcher = agents.get(address);
  if (!dispatcher) {
    dispatcher = new Agent({ localAddress: address });
    agents.set(address, dispatcher);
  }
  const agent = dispatcher;
  return (input, init) =>
    undiciFetch(input as UndiciInput, { ...(init as UndiciInit), body: undiciBody(init?.body), dispatcher: agent }) as unknown as Promise<Response>;
}

function options(address = simulatedClientAddress()) {
  return {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    // Node 20 has no global WebSocket; supabase-js needs one for its realtime transport.
    realtime: { transport: WebSocket as unknown as typeof globalThis.WebSocket },
    global: { fetch: fetchFrom(address) },
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
