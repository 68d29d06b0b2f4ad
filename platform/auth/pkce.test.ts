import { describe, expect, it } from "vitest";
import { AuthError } from "./errors.ts";
import { flowStateExpired } from "./flow-states.ts";
import { parseCodeChallengeMethod, pkceAuthenticationMethod, validatePkceParams, verifyCodeChallenge, withFlowPrefix } from "./pkce.ts";

// RFC 7636 Appendix B's example pair.
const VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const S256_CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

/** The error a call throws, for asserting its status, code and message together. */
function thrown(call: () => unknown): AuthError {
  try {
    call();
  } catch (error) {
    if (error instanceof AuthError) return error;
    throw error;
  }
  throw new Error("expected an AuthError");
}

describe("verifyCodeChallenge", () => {
  it("accepts the verifier whose SHA-256, base64url without padding, is the s256 challenge, in any case of the method", () => {
    expect(() => verifyCodeChallenge(S256_CHALLENGE, "s256", VERIFIER)).not.toThrow();
    expect(() => verifyCodeChallenge(S256_CHALLENGE, "S256", VERIFIER)).not.toThrow();
  });

  it("accepts a plain challenge only when it is the verifier itself", () => {
    expect(() => verifyCodeChallenge(VERIFIER, "plain", VERIFIER)).not.toThrow();
    expect(thrown(() => verifyCodeChallenge(VERIFIER, "PLAIN", `${VERIFIER}x`))).toMatchObject({ status: 400, code: "bad_code_verifier" });
  });

  it("refuses another verifier, a verifier of another length and the challenge given as the verifier with GoTrue's 400 bad_code_verifier", () => {
    const wrong = `${VERIFIER.slice(0, -1)}${VERIFIER.endsWith("k") ? "j" : "k"}`;
    for (const verifier of [wrong, `${VERIFIER}A`, S256_CHALLENGE, ""]) {
      expect(thrown(() => verifyCodeChallenge(S256_CHALLENGE, "s256", verifier))).toMatchObject({
        status: 400,
        code: "bad_code_verifier",
        message: "code challenge does not match previously saved code verifier",
      });
    }
  });

  it("refuses a method it does not know", () => {
    expect(thrown(() => verifyCodeChallenge(S256_CHALLENGE, "sha1", VERIFIER))).toMatchObject({ status: 400, code: "bad_code_verifier", message: "code challenge method not supported" });
  });
});

describe("validatePkceParams", () => {
  it("is the implicit flow without either, and a PKCE request with both", () => {
    expect(validatePkceParams(undefined, null)).toBeNull();
    expect(validatePkceParams("", "")).toBeNull();
    expect(validatePkceParams("s256", S256_CHALLENGE)).toEqual({ codeChallenge: S256_CHALLENGE, codeChallengeMethod: "s256" });
  });

  it("refuses one without the other, a challenge outside 43..128 characters or with other characters", () => {
    expect(thrown(() => validatePkceParams("s256", ""))).toMatchObject({ status: 400, code: "validation_failed", message: "PKCE flow requires code_challenge_method and code_challenge" });
    expect(thrown(() => validatePkceParams(null, S256_CHALLENGE))).toMatchObject({ status: 400, code: "validation_failed", message: "PKCE flow requires code_challenge_method and code_challenge" });
    expect(thrown(() => validatePkceParams("plain", "a".repeat(42)))).toMatchObject({ status: 400, code: "validation_failed", message: "code challenge has to be between 43 and 128 characters" });
    expect(thrown(() => validatePkceParams("plain", "a".repeat(129)))).toMatchObject({ code: "validation_failed" });
    expect(validatePkceParams("plain", "a".repeat(128))).not.toBeNull();
    expect(thrown(() => validatePkceParams("s256", `${S256_CHALLENGE.slice(0, -1)}=`))).toMatchObject({
      status: 400,
      code: "validation_failed",
      message: "code challenge can only contain alphanumeric characters, hyphens, periods, underscores and tildes",
    });
  });
});

describe("parseCodeChallengeMethod", () => {
  it("reads s256 and plain in any case and refuses anything else", () => {
    expect(parseCodeChallengeMethod("S256")).toBe("s256");
    expect(parseCodeChallengeMethod("Plain")).toBe("plain");
    expect(thrown(() => parseCodeChallengeMethod("sha512"))).toMatchObject({ status: 400, code: "validation_failed", message: 'unsupported code_challenge method "sha512"' });
  });
});

describe("link tokens and flow states", () => {
  it("prefixes a PKCE link's token with pkce_ and leaves an implicit one alone", () => {
    expect(withFlowPrefix("abc", "pkce")).toBe("pkce_abc");
    expect(withFlowPrefix("abc", "implicit")).toBe("abc");
  });

  it("names the authentication method of each e-mailed link type, and none for the others", () => {
    expect(pkceAuthenticationMethod("signup")).toBe("email/signup");
    expect(pkceAuthenticationMethod("magiclink")).toBe("magiclink");
    expect(pkceAuthenticationMethod("recovery")).toBe("recovery");
    expect(pkceAuthenticationMethod("email")).toBeNull();
    expect(pkceAuthenticationMethod("sms")).toBeNull();
  });

  it("expires a flow state 300 s after its creation, or a magic link's 300 s after its code was handed out", () => {
    const created = "2026-01-01T10:00:00Z";
    const at = (seconds: number) => Date.parse(created) + seconds * 1000;
    const recovery = { authentication_method: "recovery", auth_code_issued_at: "2026-01-01T10:04:00Z", created_at: created };
    expect(flowStateExpired(recovery, at(300))).toBe(false);
    expect(flowStateExpired(recovery, at(301))).toBe(true);
    const magic = { ...recovery, authentication_method: "magiclink" };
    expect(flowStateExpired(magic, at(301))).toBe(false);
    expect(flowStateExpired(magic, at(541))).toBe(true);
    expect(flowStateExpired({ ...magic, auth_code_issued_at: null }, at(301))).toBe(true);
  });
});
