import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { ClaimsVerifier } from "../auth/jwt-claims.ts";
import { requireCaller } from "./caller.ts";

function token(payload: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "HS256", typ: "JWT" })}.${part(payload)}.signature`;
}

/** The runtime verified these already (verify_jwt = true); the function holds no key for them. */
const unverifiable: ClaimsVerifier = async () => ({ status: "unverifiable" });

function withToken(value: string): Request {
  return new Request("http://local/fn", { headers: { authorization: `Bearer ${value}` } });
}

describe("requireCaller", () => {
  const sub = "5e3d0000-0000-4000-8000-000000000003";
  // The caller's client is created (never used here): supabase-js needs a URL, a key and, under
  // Node 20, a WebSocket implementation, which Deno has built in.
  process.env.SUPABASE_URL ??= "http://127.0.0.1:1";
  process.env.SUPABASE_ANON_KEY ??= "anon";
  globalThis.WebSocket ??= WebSocket as unknown as typeof globalThis.WebSocket;

  it("reads the user id of a user's access token", async () => {
    expect((await requireCaller(withToken(token({ sub, role: "authenticated", email: "ana@orbita.local" })), unverifiable)).userId).toBe(sub);
  });
  it("accepts every user id Postgres stores, not only RFC 9562 ones (the gamification seed's)", async () => {
    const seeded = "402a8bf1-ec9a-c693-0f4a-5d1e7c2b9a10";
    expect((await requireCaller(withToken(token({ sub: seeded, role: "authenticated" })), unverifiable)).userId).toBe(seeded);
  });
  it("rejects the anon key and the service key, which are JWTs without a user", async () => {
    await expect(requireCaller(withToken(token({ role: "anon", iss: "supabase-demo" })), unverifiable)).rejects.toMatchObject({ status: 401, code: "unauthorized" });
    await expect(requireCaller(withToken(token({ role: "service_role" })), unverifiable)).rejects.toMatchObject({ status: 401 });
  });
  it("rejects garbage and a missing header", async () => {
    await expect(requireCaller(withToken("not-a-jwt"), unverifiable)).rejects.toMatchObject({ status: 401 });
    await expect(requireCaller(withToken("a.%%%.c"), unverifiable)).rejects.toMatchObject({ status: 401 });
    await expect(requireCaller(new Request("http://local/fn"), unverifiable)).rejects.toMatchObject({ status: 401 });
  });
  it("refuses a token the function can verify and finds forged", async () => {
    const forged: ClaimsVerifier = async () => ({ status: "invalid", reason: "signature verification failed" });
    await expect(requireCaller(withToken(token({ sub, role: "authenticated" })), forged)).rejects.toMatchObject({ status: 401, code: "unauthorized" });
  });
  it("decodes non-ASCII claims", async () => {
    expect((await requireCaller(withToken(token({ sub, role: "authenticated", name: "João Ávila" })), unverifiable)).userId).toBe(sub);
  });
});
