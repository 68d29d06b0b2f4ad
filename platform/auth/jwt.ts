import { signHs256 } from "../keys.ts";

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

/**
 * Signs an access token with the project secret (HS256, header `{alg, typ}`), keeping GoTrue's
 * claim order so tokens look the same as GoTrue's to anyone decoding them.
 */
export function signAccessToken(claims: AccessTokenClaims, secret: string): string {
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
  return signHs256(ordered as unknown as Record<string, unknown>, secret);
}
