import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import { baseIdentityData, createIdentity, mergeMetadata, validateEmail } from "./accounts.ts";
import { recordAudit } from "./audit-log.ts";
import { requireAdmin, type AdminCaller } from "./authenticate.ts";
import { clientInfo, DEFAULT_ROLE, requestAudience, type AuthContext } from "./context.ts";
import type { Db } from "./db.ts";
import { sendInvite } from "./email-actions.ts";
import { badRequest, internalError, notFound, unprocessable } from "./errors.ts";
import { actionLink } from "./mailer.ts";
import { createOneTimeToken } from "./one-time-tokens.ts";
import { generateOtp, tokenHash } from "./otp.ts";
import { checkPasswordStrength, hashPassword, randomPassword } from "./passwords.ts";
import { isRedirectUrlValid, referrer } from "./redirects.ts";
import { readBody } from "./request-body.ts";
import { generateLinkBody, inviteBody } from "./schemas.ts";
import { userJson } from "./user-json.ts";
import { findUserByEmail, findUserById, findUserHoldingEmail, insertUser, updateUser, type JsonObject, type UserRecord } from "./users-repository.ts";

const DUPLICATE_EMAIL = "A user with this email address has already been registered";

/** Creates an e-mail user with its identity, as GoTrue's signupNewUser + createNewIdentity do. */
async function createEmailUser(db: Db, aud: string, email: string, passwordHash: string | null, data: JsonObject): Promise<UserRecord> {
  const id = randomUUID();
  try {
    await insertUser(db, {
      id, aud, role: DEFAULT_ROLE, email, phone: null, encryptedPassword: passwordHash,
      appMetadata: { provider: "email", providers: ["email"] }, userMetadata: data,
    });
  } catch (error) {
    throw internalError("Database error saving new user", error);
  }
  await createIdentity(db, id, "email", baseIdentityData(id, { email }));
  const record = await findUserById(db, id);
  if (!record) throw internalError("Database error saving new user");
  return record;
}

/**
 * POST /invite (auth-js admin.inviteUserByEmail): creates the user (no password) unless an
 * unconfirmed one exists, and mails the invitation link and code; a confirmed address is 422.
 */
async function invite(context: AuthContext, request: Request, admin: AdminCaller): Promise<Response> {
  const body = await readBody(request, inviteBody);
  const email = validateEmail(body.email ?? "");
  const aud = requestAudience(request);
  const existing = await findUserByEmail(context.db, email, aud);
  const redirectTo = referrer(request, context.settings);
  const invited = await context.db.begin(async (tx) => {
    if (existing?.user.email_confirmed_at) throw unprocessable("email_exists", DUPLICATE_EMAIL);
    const record = existing ?? (await createEmailUser(tx, aud, email, null, body.data ?? {}));
    await recordAudit(tx, { adminRole: admin.role }, "user_invited", clientInfo(request).ip, { user_id: record.user.id, user_email: email });
    await sendInvite(tx, context, record.user, redirectTo);
    return findUserById(tx, record.user.id);
  });
  if (!invited) throw internalError("Database error saving new user");
  return Response.json(userJson(invited));
}

const LINK_TYPES = ["signup", "invite", "magiclink", "recovery", "email_change_current", "email_change_new"];

/**
 * POST /admin/generate_link (auth-js admin.generateLink): prepares the same token a mail would
 * carry, without sending anything, and answers the user with `action_link`, `email_otp`,
 * `hashed_token`, `verification_type` and `redirect_to`. A magic link for an unknown address
 * becomes a signup link; recovery and email-change links need an existing user.
 */
async function generateLink(context: AuthContext, request: Request, admin: AdminCaller): Promise<Response> {
  const body = await readBody(request, generateLinkBody);
  const email = validateEmail(body.email ?? "");
  let type = body.type ?? "";
  const redirectTo = body.redirect_to && isRedirectUrlValid(context.settings, body.redirect_to) ? body.redirect_to : referrer(request, context.settings);
  const aud = requestAudience(request);
  const existing = await findUserByEmail(context.db, email, aud);
  let password = body.password ?? "";
  if (!existing) {
    if (type === "magiclink") {
      type = "signup";
      password = randomPassword();
    } else if (type === "recovery" || type === "email_change_current" || type === "email_change_new") {
      throw notFound("user_not_found", "User with this email not found");
    }
  }
  if (!LINK_TYPES.includes(type)) throw badRequest("validation_failed", `Invalid email action link type requested: ${type}`);
  let passwordHash: string | null = null;
  if (type === "signup" && !existing) {
    if (password === "") throw badRequest("validation_failed", "Signup requires a valid password");
    checkPasswordStrength(password, context.settings);
    passwordHash = await hashPassword(password);
  }
  const otp = generateOtp(context.settings.emailOtpLength);
  const hashed = tokenHash(email, otp);
  const ip = clientInfo(request).ip;

  const { record, link } = await context.db.begin(async (tx) => {
    let user = existing;
    let linkHash = hashed;
    let linkType = type;
    switch (type) {
      case "magiclink":
      case "recovery": {
        const found = user as UserRecord;
        await recordAudit(tx, found.user, "user_recovery_requested", ip);
        await updateUser(tx, found.user.id, { recovery_token: hashed, recovery_sent_at: "now" });
        await createOneTimeToken(tx, found.user.id, email, hashed, "recovery_token");
        break;
      }
      case "invite":
      case "signup": {
        if (user?.user.email_confirmed_at) throw unprocessable("email_exists", DUPLICATE_EMAIL);
        if (user && type === "signup" && body.data) {
          await updateUser(tx, user.user.id, { raw_user_meta_data: mergeMetadata(user.user.raw_user_meta_data, body.data) });
        }
        user ??= await createEmailUser(tx, aud, email, passwordHash, body.data ?? {});
        if (type === "invite") await recordAudit(tx, { adminRole: admin.role }, "user_invited", ip, { user_id: user.user.id, user_email: email });
        await updateUser(tx, user.user.id, { confirmation_token: hashed, confirmation_sent_at: "now", ...(type === "invite" ? { invited_at: "now" as const } : {}) });
        await createOneTimeToken(tx, user.user.id, email, hashed, "confirmation_token");
        break;
      }
      default: {
        const found = user as UserRecord;
        if (!context.settings.doubleConfirmEmailChanges && type === "email_change_current") {
          throw badRequest("validation_failed", "Enable secure email change to generate link for current email");
        }
        const newEmail = validateEmail(body.new_email ?? "");
        if (await findUserHoldingEmail(tx, newEmail, found.user.aud ?? aud, found.user.id)) throw unprocessable("email_exists", DUPLICATE_EMAIL);
        const current = type === "email_change_current" ? hashed : found.user.email_change_token_current ?? "";
        const next = type === "email_change_new" ? tokenHash(newEmail, otp) : found.user.email_change_token_new ?? "";
        await updateUser(tx, found.user.id, {
          email_change: newEmail, email_change_sent_at: "now", email_change_confirm_status: 0,
          email_change_token_current: current, email_change_token_new: next,
        });
        if (current !== "") await createOneTimeToken(tx, found.user.id, email, current, "email_change_token_current");
        if (next !== "") await createOneTimeToken(tx, found.user.id, newEmail, next, "email_change_token_new");
        linkHash = type === "email_change_current" ? current : next;
        linkType = "email_change";
      }
    }
    const reloaded = await findUserById(tx, (user as UserRecord).user.id);
    if (!reloaded) throw internalError("Database error updating user");
    return { record: reloaded, link: actionLink(context, linkHash, linkType, redirectTo) };
  });
  return Response.json({
    ...userJson(record),
    action_link: link,
    email_otp: otp,
    hashed_token: hashed,
    verification_type: type,
    redirect_to: redirectTo,
  });
}

/** POST /invite and POST /admin/generate_link, behind the service_role check. */
export function inviteRoutes(context: AuthContext): Hono {
  const app = new Hono();
  app.post("/invite", (c) => invite(context, c.req.raw, requireAdmin(c.req.raw, context)));
  app.post("/admin/generate_link", (c) => generateLink(context, c.req.raw, requireAdmin(c.req.raw, context)));
  return app;
}
