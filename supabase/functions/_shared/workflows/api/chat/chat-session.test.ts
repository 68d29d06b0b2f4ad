import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { clearedCookie, readSession, sessionCookie, signSession, type ChatSession } from "./chat-session.ts";

const session: ChatSession = { chatId: "c1", subject: "ana@example.com", authVersion: 2, sessionId: "0b0c5d1e-8f4a-4c2b-9d3e-1a2b3c4d5e6f", expiresAt: 2_000_000_000 };
const withCookie = (value: string) => new Request("http://local/chat/helper", { headers: { cookie: `other=1; orbita_chat_helper=${value}` } });

describe("chat sessions", () => {
  beforeEach(() => {
    process.env.CHAT_SESSION_SECRET = "a-test-secret-for-chat-sessions";
  });
  afterEach(() => {
    delete process.env.CHAT_SESSION_SECRET;
  });

  it("reads back what was signed", async () => {
    const value = await signSession(session);
    expect(await readSession(withCookie(value), "helper", 1_000_000_000_000)).toEqual({ kind: "valid", session });
  });

  it("refuses a changed, re-signed-by-guess or truncated cookie, and an expired one", async () => {
    const value = await signSession(session);
    const [payload, signature] = value.split(".");
    const forged = btoa(JSON.stringify({ c: "c1", s: "eve@example.com", v: 2, e: 2_000_000_000 })).replace(/=+$/, "");
    expect(await readSession(withCookie(`${forged}.${signature}`), "helper")).toEqual({ kind: "invalid" });
    expect(await readSession(withCookie(`${payload}.${signature.slice(0, -2)}AA`), "helper")).toEqual({ kind: "invalid" });
    expect(await readSession(withCookie(payload), "helper")).toEqual({ kind: "invalid" });
    expect(await readSession(withCookie("garbage"), "helper")).toEqual({ kind: "invalid" });
    const { sessionId: _sessionId, ...withoutId } = session;
    expect(await readSession(withCookie(await signSession(withoutId as ChatSession)), "helper")).toEqual({ kind: "invalid" });
    expect(await readSession(withCookie(value), "helper", 2_000_000_000_000)).toEqual({ kind: "expired" });
    expect(await readSession(new Request("http://local/"), "helper")).toEqual({ kind: "none" });
    expect(await readSession(withCookie(value), "other-chat")).toEqual({ kind: "none" });
  });

  it("sets an HttpOnly, SameSite, expiring cookie, Secure over https", () => {
    const local = new Request("http://127.0.0.1/chat/helper/login");
    expect(sessionCookie(local, "helper", "v")).toBe("orbita_chat_helper=v; Max-Age=86400; Path=/; HttpOnly; SameSite=Lax");
    const hosted = new Request("http://edge/chat/helper/login", { headers: { "x-forwarded-proto": "https" } });
    expect(sessionCookie(hosted, "helper", "v")).toBe("orbita_chat_helper=v; Max-Age=86400; Path=/; HttpOnly; SameSite=Lax; Secure");
    expect(clearedCookie(local, "helper")).toBe("orbita_chat_helper=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax");
  });
});
