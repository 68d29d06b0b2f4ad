import { Hono } from "hono";
import { validateEmail, validatePhone } from "./accounts.ts";
import { recordAudit } from "./audit-log.ts";
import { requireUser } from "./authenticate.ts";
import { clientInfo, requestAudience, type AuthContext } from "./context.ts";
import { sendConfirmation, sendEmailChange, sendReauthentication, sendRecoveryOrMagicLink } from "./email-actions.ts";
import { badRequest, unprocessable } from "./errors.ts";
import { startFlow } from "./flow-states.ts";
import { randomPassword } from "./passwords.ts";
import { flowOf, validatePkceParams } from "./pkce.ts";
import { referrer } from "./redirects.ts";
import { register } from "./registration.ts";
import { readBody } from "./request-body.ts";
import { magicLinkBody, otpBody, recoverBody, resendBody } from "./schemas.ts";
import { sendPhoneOtp } from "./sms.ts";
import { findUserByEmail, findUserByPhone, type JsonObject, type UserRecord } from "./users-repository.ts";

// With a `code_challenge` (auth-js `flowType: 'pkce'`) the mailed link's token carries GoTrue's
// `pkce_` prefix and a flow state holds the challenge: following the link redirects with
// `?code=<auth code>`, which POST /token?grant_type=pkce exchanges for the session. Without one,
// links complete the implicit flow (the session in the redirect's fragment). Mailed codes entered
// through verifyOtp sign in directly either way, as in GoTrue.

const EMPTY = () => Response.json({});

/** A request's PKCE challenge, as the body gave it (checked by validatePkceParams). */
interface ChallengeFields {
  code_challenge?: string | null;
  code_challenge_method?: string | null;
}

/**
 * GoTrue's MagicLink: a user who is new (or never confirmed) is signed up with a random password
 * first; with autoconfirm the magic link then goes out, otherwise the confirmation mail already
 * carries the link. A confirmed user gets the magic link (and its code).
 */
async function magicLink(context: AuthContext, request: Request, emailInput: string, data: JsonObject, challenge: ChallengeFields): Promise<Response> {
  const { settings } = context;
  if (!settings.emailEnabled) throw unprocessable("email_provider_disabled", "Email logins are disabled");
  if (emailInput === "") throw unprocessable("validation_failed", "Password recovery requires an email");
  const email = validateEmail(emailInput);
  const pkce = validatePkceParams(challenge.code_challenge_method, challenge.code_challenge);
  let record = await findUserByEmail(context.db, email, requestAudience(request));
  if (!record?.user.email_confirmed_at) {
    if (!settings.enableSignup) throw unprocessable("signup_disabled", "Signups not allowed for this instance");
    const registered = await register(context, request, {
      provider: "email", email, password: randomPassword(), data, codeChallenge: challenge.code_challenge, codeChallengeMethod: challenge.code_challenge_method,
    });
    if (registered.kind !== "confirmed") return EMPTY();
    record = registered.record;
  }
  const user = record.user;
  await context.db.begin(async (tx) => {
    await recordAudit(tx, user, "user_recovery_requested", clientInfo(request).ip);
    await startFlow(tx, user.id, "magiclink", pkce);
    await sendRecoveryOrMagicLink(tx, context, user, "magiclink", referrer(request, settings), flowOf(pkce));
  });
  return EMPTY();
}

/** GoTrue's SmsOtp: an unknown or unconfirmed number is signed up first, then the code goes out. */
async function smsOtp(context: AuthContext, request: Request, phoneInput: string, data: JsonObject, channel: string): Promise<Response> {
  const { settings } = context;
  if (!settings.phoneEnabled) throw badRequest("phone_provider_disabled", "Unsupported phone provider");
  const phone = validatePhone(phoneInput);
  if (channel !== "" && channel !== "sms") throw badRequest("validation_failed", "Invalid channel, supported values are 'sms' or 'whatsapp'. 'whatsapp' is only supported if Twilio or Twilio Verify is used as the provider.");
  let record: UserRecord | null = await findUserByPhone(context.db, phone, requestAudience(request));
  if (!record?.user.phone_confirmed_at) {
    if (!settings.enableSignup) throw unprocessable("signup_disabled", "Signups not allowed for this instance");
    const registered = await register(context, request, { provider: "phone", phone, password: randomPassword(), data });
    if (registered.kind !== "confirmed") return EMPTY();
    record = registered.record;
  }
  const user = record.user;
  const messageId = await context.db.begin(async (tx) => {
    await recordAudit(tx, user, "user_recovery_requested", clientInfo(request).ip, { channel: "sms" });
    return sendPhoneOtp(tx, context, user, phone, "confirmation");
  });
  return Response.json({ message_id: messageId });
}

/** POST /otp (auth-js signInWithOtp): a magic link and code by e-mail, or a code by SMS. */
async function otp(context: AuthContext, request: Request): Promise<Response> {
  context.limits.take("otp", clientInfo(request).ip);
  const body = await readBody(request, otpBody);
  const email = body.email ?? "";
  const phone = body.phone ?? "";
  if (email !== "" && phone !== "") throw badRequest("validation_failed", "Only an email address or phone number should be provided");
  if (email !== "" && body.channel) throw badRequest("validation_failed", "Channel should only be specified with Phone OTP");
  validatePkceParams(body.code_challenge_method, body.code_challenge);
  // create_user defaults to true; false means "only for existing users".
  if (body.create_user === false) {
    const aud = requestAudience(request);
    const existing = email !== "" ? await findUserByEmail(context.db, validateEmail(email), aud) : phone !== "" ? await findUserByPhone(context.db, validatePhone(phone), aud) : null;
    if ((email !== "" || phone !== "") && !existing) throw unprocessable("otp_disabled", "Signups not allowed for otp");
  }
  if (email !== "") return magicLink(context, request, email, body.data ?? {}, body);
  if (phone !== "") return smsOtp(context, request, phone, body.data ?? {}, body.channel ?? "");
  throw badRequest("validation_failed", "One of email or phone must be set");
}

/**
 * POST /recover (auth-js resetPasswordForEmail): mails the recovery link and code. An unknown
 * address answers the same empty 200, so addresses cannot be enumerated.
 */
async function recover(context: AuthContext, request: Request): Promise<Response> {
  const client = clientInfo(request);
  context.limits.take("recover", client.ip);
  if (!context.settings.emailEnabled) throw badRequest("email_provider_disabled", "Email logins are disabled");
  const body = await readBody(request, recoverBody);
  if (!body.email) throw badRequest("validation_failed", "Password recovery requires an email");
  const email = validateEmail(body.email);
  const pkce = validatePkceParams(body.code_challenge_method, body.code_challenge);
  const record = await findUserByEmail(context.db, email, requestAudience(request));
  if (!record) return EMPTY();
  await context.db.begin(async (tx) => {
    await recordAudit(tx, record.user, "user_recovery_requested", client.ip);
    await startFlow(tx, record.user.id, "recovery", pkce);
    await sendRecoveryOrMagicLink(tx, context, record.user, "recovery", referrer(request, context.settings), flowOf(pkce));
  });
  return EMPTY();
}

const RESEND_TYPES = ["signup", "email_change", "sms", "phone_change"];

/** POST /resend (auth-js resend): the signup, email-change or phone code again, if one is pending. */
async function resend(context: AuthContext, request: Request): Promise<Response> {
  const { settings } = context;
  const client = clientInfo(request);
  context.limits.take("resend", client.ip);
  const body = await readBody(request, resendBody);
  const type = body.type ?? "";
  if (!RESEND_TYPES.includes(type)) throw badRequest("validation_failed", "Missing one of these types: signup, email_change, sms, phone_change");
  // Only the e-mailed types have a link for PKCE to protect; GoTrue ignores a challenge on the others.
  const pkce = type === "signup" || type === "email_change" ? validatePkceParams(body.code_challenge_method, body.code_challenge) : null;
  const emailInput = body.email ?? "";
  const phoneInput = body.phone ?? "";
  if (emailInput === "" && type === "signup") throw badRequest("validation_failed", "Type provided requires an email address");
  if (phoneInput === "" && type === "sms") throw badRequest("validation_failed", "Type provided requires a phone number");
  if (emailInput !== "" && phoneInput !== "") throw badRequest("validation_failed", "Only an email address or phone number should be provided.");
  const aud = requestAudience(request);
  let record: UserRecord | null;
  if (emailInput !== "") {
    if (!settings.emailEnabled) throw badRequest("email_provider_disabled", "Email logins are disabled");
    record = await findUserByEmail(context.db, validateEmail(emailInput), aud);
  } else if (phoneInput !== "") {
    if (!settings.phoneEnabled) throw badRequest("phone_provider_disabled", "Phone logins are disabled");
    record = await findUserByPhone(context.db, validatePhone(phoneInput), aud);
  } else {
    throw badRequest("validation_failed", "Missing email address or phone number");
  }
  if (!record) return EMPTY();
  const { user } = record;
  const nothingPending =
    (type === "signup" && user.email_confirmed_at !== null) ||
    (type === "sms" && user.phone_confirmed_at !== null) ||
    (type === "email_change" && !user.email_change) ||
    (type === "phone_change" && !user.phone_change);
  if (nothingPending) return EMPTY();
  const redirectTo = referrer(request, settings);
  const messageId = await context.db.begin(async (tx) => {
    switch (type) {
      case "signup":
        await recordAudit(tx, user, "user_confirmation_requested", client.ip);
        await startFlow(tx, user.id, "email/signup", pkce);
        await sendConfirmation(tx, context, user, redirectTo, flowOf(pkce));
        return null;
      case "email_change":
        await startFlow(tx, user.id, "email_change", pkce);
        await sendEmailChange(tx, context, user, user.email_change ?? "", redirectTo, flowOf(pkce));
        return null;
      case "sms":
        await recordAudit(tx, user, "user_recovery_requested", client.ip, { channel: "sms" });
        return sendPhoneOtp(tx, context, user, validatePhone(phoneInput), "confirmation");
      default:
        return sendPhoneOtp(tx, context, user, user.phone_change ?? "", "phone_change");
    }
  });
  return Response.json(messageId === null ? {} : { message_id: messageId });
}

/** GET /reauthenticate (auth-js reauthenticate): mails (or texts) a nonce for `updateUser`. */
async function reauthenticate(context: AuthContext, request: Request): Promise<Response> {
  const { record } = await requireUser(request, context);
  const { user } = record;
  const email = user.email ?? "";
  const phone = user.phone ?? "";
  if (email === "" && phone === "") throw badRequest("validation_failed", "Reauthentication requires the user to have an email or a phone number");
  if (email !== "" && !user.email_confirmed_at) throw unprocessable("email_not_confirmed", "Please verify your email first.");
  if (email === "" && !user.phone_confirmed_at) throw unprocessable("phone_not_confirmed", "Please verify your phone first.");
  const messageId = await context.db.begin(async (tx) => {
    await recordAudit(tx, user, "user_reauthenticate_requested", clientInfo(request).ip);
    if (email !== "") {
      await sendReauthentication(tx, context, user);
      return null;
    }
    return sendPhoneOtp(tx, context, user, phone, "reauthentication");
  });
  return Response.json(messageId === null ? {} : { message_id: messageId });
}

/** Routes for /otp, /magiclink, /recover, /resend and /reauthenticate. */
export function otpRoutes(context: AuthContext): Hono {
  const app = new Hono();
  app.post("/otp", (c) => otp(context, c.req.raw));
  app.post("/magiclink", async (c) => {
    context.limits.take("magiclink", clientInfo(c.req.raw).ip);
    const body = await readBody(c.req.raw, magicLinkBody);
    return magicLink(context, c.req.raw, body.email ?? "", body.data ?? {}, body);
  });
  app.post("/recover", (c) => recover(context, c.req.raw));
  app.post("/resend", (c) => resend(context, c.req.raw));
  app.get("/reauthenticate", (c) => reauthenticate(context, c.req.raw));
  return app;
}
