/**
 * The one way to turn a request into the principal it acts for:
 *
 * - `user`: a Supabase session JWT (role `authenticated`, `sub` a UUID);
 * - `service`: a token with role `service_role` (the back office, server-side code);
 * - `apiKey`: an `X-API-Key` header and no bearer token. Only the raw value is taken here: keys
 *   are verified in SQL by whoever receives them (their storage is being built in the database);
 * - `anonymous`: no credentials, or the anon key (a JWT with role `anon`).
 *
 * A bearer token is verified when the function holds its key (SUPABASE_JWKS, through
 * auth/jwt-claims.ts): a forged or expired one is refused here. A token the function cannot judge
 * (signed by a key it does not hold) is read without verification and marked `verified: false`;
 * such a principal may only be used through PostgREST with its own `authorization`, which then
 * verifies the token, as every service has done since the start. Functions deployed with
 * `verify_jwt = true` get tokens the runtime has already checked.
 */
import { decodeJwt, type JWTPayload } from "jose";
import { readEnv } from "../config/env.ts";
import { createClaimsVerifier, type ClaimsVerifier } from "../auth/jwt-claims.ts";
import type { ServiceErrors } from "./errors.ts";
import { isUuid } from "./uuid.ts";

/** What a bearer token gave: the header to forward, its claims, and whether they were verified here. */
export interface TokenCredentials {
  authorization: string;
  claims: JWTPayload;
  verified: boolean;
}

/** Who a request acts for (see the module comment). */
export type Principal =
  | ({ kind: "user"; userId: string } & TokenCredentials)
  | ({ kind: "service" } & TokenCredentials)
  | { kind: "apiKey"; key: string }
  | ({ kind: "anonymous" } & (TokenCredentials | { authorization: null; claims: null; verified: false }));

/** A principal that presented a bearer token (anything but an API key or no credentials). */
export type TokenPrincipal = Extract<Principal, { authorization: string }>;

/** The token of an `Authorization: Bearer <compact JWT>` header, or null for anything else. */
export function bearerToken(header: string | null): string | null {
  return /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/i.exec(header?.trim() ?? "")?.[1] ?? null;
}

/** Options of `resolveCaller`. */
export interface CallerOptions {
  errors: Pick<ServiceErrors, "describe">;
  /** Checks tokens; the default uses SUPABASE_JWKS. */
  verify?: ClaimsVerifier;
}

let defaultVerifier: ClaimsVerifier | undefined;

/** The verifier built from SUPABASE_JWKS, once per function instance. */
export function projectVerifier(): ClaimsVerifier {
  defaultVerifier ??= createClaimsVerifier(readEnv("SUPABASE_JWKS"));
  return defaultVerifier;
}

/** The principal a token's claims describe. */
function principalOf(credentials: TokenCredentials): Principal {
  const { claims } = credentials;
  if (claims.role === "service_role") return { kind: "service", ...credentials };
  if (claims.role === "authenticated" && isUuid(claims.sub)) return { kind: "user", userId: claims.sub, ...credentials };
  return { kind: "anonymous", ...credentials };
}

/**
 * The principal behind `request`. Throws the service's error for an Authorization header that is
 * present but not `Bearer <JWT>` (missing_credentials), and for a token that fails verification
 * (invalid_token, expired_token) or whose role is not an API role.
 */
export async function resolveCaller(request: Request, { errors, verify = projectVerifier() }: CallerOptions): Promise<Principal> {
  const header = request.headers.get("authorization");
  if (header === null || header.trim() === "") {
    const key = request.headers.get("x-api-key")?.trim();
    if (key) return { kind: "apiKey", key };
    return { kind: "anonymous", authorization: null, claims: null, verified: false };
  }
  const token = bearerToken(header);
  if (!token) throw errors.describe({ kind: "missing_credentials" });
  const authorization = `Bearer ${token}`;
  const check = await verify(token);
  if (check.status === "valid") return principalOf({ authorization, claims: check.claims, verified: true });
  if (check.status === "expired") throw errors.describe({ kind: "expired_token", reason: check.reason });
  if (check.status === "invalid") throw errors.describe({ kind: "invalid_token", reason: check.reason });
  let claims: JWTPayload;
  try {
    claims = decodeJwt(token);
  } catch {
    throw errors.describe({ kind: "invalid_token", reason: "the token's payload is not readable" });
  }
  return principalOf({ authorization, claims, verified: false });
}
