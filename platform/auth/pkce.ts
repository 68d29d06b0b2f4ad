import { createHash, timingSafeEqual } from "node:crypto";
import { badRequest } from "./errors.ts";

/** How an e-mailed link completes: with a session in the redirect's fragment, or with an auth code to exchange. */
export type FlowType = "pkce" | "implicit";

/** The challenge methods GoTrue stores (its code_challenge_method enum). */
export type CodeChallengeMethod = "s256" | "plain";

/**
 * What a PKCE flow state was started by, as GoTrue names it (its AuthenticationMethod); the
 * session the code is exchanged for carries it as its `amr` method.
 */
export type PkceAuthenticationMethod = "email/signup" | "magiclink" | "recovery" | "invite" | "email_change";

/** A request's `code_challenge` and `code_challenge_method`, after validatePkceParams. */
export interface PkceRequest {
  codeChallenge: string;
  codeChallengeMethod: string;
}

/** GoTrue marks a link's token as belonging to a PKCE flow with this prefix; /verify reads it back. */
export const PKCE_PREFIX = "pkce_";

const MIN_CHALLENGE_LENGTH = 43;
const MAX_CHALLENGE_LENGTH = 128;
// RFC 7636 §4.2: the characters a challenge (and a verifier) may hold.
const CHALLENGE_CHARACTERS = /^[a-zA-Z._~0-9-]+$/;

/**
 * GoTrue's validatePKCEParams: a challenge and a method come together or not at all, and a
 * challenge is 43 to 128 unreserved characters. Returns the PKCE request, or null for the
 * implicit flow.
 */
export function validatePkceParams(codeChallengeMethod: string | null | undefined, codeChallenge: string | null | undefined): PkceRequest | null {
  const method = codeChallengeMethod ?? "";
  const challenge = codeChallenge ?? "";
  if ((challenge === "") !== (method === "")) throw badRequest("validation_failed", "PKCE flow requires code_challenge_method and code_challenge");
  if (challenge === "") return null;
  if (challenge.length < MIN_CHALLENGE_LENGTH || challenge.length > MAX_CHALLENGE_LENGTH) {
    throw badRequest("validation_failed", `code challenge has to be between ${MIN_CHALLENGE_LENGTH} and ${MAX_CHALLENGE_LENGTH} characters`);
  }
  if (!CHALLENGE_CHARACTERS.test(challenge)) throw badRequest("validation_failed", "code challenge can only contain alphanumeric characters, hyphens, periods, underscores and tildes");
  return { codeChallenge: challenge, codeChallengeMethod: method };
}

/**
 * GoTrue's ParseCodeChallengeMethod (case-insensitive). GoTrue lets an unknown method through to a
 * 500 when it builds the flow state; here it is the 400 validation_failed it should have been,
 * with GoTrue's wording.
 */
export function parseCodeChallengeMethod(method: string): CodeChallengeMethod {
  const lower = method.toLowerCase();
  if (lower === "s256" || lower === "plain") return lower;
  throw badRequest("validation_failed", `unsupported code_challenge method ${JSON.stringify(method)}`);
}

/** The token a link carries and the users row stores: the hash itself, or with GoTrue's `pkce_` prefix. */
export function withFlowPrefix(hash: string, flow: FlowType): string {
  return flow === "pkce" ? `${PKCE_PREFIX}${hash}` : hash;
}

/** The flow a request asked for: PKCE when it gave a challenge (GoTrue's getFlowFromChallenge). */
export function flowOf(pkce: PkceRequest | null): FlowType {
  return pkce ? "pkce" : "implicit";
}

/** Compares without revealing, through timing, how much of the expected value matched. */
function constantTimeEqual(expected: string, actual: string): boolean {
  const left = Buffer.from(expected, "utf8");
  const right = Buffer.from(actual, "utf8");
  // Lengths are not secret (a challenge's length follows from its method), only the contents.
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * GoTrue's VerifyPKCEChallenge: for s256 the verifier's SHA-256, base64url without padding, must
 * equal the challenge; for plain the verifier itself. A mismatch is 400 bad_code_verifier.
 */
export function verifyCodeChallenge(codeChallenge: string, method: string, codeVerifier: string): void {
  let expected: string;
  switch (method.toLowerCase()) {
    case "s256":
      expected = createHash("sha256").update(codeVerifier, "utf8").digest("base64url");
      break;
    case "plain":
      expected = codeVerifier;
      break;
    default:
      throw badRequest("bad_code_verifier", "code challenge method not supported");
  }
  if (!constantTimeEqual(codeChallenge, expected)) throw badRequest("bad_code_verifier", "code challenge does not match previously saved code verifier");
}

/**
 * The authentication method a PKCE link of this verification type completes (GoTrue's
 * ParseAuthenticationMethod of the link's type), or null for a type no e-mailed PKCE flow has.
 */
export function pkceAuthenticationMethod(verificationType: string): PkceAuthenticationMethod | null {
  switch (verificationType) {
    case "signup":
      return "email/signup";
    case "invite":
    case "magiclink":
    case "recovery":
    case "email_change":
      return verificationType;
    default:
      return null;
  }
}
