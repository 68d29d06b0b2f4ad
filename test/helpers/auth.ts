import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { randomUUID } from "node:crypto";
import WebSocket from "ws";
import { fetchFrom, simulatedClientAddress } from "./clients.ts";
import { env } from "./env.ts";

/** A supabase-js client of its own device (a loopback address of its own), without session storage. */
export function deviceClient(key: string = env.anonKey, address: string = simulatedClientAddress()): SupabaseClient {
  return createClient(env.url, key, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    global: { fetch: fetchFrom(address) },
    // Node 20 has no global WebSocket; supabase-js builds its realtime client eagerly.
    realtime: { transport: WebSocket as never },
  });
}

/**
 * A supabase-js client of its own device using the PKCE flow (`auth.flowType: 'pkce'`, the default
 * of @supabase/ssr): it keeps each flow's code verifier in memory until exchangeCodeForSession.
 */
export function pkceClient(address: string = simulatedClientAddress()): SupabaseClient {
  return createClient(env.url, env.anonKey, {
    auth: { flowType: "pkce", persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    global: { fetch: fetchFrom(address) },
    realtime: { transport: WebSocket as never },
  });
}

/** A fresh e-mail address nobody has used. */
export const freshEmail = (label = "auth") => `${label}-${randomUUID()}@example.test`;

/** A message the auth service sent, as the mail catcher shows it. */
export interface CaughtMail {
  id: string;
  subject: string;
  html: string;
  /** The first link in the mail. */
  link: string;
  /** The code the mail gives ("enter the code: 123456"), when it gives one. */
  code: string | null;
}

/** The newest mail caught for `address` (waits briefly for it to land), with its link and code. */
export async function latestMail(address: string, count = 1): Promise<CaughtMail> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const list = (await (await fetch(`${env.mailUrl}/api/messages?to=${encodeURIComponent(address)}`)).json()) as { id: string; subject: string }[];
    if (list.length >= count) {
      const message = (await (await fetch(`${env.mailUrl}/api/messages/${list[0].id}`)).json()) as { html: string };
      const link = /href="([^"]+)"/.exec(message.html)?.[1].replace(/&amp;/g, "&") ?? "";
      const code = /enter the code: (\d+)/.exec(message.html)?.[1] ?? null;
      return { id: list[0].id, subject: list[0].subject, html: message.html, link, code };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no mail reached ${address}`);
}

/** How many mails the catcher holds for `address`. */
export async function mailCount(address: string): Promise<number> {
  return ((await (await fetch(`${env.mailUrl}/api/messages?to=${encodeURIComponent(address)}`)).json()) as unknown[]).length;
}

/** Follows a mailed /verify link like a browser and returns where it redirected and the fragment's values. */
export async function followLink(link: string): Promise<{ status: number; location: URL; fragment: URLSearchParams }> {
  const response = await fetchFrom(simulatedClientAddress())(link, { redirect: "manual" });
  const location = new URL(response.headers.get("location") ?? "about:blank");
  return { status: response.status, location, fragment: new URLSearchParams(location.hash.slice(1)) };
}

/** A JWT's decoded header or payload (the service's signature is checked by the tests that care). */
export function decodeJwt(token: string, part: 0 | 1 = 1): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split(".")[part], "base64url").toString("utf8")) as Record<string, unknown>;
}
