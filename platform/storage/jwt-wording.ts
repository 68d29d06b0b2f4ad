import type { JwtFailure, VerificationKeys } from "../keys/verify-jwt.ts";

/**
 * Storage's words for a token the platform's verifier refused. Storage verifies with the `jose`
 * library and answers with its messages ("Invalid Compact JWS" for a missing token, "signature
 * verification failed", `"exp" claim timestamp check failed`...), which clients see, so each of the
 * verifier's reasons is given here the words jose has for the same fault (jwt-wording.test.ts
 * checks a corpus of tokens against jose itself). The two part only over tokens a key holder
 * crafts by hand (an HS256 header naming a published kid, an ES256 one naming none, a `crit`
 * header) and tokens with several faults, of which jose may name another first.
 */
export function joseWording(failure: JwtFailure, keys: VerificationKeys): string {
  switch (failure.reason) {
    case "segments":
      return "Invalid Compact JWS";
    case "header":
      return "JWS Protected Header is invalid";
    case "unknown_key":
    case "wrong_algorithm":
      return keyWording(failure.alg, keys);
    case "signature_encoding":
      return "Failed to base64url decode the signature";
    case "signature":
      return "signature verification failed";
    case "claims_encoding":
      return "Failed to base64url decode the payload";
    case "claims":
      return "JWT Claims Set must be a top-level JSON object";
    case "claim_type":
      return `"${failure.claim}" claim must be a number`;
    case "expired":
      return '"exp" claim timestamp check failed';
    case "not_yet_valid":
      return '"nbf" claim timestamp check failed';
    case "issued_in_future":
      return '"iat" claim timestamp check failed (it should be in the past)';
  }
}

/**
 * A token whose header names no key the stack has. Storage allows HS256, plus ES256 and RS256 when
 * the stack publishes signing keys, and looks an asymmetric token's key up by kid in those keys;
 * an HS256 token is checked against the secret whatever its kid says, so it fails on its signature.
 */
function keyWording(alg: unknown, keys: VerificationKeys): string {
  if (typeof alg !== "string" || alg === "") return 'JWS "alg" (Algorithm) Header Parameter missing or invalid';
  if (alg === "HS256") return "signature verification failed";
  const asymmetric = keys.byKid.size > 0 && (alg === "ES256" || alg === "RS256");
  return asymmetric ? "no applicable key found in the JSON Web Key Set" : '"alg" (Algorithm) Header Parameter value not allowed';
}
