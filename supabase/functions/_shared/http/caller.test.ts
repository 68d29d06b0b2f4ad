import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { createClaimsVerifier, type ClaimsVerifier } from "../auth/jwt-claims.ts";
import { bearerToken, resolveCaller } from "./caller.ts";
import { HttpError, type Problem } from "./errors.ts";

const secret = "a-local-jwt-secret-with-at-least-32-characters";
const verify = createClaimsVerifier(JSON.stringify({ keys: [{ kty: "oct", k: Buffer.from(secret).toString("base64url"), alg: "HS256" }] }));
const unverifiable: ClaimsVerifier = async () => ({ status: "unverifiable" });
const errors = { describe: (problem: Problem) => new HttpError(401, problem.kind, problem.kind) };
const userId = "402a8bf1-ec9a-c693-0f4a-5d1e7c2b9a10";

function sign(claims: Record<string, unknown>, expiresIn: string | number = "1h", key = secret): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "JWT" }).setExpirationTime(expiresIn).sign(new TextEncoder().encode(key));
}

function request(headers: Record<string, string>): Request {
  return new Request("http://local/fn", { headers });
}

describe("resolveCaller", () => {
  it("makes a verified session token a user, with any id Postgres stores", async () => {
    const token = await sign({ sub: userId, role: "authenticated" });
    const caller = await resolveCaller(request({ Authorization: `Bearer ${token}` }), { errors, verify });
    expect(caller).toMatchObject({ kind: "user", userId, verified: true, authorization: `Bearer ${token}`, claims: { sub: userId } });
  });

  it("makes a service_role token the service, and the anon key anonymous (keeping its token)", async () => {
    const service = await sign({ role: "service_role" });
    expect(await resolveCaller(request({ Authorization: `Bearer ${service}` }), { errors, verify })).toMatchObject({ kind: "service", verified: true });
    const anon = await sign({ role: "anon" });
    expect(await resolveCaller(request({ Authorization: `Bearer ${anon}` }), { errors, verify })).toMatchObject({ kind: "anonymous", authorization: `Bearer ${anon}` });
  });

  it("treats an authenticated token whose sub is not a UUID as anonymous", async () => {
    const token = await sign({ sub: "not-a-uuid", role: "authenticated" });
    expect(await resolveCaller(request({ Authorization: `Bearer ${token}` }), { errors, verify })).toMatchObject({ kind: "anonymous" });
  });

  it("takes an X-API-Key as is when there is no bearer token, for SQL to verify", async () => {
    expect(await resolveCaller(request({ "X-API-Key": " ork_live_abc " }), { errors, verify })).toEqual({ kind: "apiKey", key: "ork_live_abc" });
    const token = await sign({ sub: userId, role: "authenticated" });
    expect(await resolveCaller(request({ "X-API-Key": "k", Authorization: `Bearer ${token}` }), { errors, verify })).toMatchObject({ kind: "user" });
  });

  it("is anonymous without credentials", async () => {
    expect(await resolveCaller(request({}), { errors, verify })).toEqual({ kind: "anonymous", authorization: null, claims: null, verified: false });
  });

  it("refuses a header that is not Bearer <JWT>, a forged token and an expired one", async () => {
    await expect(resolveCaller(request({ Authorization: "Basic abc" }), { errors, verify })).rejects.toMatchObject({ code: "missing_credentials" });
    await expect(resolveCaller(request({ Authorization: "Bearer abc" }), { errors, verify })).rejects.toMatchObject({ code: "missing_credentials" });
    const forged = await sign({ sub: userId, role: "authenticated" }, "1h", "another-secret-with-at-least-32-characters!!");
    await expect(resolveCaller(request({ Authorization: `Bearer ${forged}` }), { errors, verify })).rejects.toMatchObject({ code: "invalid_token" });
    const expired = await sign({ sub: userId, role: "authenticated" }, Math.floor(Date.now() / 1000) - 10);
    await expect(resolveCaller(request({ Authorization: `Bearer ${expired}` }), { errors, verify })).rejects.toMatchObject({ code: "expired_token" });
    const elevated = await sign({ role: "postgres" });
    await expect(resolveCaller(request({ Authorization: `Bearer ${elevated}` }), { errors, verify })).rejects.toMatchObject({ code: "invalid_token" });
  });

  it("reads a token it cannot verify without judging it, marked unverified for PostgREST to check", async () => {
    const token = await sign({ sub: userId, role: "authenticated" }, "1h", "a-key-this-function-does-not-hold-at-all!!");
    expect(await resolveCaller(request({ Authorization: `Bearer ${token}` }), { errors, verify: unverifiable })).toMatchObject({ kind: "user", userId, verified: false });
    await expect(resolveCaller(request({ Authorization: "Bearer a.%%%.c" }), { errors, verify: unverifiable })).rejects.toMatchObject({ code: "missing_credentials" });
    await expect(resolveCaller(request({ Authorization: "Bearer YQ.YQ.YQ" }), { errors, verify: unverifiable })).rejects.toMatchObject({ code: "invalid_token" });
  });
});

describe("bearerToken", () => {
  it("takes a compact JWT after Bearer, in any case, and nothing else", () => {
    expect(bearerToken("Bearer a.b.c")).toBe("a.b.c");
    expect(bearerToken("bearer a.b.c")).toBe("a.b.c");
    expect(bearerToken("Bearer a.b")).toBeNull();
    expect(bearerToken("Bearer a.b.c d")).toBeNull();
    expect(bearerToken(null)).toBeNull();
  });
});
