import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { createClaimsVerifier } from "./jwt-claims.ts";

const secret = "a-local-jwt-secret-with-at-least-32-characters";
const octJwks = JSON.stringify({ keys: [{ kty: "oct", k: Buffer.from(secret).toString("base64url"), alg: "HS256" }] });

function hs256(claims: Record<string, unknown>, key = secret, expiresIn: string | number = "1h") {
  return new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "JWT" }).setExpirationTime(expiresIn).sign(new TextEncoder().encode(key));
}

describe("createClaimsVerifier", () => {
  it("accepts a session token signed with the project's shared secret and returns its claims", async () => {
    const verify = createClaimsVerifier(octJwks);
    const check = await verify(await hs256({ sub: "user-1", role: "authenticated" }));
    expect(check).toMatchObject({ status: "valid", claims: { sub: "user-1", role: "authenticated" } });
  });

  it("reports an expired token as expired, and a forged or tampered one as invalid", async () => {
    const verify = createClaimsVerifier(octJwks);
    expect((await verify(await hs256({ role: "authenticated" }, secret, Math.floor(Date.now() / 1000) - 10)))).toMatchObject({ status: "expired" });
    expect(await verify(await hs256({ role: "authenticated" }, "another-secret-with-at-least-32-characters!"))).toMatchObject({ status: "invalid" });
    const [header, , signature] = (await hs256({ role: "authenticated" })).split(".");
    const payload = Buffer.from(JSON.stringify({ role: "service_role" })).toString("base64url");
    expect(await verify(`${header}.${payload}.${signature}`)).toMatchObject({ status: "invalid" });
    expect(await verify("not-a.jwt.at-all")).toMatchObject({ status: "invalid" });
  });

  it("refuses a correctly signed token whose role is not an API role", async () => {
    const verify = createClaimsVerifier(octJwks);
    expect(await verify(await hs256({ role: "postgres" }))).toMatchObject({ status: "invalid" });
    expect(await verify(await hs256({ sub: "no-role" }))).toMatchObject({ status: "invalid" });
  });

  it("verifies asymmetric tokens against the published keys by kid", async () => {
    const { publicKey, privateKey } = await generateKeyPair("ES256");
    const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: "key-1", alg: "ES256" }] });
    const verify = createClaimsVerifier(jwks);
    const token = await new SignJWT({ role: "authenticated", sub: "user-2" }).setProtectedHeader({ alg: "ES256", kid: "key-1" }).setExpirationTime("1h").sign(privateKey);
    expect(await verify(token)).toMatchObject({ status: "valid", claims: { sub: "user-2" } });
    const other = await generateKeyPair("ES256");
    const forged = await new SignJWT({ role: "authenticated" }).setProtectedHeader({ alg: "ES256", kid: "key-1" }).setExpirationTime("1h").sign(other.privateKey);
    expect(await verify(forged)).toMatchObject({ status: "invalid" });
  });

  it("leaves tokens it holds no key for to someone else: no key set, no shared secret, an unknown kid", async () => {
    const token = await hs256({ role: "authenticated" });
    expect(await createClaimsVerifier(undefined)(token)).toEqual({ status: "unverifiable" });
    expect(await createClaimsVerifier("not json")(token)).toEqual({ status: "unverifiable" });
    const { publicKey, privateKey } = await generateKeyPair("ES256");
    const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: "key-1", alg: "ES256" }] });
    expect(await createClaimsVerifier(jwks)(token)).toEqual({ status: "unverifiable" });
    const unknownKid = await new SignJWT({ role: "authenticated" }).setProtectedHeader({ alg: "ES256", kid: "rotated-away" }).setExpirationTime("1h").sign(privateKey);
    expect(await createClaimsVerifier(jwks)(unknownKid)).toEqual({ status: "unverifiable" });
  });
});
