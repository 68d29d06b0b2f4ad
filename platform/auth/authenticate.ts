import { ADMIN_ROLES, type AuthContext } from "./context.ts";
import { AuthError, badRequest, forbidden } from "./errors.ts";
import { JwtVerificationError, verifyJwt, type VerifiedClaims } from "../keys/verify-jwt.ts";
import { findSession, type SessionRow } from "./sessions-repository.ts";
import { isBanned } from "./tokens.ts";
import { findUserById, type UserRecord } from "./users-repository.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NIL_UUID = "00000000-0000-0000-0000-000000000000";

/** Whether a string is a UUID in canonical form. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** The bearer token of the request; GoTrue answers 401 no_authorization without one. */
export function bearerToken(request: Request): string {
  const match = /^[Bb]earer (\S+)$/.exec(request.headers.get("authorization") ?? "");
  if (!match) throw new AuthError(401, "no_authorization", "This endpoint requires a valid Bearer token");
  return match[1];
}

/** Verifies the bearer token; a bad signature or an expired token is 403 bad_jwt. */
export function verifiedClaims(request: Request, context: AuthContext): VerifiedClaims {
  const token = bearerToken(request);
  try {
    return verifyJwt(token, context.keys);
  } catch (error) {
    if (error instanceof JwtVerificationError) throw forbidden("bad_jwt", `invalid JWT: unable to parse or verify signature, ${error.message}`);
    throw error;
  }
}

/** A caller authenticated as a user: the token's claims, the user and, when the token names one, the session. */
export interface UserCaller {
  claims: VerifiedClaims;
  record: UserRecord;
  session: SessionRow | null;
}

/**
 * GoTrue's requireAuthentication for /user and /logout: the token must name an existing user (403
 * user_not_found otherwise) and, through session_id, a live session (403 session_not_found, which
 * auth-js turns into AuthSessionMissingError). A banned user is refused with 403 user_banned.
 */
export async function requireUser(request: Request, context: AuthContext): Promise<UserCaller> {
  const claims = verifiedClaims(request, context);
  if (typeof claims.sub !== "string" || claims.sub === "") throw forbidden("bad_jwt", "invalid claim: missing sub claim");
  if (!isUuid(claims.sub)) throw badRequest("bad_jwt", "invalid claim: sub claim must be a UUID");
  const record = await findUserById(context.db, claims.sub);
  if (!record) throw forbidden("user_not_found", "User from sub claim in JWT does not exist");
  let session: SessionRow | null = null;
  const sessionId = claims.session_id;
  if (typeof sessionId === "string" && sessionId !== "" && sessionId !== NIL_UUID) {
    if (!isUuid(sessionId)) throw forbidden("bad_jwt", "invalid claim: session_id claim must be a UUID");
    session = await findSession(context.db, sessionId);
    if (!session) throw forbidden("session_not_found", "Session from session_id claim in JWT does not exist");
  }
  if (isBanned(record)) throw forbidden("user_banned", "User is banned");
  return { claims, record, session };
}

/** The role of an admin caller, recorded as the actor of admin audit entries. */
export interface AdminCaller {
  role: string;
}

/**
 * GoTrue's requireAdminCredentials for /admin/*: a valid token whose `role` is an admin role.
 * The anon key (or a user token) is 403 not_admin "User not allowed".
 */
export function requireAdmin(request: Request, context: AuthContext): AdminCaller {
  const claims = verifiedClaims(request, context);
  const role = typeof claims.role === "string" ? claims.role : "";
  if (!ADMIN_ROLES.includes(role)) throw forbidden("not_admin", "User not allowed");
  return { role };
}
