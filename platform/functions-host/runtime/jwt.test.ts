import { describe, expect, it } from "vitest";
import { signHs256 } from "../../keys/api-keys.ts";
import { createJwtVerifier } from "./jwt.ts";

const secret = "super-secret-jwt-token-with-at-least-32-characters-long";
const verify = createJwtVerifier(secret);
const now = 1_800_000_000;

describe("verify_jwt's token check", () => {
  it("accepts an HS256 token signed with the secret and returns its claims", async () => {
    const token = signHs256({ role: "anon", exp: now + 60 }, secret);
    expect(await verify(token, now)).toEqual({ ok: true, claims: { role: "anon", exp: now + 60 } });
  });

  it("accepts a token without exp (as jose does)", async () => {
    expect((await verify(signHs256({ role: "anon" }, secret), now)).ok).toBe(true);
  });

  it("checks time claims as jose does: a future iat passes, a null exp or nbf and a text iat do not", async () => {
    expect((await verify(signHs256({ role: "anon", iat: now + 600 }, secret), now)).ok).toBe(true);
    for (const claims of [{ exp: null }, { nbf: null }, { iat: "yesterday" }]) {
      expect(await verify(signHs256({ role: "anon", ...claims }, secret), now)).toEqual({ ok: false });
    }
  });

  it("refuses another secret, an expired token, a future nbf and garbage", async () => {
    const refused = [
      signHs256({ role: "anon", exp: now + 60 }, "another-secret-that-is-long-enough-to-use"),
      signHs256({ role: "anon", exp: now }, secret),
      signHs256({ role: "anon", nbf: now + 30 }, secret),
      "a.b",
      "not.a.jwt!",
      "",
    ];
    for (const token of refused) expect(await verify(token, now)).toEqual({ ok: false });
  });

  it("refuses a token whose header names another algorithm, even with a valid HMAC", async () => {
    const token = signHs256({ role: "service_role" }, secret);
    const [, payload, signature] = token.split(".");
    const header = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
    expect(await verify(`${header}.${payload}.${signature}`, now)).toEqual({ ok: false });
  });
});
