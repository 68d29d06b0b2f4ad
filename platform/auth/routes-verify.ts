import { Hono } from "hono";
import { confirmEmail, refreshProviders, reload, storeNewPassword, upsertContactIdentity, validateEmail, validatePhone } from "./accounts.ts";
import { recordAudit } from "./audit-log.ts";
import { clientInfo, requestAudience, type AuthContext } from "./context.ts";
import type { Db } from "./db.ts";
import { completeEmailChange } from "./email-actions.ts";
import { AuthError, badRequest, forbidden } from "./errors.ts";
import { issueAuthCode } from "./flow-states.ts";
import { clearAllOneTimeTokens, clearOneTimeToken, findOneTimeToken, type OneTimeTokenType } from "./one-time-tokens.ts";
import { otpExpired, tokenHash } from "./otp.ts";
import { hashPassword, randomPassword } from "./passwords.ts";
import { PKCE_PREFIX, pkceAuthenticationMethod } from "./pkce.ts";
import { referrer } from "./redirects.ts";
import { readBody } from "./request-body.ts";
import { verifyBody } from "./schemas.ts";
import { isBanned, issueSession, type SessionJson } from "./tokens.ts";
import { findUserByEmail, findUserById, findUserByPhone, updateUser, type UserRecord, type UserRow } from "./users-repository.ts";

const LINK_INVALID = "Email link is invalid or has expired";
const TOKEN_INVALID = "Token has expired or is invalid";
const SINGLE_CONFIRMATION = "Confirmation link accepted. Please proceed to confirm link sent to the other email";

/** A verification after its input is checked: the type (which GoTrue narrows for "email"), the hash, and how it was given. */
interface Verification {
  type: string;
  hash: string;
  /** The code itself when given with an address (POST), for test phone numbers. */
  token: string | null;
  email: string | null;
  phone: string | null;
}

/** A signed-in verification's result: a session (implicit flow) or an auth code (PKCE flow). */
type Completion = { session: SessionJson } | { code: string };

/** What a verification ends in: its completion, or a message when it was only half an email change. */
type VerifyOutcome<T extends Completion> = T | { message: string };

/** Token kinds each link type is looked up among (GoTrue's verifyTokenHash). */
const HASH_LOOKUP: Record<string, OneTimeTokenType[]> = {
  email: ["confirmation_token", "recovery_token"],
  signup: ["confirmation_token"],
  invite: ["confirmation_token"],
  recovery: ["recovery_token"],
  magiclink: ["recovery_token"],
  email_change: ["email_change_token_current", "email_change_token_new"],
};

/** Finds the user of a link's token hash (GoTrue's verifyTokenHash). */
async function userByTokenHash(db: Db, context: AuthContext, verification: Verification): Promise<UserRow> {
  const kinds = HASH_LOOKUP[verification.type];
  if (!kinds) throw badRequest("validation_failed", "Invalid email verification type");
  const token = await findOneTimeToken(db, verification.hash, kinds);
  const record = token ? await findUserById(db, token.user_id, true) : null;
  if (!record) throw forbidden("otp_expired", LINK_INVALID);
  const { user } = record;
  if (isBanned(record)) throw forbidden("user_banned", "User is banned");
  let sentAt: string | null;
  if (verification.type === "email") {
    const recovery = user.recovery_token === verification.hash;
    verification.type = recovery ? "magiclink" : "signup";
    sentAt = recovery ? user.recovery_sent_at : user.confirmation_sent_at;
  } else if (verification.type === "signup" || verification.type === "invite") {
    sentAt = user.confirmation_sent_at;
  } else if (verification.type === "email_change") {
    sentAt = user.email_change_sent_at;
  } else {
    sentAt = user.recovery_sent_at;
  }
  if (otpExpired(sentAt, context.settings.emailOtpExpiry)) throw forbidden("otp_expired", LINK_INVALID);
  return user;
}

/** A code matches a stored hash (with or without GoTrue's `pkce_` prefix) within its expiry. */
function codeValid(hash: string, stored: string | null, sentAt: string | null, expirySeconds: number): boolean {
  if (!stored || sentAt === null || otpExpired(sentAt, expirySeconds)) return false;
  return stored === hash || stored === `pkce_${hash}`;
}

/** Finds the user a code was sent to and checks the code (GoTrue's verifyUserAndToken). */
async function userByCode(db: Db, context: AuthContext, request: Request, verification: Verification): Promise<UserRow> {
  const aud = requestAudience(request);
  const { settings } = context;
  let record: UserRecord | null;
  if (verification.type === "phone_change") {
    const [row] = await db<{ id: string }[]>`select id from auth.users where phone_change = ${verification.phone} and aud = ${aud} and is_sso_user = false limit 1`;
    record = row ? await findUserById(db, row.id, true) : null;
  } else if (verification.type === "sms") {
    record = await findUserByPhone(db, verification.phone ?? "", aud);
  } else if (verification.type === "email_change") {
    const token = await findOneTimeToken(db, verification.hash, ["email_change_token_current", "email_change_token_new"]);
    record = token ? await findUserById(db, token.user_id, true) : null;
    const address = verification.email;
    if (record && address !== record.user.email && address !== record.user.email_change) record = null;
  } else {
    record = await findUserByEmail(db, verification.email ?? "", aud);
  }
  if (!record) throw forbidden("otp_expired", TOKEN_INVALID);
  if (isBanned(record)) throw forbidden("user_banned", "User is banned");
  const { user } = record;
  const emailExpiry = settings.emailOtpExpiry;
  let valid: boolean;
  switch (verification.type) {
    case "email":
      if (codeValid(verification.hash, user.confirmation_token, user.confirmation_sent_at, emailExpiry)) {
        valid = true;
        verification.type = "signup";
      } else {
        valid = codeValid(verification.hash, user.recovery_token, user.recovery_sent_at, emailExpiry);
        if (valid) verification.type = "magiclink";
      }
      break;
    case "signup":
    case "invite":
      valid = codeValid(verification.hash, user.confirmation_token, user.confirmation_sent_at, emailExpiry);
      break;
    case "recovery":
    case "magiclink":
      valid = codeValid(verification.hash, user.recovery_token, user.recovery_sent_at, emailExpiry);
      break;
    case "email_change":
      valid =
        codeValid(verification.hash, user.email_change_token_current, user.email_change_sent_at, emailExpiry) ||
        codeValid(verification.hash, user.email_change_token_new, user.email_change_sent_at, emailExpiry);
      break;
    default: {
      // Test numbers accept their fixed code whatever was sent, as GoTrue checks them first.
      const phone = verification.phone ?? "";
      if (settings.smsTestOtp[phone] !== undefined && settings.smsTestOtp[phone] === verification.token) return user;
      const change = verification.type === "phone_change";
      valid = codeValid(verification.hash, change ? user.phone_change_token : user.confirmation_token, change ? user.phone_change_sent_at : user.confirmation_sent_at, settings.smsOtpExpiry);
    }
  }
  if (!valid) throw forbidden("otp_expired", TOKEN_INVALID);
  return user;
}

/**
 * GoTrue's signupVerify (signup and invite links): an invited user without a password gets a
 * random one (the app then asks for a real one), and the e-mail counts as confirmed.
 */
async function confirmSignup(db: Db, user: UserRow, ip: string | null): Promise<void> {
  if (!user.encrypted_password && user.invited_at) await storeNewPassword(db, user.id, await hashPassword(randomPassword()), null);
  await recordAudit(db, user, "user_signedup", ip, { provider: "email" });
  const record = await reload(db, user.id);
  await confirmEmail(db, record);
  for (const identity of record.identities) {
    if (identity.email && user.email && identity.email === user.email) await upsertContactIdentity(db, await reload(db, user.id), "email", user.email, true);
  }
}

/** GoTrue's recoverVerify (recovery and magic links): the link is used up, and an unconfirmed user is confirmed by it. */
async function confirmRecovery(db: Db, user: UserRow, ip: string | null): Promise<void> {
  await updateUser(db, user.id, { recovery_token: "" });
  await clearAllOneTimeTokens(db, user.id);
  if (!user.email_confirmed_at) {
    await recordAudit(db, user, "user_signedup", ip, { provider: "email" });
    await confirmEmail(db, await reload(db, user.id));
  } else {
    await recordAudit(db, user, "login", ip);
  }
}

/** GoTrue's smsVerify: a signup code confirms the phone; a phone-change code moves the number. */
async function confirmPhone(db: Db, user: UserRow, verification: Verification, ip: string | null): Promise<void> {
  if (verification.type === "sms") {
    await recordAudit(db, user, "user_signedup", ip, { provider: "phone" });
    await updateUser(db, user.id, { confirmation_token: "", phone_confirmed_at: "now" });
  } else {
    await recordAudit(db, user, "user_modified", ip);
    const phone = user.phone_change ?? "";
    await upsertContactIdentity(db, await reload(db, user.id), "phone", phone, true);
    await updateUser(db, user.id, { phone, phone_change: "", phone_change_token: "", phone_confirmed_at: "now" });
  }
  await clearAllOneTimeTokens(db, user.id);
  if (user.is_anonymous) await updateUser(db, user.id, { is_anonymous: false });
}

/**
 * GoTrue's emailChangeVerify. With autoconfirm on, as locally, one confirmation from either address
 * is enough; otherwise, with double confirmation, the first only records itself.
 */
async function confirmEmailChange(db: Db, context: AuthContext, user: UserRow, hash: string, ip: string | null): Promise<"single" | "done"> {
  const { settings } = context;
  if (!settings.mailerAutoconfirm && settings.doubleConfirmEmailChanges && user.email_change_confirm_status === 0 && user.email) {
    const usedCurrent = hash === user.email_change_token_current;
    await updateUser(db, user.id, { email_change_confirm_status: 1, ...(usedCurrent ? { email_change_token_current: "" } : { email_change_token_new: "" }) });
    await clearOneTimeToken(db, user.id, usedCurrent ? "email_change_token_current" : "email_change_token_new");
    return "single";
  }
  await completeEmailChange(db, user, ip);
  return "done";
}

/**
 * Checks a verification and completes it with `complete` (a session, or for a PKCE link its flow
 * state's auth code), all in one transaction.
 */
async function verify<T extends Completion>(
  context: AuthContext,
  request: Request,
  verification: Verification,
  byHash: boolean,
  complete: (tx: Db, userId: string) => Promise<T>,
): Promise<VerifyOutcome<T>> {
  const client = clientInfo(request);
  const outcome = await context.db.begin(async (tx): Promise<VerifyOutcome<T>> => {
    const user = byHash ? await userByTokenHash(tx, context, verification) : await userByCode(tx, context, request, verification);
    switch (verification.type) {
      case "signup":
      case "invite":
        await confirmSignup(tx, user, client.ip);
        break;
      case "recovery":
      case "magiclink":
        await confirmRecovery(tx, user, client.ip);
        break;
      case "email_change":
        if ((await confirmEmailChange(tx, context, user, verification.hash, client.ip)) === "single") return { message: SINGLE_CONFIRMATION };
        break;
      case "sms":
      case "phone_change":
        await confirmPhone(tx, user, verification, client.ip);
        break;
      default:
        throw badRequest("validation_failed", "Unsupported verification type");
    }
    await refreshProviders(tx, user.id);
    return complete(tx, user.id);
  });
  // postgres.js types begin's result through UnwrapPromiseArray, which loses the type parameter.
  return outcome as VerifyOutcome<T>;
}

/** POST /verify (auth-js verifyOtp): `{type, token_hash}`, `{type, email, token}` or `{type, phone, token}`. */
async function verifyPost(context: AuthContext, request: Request): Promise<Response> {
  context.limits.take("verify", clientInfo(request).ip);
  const body = await readBody(request, verifyBody);
  const type = body.type ?? "";
  if (type === "") throw badRequest("validation_failed", "Verify requires a verification type");
  const token = body.token ?? "";
  const hash = body.token_hash ?? "";
  if ((token === "") === (hash === "")) throw badRequest("validation_failed", "Verify requires either a token or a token hash");
  let verification: Verification;
  if (token !== "") {
    const email = body.email ?? "";
    const phone = body.phone ?? "";
    if (phone !== "" && email === "") {
      const number = validatePhone(phone);
      verification = { type, hash: tokenHash(number, token), token, email: null, phone: number };
    } else if (email !== "" && phone === "") {
      let address: string;
      try {
        address = validateEmail(email);
      } catch (error) {
        throw new AuthError(422, "validation_failed", "Invalid email format", undefined, error);
      }
      verification = { type, hash: tokenHash(address, token), token, email: address, phone: null };
    } else {
      throw badRequest("validation_failed", "Only an email address or phone number should be provided on verify");
    }
  } else {
    if (body.email || body.phone || body.redirect_to) throw badRequest("validation_failed", "Only the token_hash and type should be provided");
    verification = { type, hash, token: null, email: null, phone: null };
  }
  const outcome = await verify(context, request, verification, token === "", async (tx, userId) => ({ session: await issueSession(tx, context, userId, "otp", clientInfo(request)) }));
  if ("message" in outcome) return Response.json({ msg: outcome.message, code: "200" });
  return Response.json(outcome.session);
}

/** GoTrue's error names for the fragment of a failed link's redirect, by status. */
const OAUTH_ERRORS: Record<number, string> = { 400: "invalid_request", 401: "unauthorized_client", 403: "access_denied", 500: "server_error", 503: "temporarily_unavailable" };

/** The redirect's error values (GoTrue's prepErrorRedirectURL), by the error's status. */
function errorValues(error: AuthError): URLSearchParams {
  const values = new URLSearchParams();
  const name = OAUTH_ERRORS[error.status];
  if (name) values.set("error", name);
  values.set("error_code", error.code);
  values.set("error_description", error.message);
  return values;
}

/**
 * Where a followed link leads, as GoTrue's verifyGet builds it. The implicit flow puts everything
 * in the fragment (the session, a message or the error). The PKCE flow adds `code` to the query,
 * and puts a message or an error in both the query and the fragment.
 */
function redirectLocation(target: string, outcome: VerifyOutcome<Completion> | AuthError, type: string, pkce: boolean): string {
  const fragment = new URLSearchParams();
  const query = new URLSearchParams();
  if (outcome instanceof AuthError) {
    for (const [key, value] of errorValues(outcome)) {
      fragment.set(key, value);
      query.set(key, value);
    }
  } else if ("message" in outcome) {
    fragment.set("message", outcome.message);
    query.set("message", outcome.message);
  } else if ("code" in outcome) {
    query.set("code", outcome.code);
  } else {
    const { session } = outcome;
    fragment.set("access_token", session.access_token);
    fragment.set("expires_at", String(session.expires_at));
    fragment.set("expires_in", String(session.expires_in));
    fragment.set("refresh_token", session.refresh_token);
    fragment.set("token_type", session.token_type);
    fragment.set("type", type);
  }
  if (!pkce) {
    fragment.set("sb", "");
    fragment.sort();
    return `${target}#${fragment.toString()}`;
  }
  const url = new URL(target);
  for (const [key, value] of query) url.searchParams.set(key, value);
  url.searchParams.sort();
  // A PKCE success leaves the fragment alone; messages and errors replace it.
  if (outcome instanceof AuthError || !("code" in outcome)) {
    fragment.set("sb", "");
    fragment.sort();
    url.hash = fragment.toString();
  }
  return url.toString();
}

/**
 * GET /verify (the link in a mail): verifies, then redirects (303) to the allowed `redirect_to`.
 * A link whose token carries the `pkce_` prefix completes the PKCE flow (`?code=`); any other the
 * implicit flow (the session in the fragment). A bad link redirects with GoTrue's
 * `error`/`error_code`/`error_description`.
 */
async function verifyGet(context: AuthContext, request: Request): Promise<Response> {
  context.limits.take("verify", clientInfo(request).ip);
  const url = new URL(request.url);
  const type = url.searchParams.get("type") ?? "";
  const token = url.searchParams.get("token") ?? "";
  if (type === "") throw badRequest("validation_failed", "Verify requires a verification type");
  if (token === "") throw badRequest("validation_failed", "Verify requires a token or a token hash");
  const pkce = token.startsWith(PKCE_PREFIX);
  const method = pkce ? pkceAuthenticationMethod(type) : null;
  // GoTrue fails here with a 500 (the type names no authentication method); a 400 says why.
  if (pkce && !method) throw badRequest("validation_failed", `unsupported authentication method ${JSON.stringify(type)}`);
  const target = referrer(request, context.settings);
  const verification: Verification = { type, hash: token, token: null, email: null, phone: null };
  const complete = async (tx: Db, userId: string): Promise<Completion> =>
    method ? { code: await issueAuthCode(tx, userId, method) } : { session: await issueSession(tx, context, userId, "otp", clientInfo(request)) };
  let outcome: VerifyOutcome<Completion> | AuthError;
  try {
    outcome = await verify(context, request, verification, true, complete);
  } catch (error) {
    if (!(error instanceof AuthError) || error.status >= 500) throw error;
    outcome = error;
  }
  return new Response(null, { status: 303, headers: { Location: redirectLocation(target, outcome, verification.type, pkce) } });
}

/** Routes for GET and POST /verify. */
export function verifyRoutes(context: AuthContext): Hono {
  const app = new Hono();
  app.get("/verify", (c) => verifyGet(context, c.req.raw));
  app.post("/verify", (c) => verifyPost(context, c.req.raw));
  return app;
}

