/**
 * The session of a password or e-mail chat: a cookie `orbita_chat_<identifier>` holding the chat,
 * who signed in (an address, or "password"), the chat's access version at sign-in and an expiry,
 * signed with HMAC-SHA256 under a server secret, so it cannot be forged or changed, and the id of
 * its server-side session, which logging out deletes (so the cookie is refused afterwards). It is
 * HttpOnly (page scripts never see it), SameSite=Lax (no other site's form posts carry it),
 * Secure over https, and has Path=/: the page may be served at `/chat/<identifier>`,
 * `/functions/v1/chat/<identifier>` or `/` of its subdomain (which the gateway rewrites, so the
 * function cannot tell), and without a Path a code verified at `…/otp/verify` would keep the cookie
 * for `…/otp` only; the name carries the identifier, so chats never read each other's. The database refuses a session of another access version
 * (admit_chat_run), so changing a chat's password or allow-list ends the sessions made before.
 *
 * The secret is CHAT_SESSION_SECRET, or, when it is not set, derived from the service-role key
 * every hosted function receives (rotating that key then signs everyone out).
 */
import { readEnv } from "../../../config/env.ts";
import { bytesEqual } from "../../../http/constant-time.ts";
import { HttpError } from "../../../http/errors.ts";

/** What a valid cookie says. */
export interface ChatSession {
  chatId: string;
  subject: string;
  authVersion: number;
  /**
   * The server-side session (workflows_private.chat_sessions) this cookie stands for: logging out
   * deletes it, so a copy of the cookie kept elsewhere stops working too.
   */
  sessionId: string;
  /** Epoch seconds. */
  expiresAt: number;
}

/** What a request's cookie turned out to be. */
export type SessionState = { kind: "none" } | { kind: "invalid" } | { kind: "expired" } | { kind: "valid"; session: ChatSession };

/** How long a session lasts. */
export const SESSION_SECONDS = 24 * 60 * 60;

const encoder = new TextEncoder();

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    return Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (char) => char.charCodeAt(0));
  } catch {
    return null;
  }
}

let keyPromise: Promise<CryptoKey> | undefined;

/** The HMAC key of this function instance (see the module comment). */
function signingKey(): Promise<CryptoKey> {
  keyPromise ??= (async () => {
    let secret = readEnv("CHAT_SESSION_SECRET");
    if (!secret) {
      const serviceKey = readEnv("SUPABASE_SERVICE_ROLE_KEY");
      if (!serviceKey) throw new HttpError(503, "CHAT_NOT_CONFIGURED", "Chat sessions need CHAT_SESSION_SECRET (or the service-role key) in the function's environment");
      const base = await crypto.subtle.importKey("raw", encoder.encode(serviceKey), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
      secret = base64url(new Uint8Array(await crypto.subtle.sign("HMAC", base, encoder.encode("orbita chat sessions v1"))));
    }
    return crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  })();
  keyPromise.catch(() => (keyPromise = undefined));
  return keyPromise;
}

async function signature(payload: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", await signingKey(), encoder.encode(`chat-session.v1.${payload}`)));
}

/** The cookie's name for a chat. */
export function cookieName(identifier: string): string {
  return `orbita_chat_${identifier}`;
}

/** A signed cookie value for a session. */
export async function signSession(session: ChatSession): Promise<string> {
  const payload = base64url(encoder.encode(JSON.stringify({ c: session.chatId, s: session.subject, v: session.authVersion, i: session.sessionId, e: session.expiresAt })));
  return `${payload}.${base64url(await signature(payload))}`;
}

/** The named cookie of a Cookie header, or null. */
function cookieValue(header: string | null, name: string): string | null {
  for (const part of header?.split(";") ?? []) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return value.join("=");
  }
  return null;
}

/** Reads and checks a request's session cookie for a chat (its signature in constant time, then its expiry). */
export async function readSession(request: Request, identifier: string, now = Date.now()): Promise<SessionState> {
  const value = cookieValue(request.headers.get("cookie"), cookieName(identifier));
  if (value === null || value === "") return { kind: "none" };
  const [payload, signed, extra] = value.split(".");
  const given = fromBase64url(signed ?? "");
  if (!payload || extra !== undefined || given === null || !bytesEqual(given, await signature(payload))) return { kind: "invalid" };
  let claims: { c?: unknown; s?: unknown; v?: unknown; i?: unknown; e?: unknown };
  try {
    claims = JSON.parse(new TextDecoder().decode(fromBase64url(payload) ?? new Uint8Array()));
  } catch {
    return { kind: "invalid" };
  }
  if (typeof claims.c !== "string" || typeof claims.s !== "string" || typeof claims.v !== "number" || typeof claims.i !== "string" || typeof claims.e !== "number") {
    // Cookies signed before sessions had ids cannot be logged out, so they are no session either.
    return { kind: "invalid" };
  }
  if (claims.e * 1000 <= now) return { kind: "expired" };
  return { kind: "valid", session: { chatId: claims.c, subject: claims.s, authVersion: claims.v, sessionId: claims.i, expiresAt: claims.e } };
}

/** Whether the browser reached us over https (the gateway or Supabase's proxy says so). */
function secure(request: Request): boolean {
  return (request.headers.get("x-forwarded-proto") ?? new URL(request.url).protocol.replace(":", "")) === "https";
}

/** The Set-Cookie header that opens a session. */
export function sessionCookie(request: Request, identifier: string, value: string): string {
  return `${cookieName(identifier)}=${value}; Max-Age=${SESSION_SECONDS}; Path=/; HttpOnly; SameSite=Lax${secure(request) ? "; Secure" : ""}`;
}

/** The Set-Cookie header that ends one. */
export function clearedCookie(request: Request, identifier: string): string {
  return `${cookieName(identifier)}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax${secure(request) ? "; Secure" : ""}`;
}
