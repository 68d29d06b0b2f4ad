import { describe, expect, it } from "vitest";
import { signHs256 } from "../keys/api-keys.ts";
import { JwtVerificationError, secretOnly, verifyJwt } from "../keys/verify-jwt.ts";
import { signAccessToken } from "./jwt.ts";

const SECRET = "super-secret-jwt-token-with-at-least-32-characters-long";
const claims = {
  iss: "http://127.0.0.1:54321/auth/v1",
  sub: "0b6f0c1e-5d0c-4b7a-9a59-3f1f9f1e2a10",
  aud: "authenticated",
  exp: 2_000_000_000,
  iat: 1_999_996_400,
  email: "a@example.test",
  phone: "",
  app_metadata: { provider: "email", providers: ["email"] },
  user_metadata: {},
  role: "authenticated",
  aal: "aal1",
  amr: [{ method: "password", timestamp: 1_999_996_400 }],
  session_id: "5a0b4f57-3a57-4d0c-a2a2-0d0f2c8a9f11",
  is_anonymous: false,
};

describe("access tokens", () => {
  it("are HS256 with GoTrue's claim order and verify with the same secret", () => {
    const token = signAccessToken({ ...claims, is_anonymous: false }, { secret: SECRET, signing: null });
    expect(JSON.parse(Buffer.from(token.split(".")[0], "base64url").toString())).toEqual({ alg: "HS256", typ: "JWT" });
    const payload = JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString());
    expect(Object.keys(payload)).toEqual(Object.keys(claims));
    expect(verifyJwt(token, secretOnly(SECRET), 1_999_999_000)).toMatchObject({ sub: claims.sub, role: "authenticated" });
  });

  it("are refused when forged, expired, premature or malformed, with golang-jwt's wording", () => {
    const token = signAccessToken(claims, { secret: SECRET, signing: null });
    expect(() => verifyJwt(token, secretOnly("another-secret-another-secret-another"), 1_999_999_000)).toThrow("token signature is invalid: signature is invalid");
    expect(() => verifyJwt(token, secretOnly(SECRET), 2_000_000_000)).toThrow("token has invalid claims: token is expired");
    expect(() => verifyJwt(token, secretOnly(SECRET), 1_999_990_000)).toThrow("token has invalid claims: token used before issued");
    expect(() => verifyJwt("abc.def", secretOnly(SECRET))).toThrow("token is malformed: token contains an invalid number of segments");
    const notBefore = signHs256({ sub: "x", nbf: 2_100_000_000 }, SECRET);
    expect(() => verifyJwt(notBefore, secretOnly(SECRET), 2_000_000_000)).toThrow(JwtVerificationError);
  });

  it("accept the CLI's API-key tokens (no sub, no iat)", () => {
    const key = signHs256({ iss: "supabase-demo", role: "service_role", exp: 1983812996 }, SECRET);
    expect(verifyJwt(key, secretOnly(SECRET), 1_900_000_000)).toEqual({ iss: "supabase-demo", role: "service_role", exp: 1983812996 });
  });
});
