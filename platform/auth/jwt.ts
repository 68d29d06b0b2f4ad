import { signHs256 } from "../keys/api-keys.ts";
import { signWithKey, type SigningKey } from "../keys/signing-keys.ts";

/** One `amr` entry: how and when the session was authenticated. */
export interface AmrEntry {
  method: string;
  timestamp: number;
}

/** The claims of a user access token, in the order GoTrue serialises them. */
export interface AccessTokenClaims {
  iss: string;
  sub: string;
  aud: string;
  exp: number;
  iat: number;
  email: string;
  phone: string;
  app_metadata: Record<string, unknown>;
  user_metadata: Record<string, unknown>;
  role: string;
  aal: string;
  amr: AmrEntry[];
  session_id: string;
  is_anonymous: boolean;
}

/** What signs access tokens: the signing key when `signing_keys_path` has one, else the secret. */
export interface TokenSigner {
  secret: string;
  signing: SigningKey | null;
}

/**
 * Signs an access token as GoTrue does: with the signing key (ES256/RS256, header `{alg, kid,
 * typ}`) when there is one, else with the project secret (HS256, header `{alg, typ}`), keeping
 * GoTrue's claim order so tokens look the same as GoTrue's to anyone decoding them.
 */
export function signAccessToken(claims: AccessTokenClaims, signer: TokenSigner): string {
  const ordered: AccessTokenClaims = {
    iss: claims.iss,
    sub: claims.sub,
    aud: claims.aud,
    exp: claims.exp,
    iat: claims.iat,
    email: claims.email,
    phone: claims.phone,
    app_metadata: claims.app_metadata,
    user_metadata: claims.user_metadata,
    role: claims.role,
    aal: claims.aal,
    amr: claims.amr,
    session_id: claims.session_id,
    is_anonymous: claims.is_anonymous,
  };
  if (!signer.signing) return signHs256(ordered as unknown as Record<string, unknown>, signer.secret);
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = `${encode({ alg: signer.signing.alg, kid: signer.signing.kid, typ: "JWT" })}.${encode(ordered)}`;
  return `${unsigned}.${signWithKey(unsigned, signer.signing)}`;
}
