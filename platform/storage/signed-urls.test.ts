import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { StorageFailure } from "./errors.ts";
import type { StorageKeys } from "./identity.ts";
import { signedUrlPath, signObjectToken, verifyObjectToken } from "./signed-urls.ts";

const keysFor = (secret: string): StorageKeys => ({ secret: new TextEncoder().encode(secret), jwks: { keys: [] } });
const key = keysFor("a-test-secret-that-is-long-enough-for-hs256");

async function failureOf(promise: Promise<unknown>): Promise<StorageFailure> {
  const error = await promise.then(() => null, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(StorageFailure);
  return error as StorageFailure;
}

describe("signed URL tokens", () => {
  it("accepts a fresh token on its own path", async () => {
    const token = await signObjectToken("docs", "a/b.pdf", 60, key);
    await expect(verifyObjectToken(token, "docs", "a/b.pdf", key)).resolves.toEqual({ transformations: null });
    expect(signedUrlPath("docs", "a/b.pdf", token)).toBe(`/object/sign/docs/a/b.pdf?token=${token}`);
  });

  it("refuses a token used on another path", async () => {
    const token = await signObjectToken("docs", "a/b.pdf", 60, key);
    expect((await failureOf(verifyObjectToken(token, "docs", "a/c.pdf", key))).body()).toMatchObject({ code: "InvalidSignature" });
  });

  it("refuses an expired token with Storage's wording", async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ url: "docs/a.pdf" }).setProtectedHeader({ alg: "HS256" }).setIssuedAt(now - 120).setExpirationTime(now - 60).sign(key.secret);
    expect((await failureOf(verifyObjectToken(token, "docs", "a.pdf", key))).body()).toEqual({
      statusCode: "400",
      code: "InvalidJWT",
      error: "InvalidJWT",
      message: '"exp" claim timestamp check failed',
    });
  });

  it("refuses a token signed with another secret, and a missing one", async () => {
    const token = await signObjectToken("docs", "a.pdf", 60, keysFor("another-secret-another-secret-another-secret"));
    expect((await failureOf(verifyObjectToken(token, "docs", "a.pdf", key))).message).toBe("signature verification failed");
    expect((await failureOf(verifyObjectToken(undefined, "docs", "a.pdf", key))).code).toBe("MissingParameter");
  });
});
