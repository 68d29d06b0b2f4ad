import type { AuthContext } from "./context.ts";
import type { Db } from "./db.ts";
import type { PkceAuthenticationMethod } from "./pkce.ts";
import { AuthError, badRequest, internalError, OAuthError } from "./errors.ts";
import { signAccessToken } from "./jwt.ts";
import { recordAudit } from "./audit-log.ts";
import {
  addAmrClaim,
  createSession,
  deleteRefreshToken,
  findActiveRefreshToken,
  findRefreshToken,
  findSession,
  insertRefreshToken,
  listAmrClaims,
  revokeRefreshToken,
  reuseWindowClosed,
  revokeTokenFamily,
  touchSession,
  type ClientInfo,
} from "./sessions-repository.ts";
import { sortedKeys, userJson, type UserJson } from "./user-json.ts";
import { findUserById, updateUser, type UserRecord } from "./users-repository.ts";

/** The session object token endpoints answer with (auth-js `Session`). */
export interface SessionJson {
  access_token: string;
  token_type: "bearer";
  expires_in: number;
  expires_at: number;
  refresh_token: string;
  user: UserJson;
  weak_password?: { message: string; reasons: string[] };
}

/** How the session was authenticated, as recorded in mfa_amr_claims and the `amr` claim. */
export type AuthenticationMethod = "password" | "anonymous" | "otp" | "email_change" | "totp" | PkceAuthenticationMethod;

/** Whether a ban is in force (GoTrue's IsBanned: banned_until in the future). */
export function isBanned(record: UserRecord, now = Date.now()): boolean {
  const until = record.user.banned_until;
  return until !== null && Date.parse(until) > now;
}

/** Signs an access token for a user in a session, with the session's aal and amr. */
async function accessTokenFor(db: Db, context: AuthContext, record: UserRecord, sessionId: string): Promise<{ token: string; expiresAt: number }> {
  const session = await findSession(db, sessionId);
  const amr = await listAmrClaims(db, sessionId);
  const issuedAt = Math.floor(Date.now() / 1000);
  const expiresAt = issuedAt + context.settings.jwtExpiry;
  const { user } = record;
  const token = signAccessToken(
    {
      iss: context.config.jwtIssuer,
      sub: user.id,
      aud: user.aud ?? "",
      exp: expiresAt,
      iat: issuedAt,
      email: user.email ?? "",
      phone: user.phone ?? "",
      app_metadata: sortedKeys(user.raw_app_meta_data ?? {}) as Record<string, unknown>,
      user_metadata: sortedKeys(user.raw_user_meta_data ?? {}) as Record<string, unknown>,
      role: user.role ?? "",
      aal: session?.aal ?? "aal1",
      amr,
      session_id: sessionId,
      is_anonymous: user.is_anonymous,
    },
    context.keys,
  );
  return { token, expiresAt };
}

async function sessionJson(db: Db, context: AuthContext, userId: string, sessionId: string, refreshToken: string): Promise<SessionJson> {
  const record = await findUserById(db, userId);
  if (!record) throw internalError("Database error granting user");
  const { token, expiresAt } = await accessTokenFor(db, context, record, sessionId);
  return {
    access_token: token,
    token_type: "bearer",
    expires_in: context.settings.jwtExpiry,
    expires_at: expiresAt,
    refresh_token: refreshToken,
    user: userJson(record),
  };
}

/**
 * Starts a session for a user who just proved who they are (GoTrue's issueRefreshToken): stamps
 * last_sign_in_at, creates the session, its first refresh token and its amr claim, and signs the
 * access token. Call inside the caller's transaction so a failure leaves nothing behind.
 */
export async function issueSession(db: Db, context: AuthContext, userId: string, method: AuthenticationMethod, client: ClientInfo): Promise<SessionJson> {
  await updateUser(db, userId, { last_sign_in_at: "now" });
  const sessionId = await createSession(db, userId, client);
  const refreshToken = await insertRefreshToken(db, userId, sessionId, null);
  await addAmrClaim(db, sessionId, method);
  return sessionJson(db, context, userId, sessionId, refreshToken);
}

/**
 * GoTrue's updateMFASessionAndClaims after a verified second factor: the session gains the amr
 * claim and aal2 (through that factor), its live refresh token is swapped for a new one (so the
 * aal1 token cannot mint aal2 sessions), and a fresh access token says so.
 */
export async function upgradeSession(db: Db, context: AuthContext, userId: string, sessionId: string, method: AuthenticationMethod, factorId: string): Promise<SessionJson> {
  await addAmrClaim(db, sessionId, method);
  const active = await findActiveRefreshToken(db, sessionId);
  if (active) await revokeRefreshToken(db, active.id);
  const refreshToken = await insertRefreshToken(db, userId, sessionId, active?.token ?? null);
  await db`update auth.sessions set aal = 'aal2', factor_id = ${factorId}, updated_at = now() where id = ${sessionId}`;
  return sessionJson(db, context, userId, sessionId, refreshToken);
}

/** What the locked part of a refresh decided: a session to answer with, or an error to raise after commit. */
type RefreshOutcome = { session: SessionJson } | { error: AuthError };

/**
 * The refresh_token grant with GoTrue's rotation rules: a live token is swapped for a child; the
 * revoked parent of the session's live token returns that live token (the client lost the previous
 * answer); another revoked token is honoured only within refresh_token_reuse_interval of its
 * revocation, and outside it the whole session's tokens are revoked and 400 refresh_token_already_used
 * answers (after committing the revocation).
 */
export async function refreshSession(context: AuthContext, refreshToken: string | null | undefined, client: ClientInfo): Promise<SessionJson> {
  if (!refreshToken) throw new OAuthError("invalid_request", "refresh_token required");
  const { db, settings } = context;
  const found = await findRefreshToken(db, refreshToken);
  if (!found) throw badRequest("refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found");
  const owner = await findUserById(db, found.user_id);
  if (!owner) throw badRequest("refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found");
  if (isBanned(owner)) throw badRequest("user_banned", "Invalid Refresh Token: User Banned");
  const session = found.session_id ? await findSession(db, found.session_id) : null;
  if (!session) {
    // Tokens from before sessions existed cannot be refreshed; GoTrue deletes them.
    await deleteRefreshToken(db, found.id);
    throw badRequest("session_not_found", "Invalid Refresh Token: No Valid Session Found");
  }
  if (session.not_after !== null && Date.parse(session.not_after) < Date.now()) {
    throw badRequest("session_expired", "Invalid Refresh Token: Session Expired");
  }

  const outcome = await db.begin(async (tx): Promise<RefreshOutcome> => {
    const token = await findRefreshToken(tx, refreshToken, true);
    const locked = token?.session_id ? await findSession(tx, token.session_id, true) : null;
    if (!token || !locked) return { error: badRequest("refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found") };
    const user = await findUserById(tx, token.user_id);
    if (!user) return { error: badRequest("refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found") };

    let issued: string | null = null;
    if (token.revoked) {
      const active = await findActiveRefreshToken(tx, locked.id);
      if (active && active.parent === token.token) {
        issued = active.token;
      } else {
        if (await reuseWindowClosed(tx, token.id, settings.refreshTokenReuseInterval)) {
          if (settings.enableRefreshTokenRotation) await revokeTokenFamily(tx, locked.id);
          return { error: badRequest("refresh_token_already_used", "Invalid Refresh Token: Already Used") };
        }
      }
    }
    await recordAudit(tx, user.user, "token_refreshed", client.ip);
    if (issued === null) {
      await recordAudit(tx, user.user, "token_revoked", client.ip);
      await revokeRefreshToken(tx, token.id);
      issued = await insertRefreshToken(tx, user.user.id, locked.id, token.token);
    }
    await touchSession(tx, locked.id, client);
    return { session: await sessionJson(tx, context, user.user.id, locked.id, issued) };
  });
  if ("error" in outcome) throw outcome.error;
  return outcome.session;
}
