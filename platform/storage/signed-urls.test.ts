import { describe, expect, it } from "vitest";
import { signHs256 } from "../keys/api-keys.ts";
import { secretOnly } from "../keys/verify-jwt.ts";
import { StorageFailure } from "./errors.ts";
import { signedUrlPath, signObjectToken, verifyObjectToken } from "./signed-urls.ts";

const key = secretOnly("a-test-secret-that-is-long-enough-for-hs256");

function failureOf(attempt: () => unknown): StorageFailure {
  try {
    attempt();
  } catch (error) {
    expect(error).toBeInstanceOf(StorageFailure);
    return error as StorageFailure;
  }
  throw new Error("the token was accepted");
}

describe("signed URL tokens", () => {
  it("accepts a fresh token on its own path", () => {
    const token = signObjectToken("docs", "a/b.pdf", 60, key);
    expect(verifyObjectToken(token, "docs", "a/b.pdf", key)).toEqual({ transformations: null });
    expect(signedUrlPath("docs", "a/b.pdf", token)).toBe(`/object/sign/docs/a/b.pdf?token=${token}`);
  });

  it("are shaped as Storage shapes them: header {alg, typ}, then url, iat and exp", () => {
    const [header, claims] = signObjectToken("docs", "a/b.pdf", 60, key).split(".").slice(0, 2).map((part) => JSON.parse(Buffer.from(part, "base64url").toString()));
    expect(header).toEqual({ alg: "HS256", typ: "JWT" });
    expect(Object.keys(claims)).toEqual(["url", "iat", "exp"]);
    expect(claims.exp - claims.iat).toBe(60);
  });

  it("refuses a token used on another path", () => {
    const token = signObjectToken("docs", "a/b.pdf", 60, key);
    expect(failureOf(() => verifyObjectToken(token, "docs", "a/c.pdf", key)).body()).toMatchObject({ code: "InvalidSignature" });
  });

  it("refuses an expired token with Storage's wording", () => {
    const now = Math.floor(Date.now() / 1000);
    const token = signHs256({ url: "docs/a.pdf", iat: now - 120, exp: now - 60 }, key.secret);
    expect(failureOf(() => verifyObjectToken(token, "docs", "a.pdf", key)).body()).toEqual({
      statusCode: "400",
      code: "InvalidJWT",
      error: "InvalidJWT",
      message: '"exp" claim timestamp check failed',
    });
  });

  it("refuses a token signed with another secret, and a missing one", () => {
    const token = signObjectToken("docs", "a.pdf", 60, secretOnly("another-secret-another-secret-another-secret"));
    expect(failureOf(() => verifyObjectToken(token, "docs", "a.pdf", key)).message).toBe("signature verification failed");
    expect(failureOf(() => verifyObjectToken(undefined, "docs", "a.pdf", key)).code).toBe("MissingParameter");
  });
});
