import { Hono } from "hono";
import { mergeMetadata, refreshProviders, reload, storeNewPassword, upsertContactIdentity, validateEmail, validatePhone } from "./accounts.ts";
import { recordAudit } from "./audit-log.ts";
import { requireUser } from "./authenticate.ts";
import { ADMIN_ROLES, clientInfo, requestAudience, type AuthContext } from "./context.ts";
import type { Db } from "./db.ts";
import { AuthError, badRequest, forbidden, unprocessable } from "./errors.ts";
import { completeEmailChange, sendEmailChange } from "./email-actions.ts";
import { startFlow } from "./flow-states.ts";
import { flowOf } from "./pkce.ts";
import { clearAllOneTimeTokens } from "./one-time-tokens.ts";
import { otpExpired, tokenHash } from "./otp.ts";
import { referrer } from "./redirects.ts";
import type { SessionRow } from "./sessions-repository.ts";
import { sendPhoneOtp } from "./sms.ts";
import type { UserRow } from "./users-repository.ts";
import { checkPasswordStrength, hashPassword, verifyPassword } from "./passwords.ts";
import { readBody } from "./request-body.ts";
import { userUpdateBody } from "./schemas.ts";
import { userJson } from "./user-json.ts";
import { findUserByPhone, findUserHoldingEmail, updateUser } from "./users-repository.ts";

const INVALID_NONCE = "Nonce has expired or is invalid";

/** A session older than this needs a reauthentication nonce to change the password (with secure_password_change). */
const RECENT_SIGN_IN_MS = 24 * 60 * 60 * 1000;

/**
 * GoTrue's verifyReauthentication: the nonce is the code GET /reauthenticate sent, checked against
 * the stored hash within the e-mail (or SMS) expiry, and used up.
 */
async function useNonce(db: Db, context: AuthContext, user: UserRow, nonce: string): Promise<void> {
  if (!user.reauthentication_token || user.reauthentication_sent_at === null) throw unprocessable("reauthentication_not_valid", INVALID_NONCE);
  const byEmail = Boolean(user.email);
  const address = byEmail ? (user.email ?? "") : (user.phone ?? "");
  const expiry = byEmail ? context.settings.emailOtpExpiry : context.settings.smsOtpExpiry;
  const valid = user.reauthentication_token === tokenHash(address, nonce) && !otpExpired(user.reauthentication_sent_at, expiry);
  if (!valid) throw unprocessable("reauthentication_not_valid", INVALID_NONCE);
  await updateUser(db, user.id, { reauthentication_token: "" });
  await clearAllOneTimeTokens(db, user.id);
}

/** Whether the caller's session is old enough that secure_password_change asks for a nonce. */
function needsNonce(session: SessionRow | null): boolean {
  return session === null || session.created_at === null || Date.now() > Date.parse(session.created_at) + RECENT_SIGN_IN_MS;
}

/** GET /user: the caller's own user, if the token's audience is the one asked for. */
async function getUser(context: AuthContext, request: Request): Promise<Response> {
  const caller = await requireUser(request, context);
  const aud = caller.claims.aud;
  const audiences = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : [];
  if (audiences.length === 0 || audiences[0] !== requestAudience(request)) {
    throw forbidden("unexpected_audience", "Token audience doesn't match request audience");
  }
  return Response.json(userJson(caller.record));
}

/**
 * PUT /user as GoTrue's UserUpdate: password (not the same as the current one; other sessions are
 * signed out; with secure_password_change a session over a day old needs the nonce of GET
 * /reauthenticate), user_metadata merged key by key, app_metadata only for admin roles, an email
 * change that waits for confirmation by mail (`new_email`), as on `supabase start`, and a phone
 * change (confirmed at once with `[auth.sms] enable_confirmations = false`, else by SMS code). A
 * user with a verified MFA factor changes e-mail, phone or password only from an aal2 session.
 */
async function updateOwnUser(context: AuthContext, request: Request): Promise<Response> {
  const caller = await requireUser(request, context);
  const body = await readBody(request, userUpdateBody);
  const { user } = caller.record;
  const email = body.email ? validateEmail(body.email) : "";
  const phone = body.phone ? validatePhone(body.phone) : "";
  const password = body.password ?? null;
  if (password !== null) checkPasswordStrength(password, context.settings);
  if (body.app_metadata && !ADMIN_ROLES.includes(user.role ?? "")) {
    throw forbidden("not_admin", "Updating app_metadata requires admin privileges");
  }
  const hasVerifiedFactor = caller.record.factors.some((factor) => factor.status === "verified");
  const changesSecrets = (password !== null && password !== "") || (email !== "" && email !== user.email) || (phone !== "" && phone !== user.phone);
  if (hasVerifiedFactor && changesSecrets && caller.session?.aal !== "aal2") {
    throw new AuthError(401, "insufficient_aal", "AAL2 session is required to update email or password when MFA is enabled.");
  }
  if (user.is_anonymous && password !== null && password !== "" && email === "" && phone === "") {
    throw unprocessable("validation_failed", "Updating password of an anonymous user without an email or phone is not allowed");
  }
  const aud = requestAudience(request);
  if (email !== "" && email !== user.email && (await findUserHoldingEmail(context.db, email, aud, user.id))) {
    throw unprocessable("email_exists", "A user with this email address has already been registered");
  }
  if (phone !== "" && phone !== user.phone) {
    const holder = await findUserByPhone(context.db, phone, aud);
    if (holder && holder.user.id !== user.id) throw unprocessable("phone_exists", "A user with this phone number has already been registered");
  }
  const nonce = body.nonce ?? "";
  const nonceRequired = password !== null && context.settings.securePasswordChange && needsNonce(caller.session);
  if (nonceRequired && nonce === "") throw badRequest("reauthentication_needed", "Password update requires reauthentication");
  let newHash: string | null = null;
  if (password !== null) {
    if (password !== "" && (await verifyPassword(password, user.encrypted_password))) {
      throw unprocessable("same_password", "New password should be different from the old password.");
    }
    newHash = password === "" ? null : await hashPassword(password);
  }

  const client = clientInfo(request);
  const redirectTo = referrer(request, context.settings);
  const updated = await context.db.begin(async (tx) => {
    if (nonceRequired) await useNonce(tx, context, user, nonce);
    if (password !== null) {
      await storeNewPassword(tx, user.id, newHash, caller.session?.id ?? null);
      await recordAudit(tx, user, "user_updated_password", client.ip);
    }
    if (body.data) await updateUser(tx, user.id, { raw_user_meta_data: mergeMetadata(user.raw_user_meta_data, body.data) });
    if (body.app_metadata) await updateUser(tx, user.id, { raw_app_meta_data: mergeMetadata(user.raw_app_meta_data, body.app_metadata) });
    if (email !== "" && email !== user.email) {
      if (user.is_anonymous && context.settings.mailerAutoconfirm) {
        // An anonymous user adding an email is a signup; with autoconfirm GoTrue applies it at once.
        await updateUser(tx, user.id, { email_change: email });
        await completeEmailChange(tx, (await reload(tx, user.id)).user, client.ip);
      } else {
        // GoTrue checks no PKCE parameters here beyond the method its flow state needs.
        const pkce = body.code_challenge ? { codeChallenge: body.code_challenge, codeChallengeMethod: body.code_challenge_method ?? "" } : null;
        await startFlow(tx, user.id, "email_change", pkce);
        await sendEmailChange(tx, context, (await reload(tx, user.id)).user, email, redirectTo, flowOf(pkce));
      }
    }
    if (phone !== "" && phone !== user.phone) {
      if (context.settings.smsAutoconfirm) {
        // With `[auth.sms] enable_confirmations = false` GoTrue confirms a phone change at once.
        await upsertContactIdentity(tx, await reload(tx, user.id), "phone", phone, true);
        await updateUser(tx, user.id, { phone, phone_confirmed_at: "now", is_anonymous: false });
        await refreshProviders(tx, user.id);
      } else {
        await sendPhoneOtp(tx, context, (await reload(tx, user.id)).user, phone, "phone_change");
      }
    }
    await recordAudit(tx, user, "user_modified", client.ip);
    return reload(tx, user.id);
  });
  return Response.json(userJson(updated));
}

/** Routes for GET and PUT /user. */
export function userRoutes(context: AuthContext): Hono {
  const app = new Hono();
  app.get("/user", (c) => getUser(context, c.req.raw));
  app.put("/user", (c) => updateOwnUser(context, c.req.raw));
  return app;
}
