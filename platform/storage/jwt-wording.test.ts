import { createHmac, generateKeyPairSync, sign } from "node:crypto";
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from "jose";
import { describe, expect, it } from "vitest";
import { secretOnly, verificationKeysFromJwks, type VerificationKeys } from "../keys/verify-jwt.ts";
import { StorageFailure } from "./errors.ts";
import { verifyToken } from "./identity.ts";

// Storage answers with the words of jose, which it verifies with; the platform verifies with its
// own verifier and words the reasons as jose would. jose itself is the judge here: every token of
// the corpus gets the same answer from both.

const SECRET = "a-test-secret-that-is-long-enough-for-hs256";
const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
const publicJwk = { ...publicKey.export({ format: "jwk" }), kid: "k1", alg: "ES256", use: "sig" };

const encode = (value: unknown) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");
const hmac = (input: string, secret = SECRET) => createHmac("sha256", secret).update(input).digest("base64url");

function hs256(claims: unknown, header: object = { alg: "HS256", typ: "JWT" }, secret = SECRET): string {
  const input = `${encode(header)}.${encode(claims)}`;
  return `${input}.${hmac(input, secret)}`;
}

function es256(claims: unknown, header: object = { alg: "ES256", kid: "k1", typ: "JWT" }): string {
  const input = `${encode(header)}.${encode(claims)}`;
  return `${input}.${sign("sha256", Buffer.from(input), { key: privateKey, dsaEncoding: "ieee-p1363" }).toString("base64url")}`;
}

/** What Storage's own check (jose, HS256 with the secret or the published keys by kid) answers. */
async function joseAnswer(token: string, jwks: JSONWebKeySet): Promise<string> {
  const published = jwks.keys.length > 0 ? createLocalJWKSet(jwks) : null;
  const secret = new TextEncoder().encode(SECRET);
  try {
    await jwtVerify(token, async (header, input) => (header.alg.startsWith("HS") || !published ? secret : published(header, input)), {
      algorithms: ["HS256", ...(published ? ["ES256", "RS256"] : [])],
    });
    return "accepted";
  } catch (error) {
    return (error as Error).message;
  }
}

function platformAnswer(token: string, keys: VerificationKeys): string {
  try {
    verifyToken(token, keys, (message) => new StorageFailure("AccessDenied", 403, message));
    return "accepted";
  } catch (error) {
    return (error as StorageFailure).message;
  }
}

const now = Math.floor(Date.now() / 1000);
const valid = { sub: "u1", role: "authenticated", exp: now + 3600 };
const signed = hs256(valid);
const [signedHeader, signedClaims] = signed.split(".");

const corpus: Record<string, string> = {
  "no token": "",
  "one segment": "abc",
  "two segments": "a.b",
  "four segments": `${signed}.x`,
  "a header that is not base64url": `!!!.${signedClaims}.x`,
  "a header that is not an object": hs256(valid, [] as unknown as object),
  "no alg": hs256(valid, { typ: "JWT" }),
  "alg none": `${encode({ alg: "none" })}.${signedClaims}.`,
  "alg HS512": hs256(valid, { alg: "HS512" }),
  "an HS256 token": signed,
  "an HS256 token with another secret": hs256(valid, undefined, "another-secret-another-secret-another-secret"),
  "a signature that is not base64url": `${signedHeader}.${signedClaims}.abc!`,
  "an ES256 token of the published key": es256(valid),
  "an ES256 token with a forged signature": `${es256(valid).split(".").slice(0, 2).join(".")}.${"A".repeat(86)}`,
  "an ES256 token of an unknown kid": es256(valid, { alg: "ES256", kid: "nobody" }),
  "an RS256 header naming the ES256 key": es256(valid, { alg: "RS256", kid: "k1" }),
  "an expired token": hs256({ ...valid, exp: now - 60 }),
  "a token not valid yet": hs256({ ...valid, nbf: now + 600 }),
  "a token issued in the future": hs256({ ...valid, iat: now + 600 }),
  "a null exp": hs256({ ...valid, exp: null }),
  "a text iat": hs256({ ...valid, iat: "yesterday" }),
  "a text nbf": hs256({ ...valid, nbf: "soon" }),
  "claims that are an array": hs256([1, 2]),
  "claims that are not JSON": hs256("not json"),
  "claims that are not base64url": (() => {
    const input = `${signedHeader}.%%%`;
    return `${input}.${hmac(input)}`;
  })(),
};

describe("storage's token refusals in jose's words", () => {
  const stacks: [string, VerificationKeys, JSONWebKeySet][] = [
    ["with a published signing key", verificationKeysFromJwks(SECRET, [publicJwk]), { keys: [publicJwk] as JSONWebKeySet["keys"] }],
    ["with the secret only", secretOnly(SECRET), { keys: [] }],
  ];
  for (const [stack, keys, jwks] of stacks) {
    it(`answers every token of the corpus as jose does, ${stack}`, async () => {
      const platform = Object.fromEntries(Object.entries(corpus).map(([name, token]) => [name, platformAnswer(token, keys)]));
      const jose = Object.fromEntries(await Promise.all(Object.entries(corpus).map(async ([name, token]) => [name, await joseAnswer(token, jwks)])));
      expect(platform).toEqual(jose);
    });
  }
});
