import { describe, expect, it } from "vitest";
import { claimsOf, isAdministrator } from "./caller.ts";

function token(payload: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "HS256", typ: "JWT" })}.${part(payload)}.signature`;
}

describe("claimsOf", () => {
  const sub = "5e3d0000-0000-4000-8000-000000000003";

  it("reads the user id of a user's access token", () => {
    expect(claimsOf(token({ sub, role: "authenticated", email: "ana@orbita.local" }))).toEqual({ sub, role: "authenticated" });
  });
  it("rejects the anon key and the service key, which are JWTs without a user", () => {
    expect(claimsOf(token({ role: "anon", iss: "supabase-demo" }))).toBeNull();
    expect(claimsOf(token({ role: "service_role" }))).toBeNull();
  });
  it("rejects garbage", () => {
    expect(claimsOf("not-a-jwt")).toBeNull();
    expect(claimsOf("a.%%%.c")).toBeNull();
  });
  it("decodes non-ASCII claims", () => {
    expect(claimsOf(token({ sub, role: "authenticated", name: "João Ávila" }))?.sub).toBe(sub);
  });
});

describe("isAdministrator", () => {
  it("is true for admin and super_admin only", () => {
    expect(isAdministrator(new Set(["admin"]))).toBe(true);
    expect(isAdministrator(new Set(["super_admin"]))).toBe(true);
    expect(isAdministrator(new Set(["technician"]))).toBe(false);
    expect(isAdministrator(new Set())).toBe(false);
  });
});
