import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import { baseIdentityData, confirmEmail, createIdentity, mergeMetadata, validateEmail } from "./accounts.ts";
import { recordAudit } from "./audit-log.ts";
import { clientInfo, DEFAULT_ROLE, requestAudience, type AuthContext } from "./context.ts";
import { badRequest, internalError, unprocessable } from "./errors.ts";
import { checkPasswordStrength, hashPassword } from "./passwords.ts";
import { readBody } from "./request-body.ts";
import { signupBody, type SignupBody } from "./schemas.ts";
import { issueSession } from "./tokens.ts";
import { userJson } from "./user-json.ts";
import { findUserById, findUserHoldingEmail, insertUser, updateUser, type JsonObject, type UserRecord } from "./users-repository.ts";

/** The answer GoTrue gives a repeated signup when confirmations are on: a fake, unsaved user, so emails cannot be enumerated. */
function obfuscatedUser(email: string, aud: string, data: JsonObject): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    aud,
    role: "",
    email,
    phone: "",
    confirmation_sent_at: now,
    app_metadata: { provider: "email", providers: ["email"] },
    user_metadata: data,
    identities: [],
    created_at: now,
    updated_at: now,
    is_anonymous: false,
  };
}

/** Anonymous sign-in (POST /signup without email or phone), when `enable_anonymous_sign_ins` is on. */
async function signUpAnonymously(context: AuthContext, request: Request, body: SignupBody): Promise<Response> {
  const client = clientInfo(request);
  const id = randomUUID();
  const session = await context.db.begin(async (tx) => {
    try {
      await insertUser(tx, {
        id,
        aud: requestAudience(request),
        role: DEFAULT_ROLE,
        email: null,
        phone: null,
        encryptedPassword: "",
        appMetadata: {},
        userMetadata: body.data ?? {},
        isAnonymous: true,
      });
    } catch (error) {
      throw internalError("Database error creating anonymous user", error);
    }
    const created = await findUserById(tx, id);
    if (created) await recordAudit(tx, created.user, "user_signedup", client.ip, { provider: "anonymous" });
    return issueSession(tx, context, id, "anonymous", client);
  });
  return Response.json(session);
}

/**
 * POST /signup as GoTrue answers it. With autoconfirm (the local default) a new user gets a full
 * session at once; an already confirmed email is 422 user_already_exists. Without autoconfirm the
 * bare user comes back and no session (confirmation mail is not sent by this stack).
 */
async function signUp(context: AuthContext, request: Request): Promise<Response> {
  const { settings } = context;
  const body = await readBody(request, signupBody);
  const email = body.email ?? "";
  const phone = body.phone ?? "";
  if (email === "" && phone === "") {
    if (!settings.enableAnonymousSignIns) throw unprocessable("anonymous_provider_disabled", "Anonymous sign-ins are disabled");
    if (!settings.enableSignup) throw unprocessable("signup_disabled", "Signups not allowed for this instance");
    return signUpAnonymously(context, request, body);
  }
  if (!settings.enableSignup) throw unprocessable("signup_disabled", "Signups not allowed for this instance");

  const password = body.password ?? "";
  if (password === "") throw badRequest("validation_failed", "Signup requires a valid password");
  checkPasswordStrength(password, settings);
  if (email !== "" && phone !== "") throw badRequest("validation_failed", "Only an email address or phone number should be provided on signup.");
  if (email === "") {
    // Phone signups need an SMS provider; `[auth.sms] enable_signup` is off in this project.
    throw badRequest("phone_provider_disabled", "Phone signups are disabled");
  }
  if (!settings.emailEnabled) throw badRequest("email_provider_disabled", "Email signups are disabled");
  const address = validateEmail(email);
  const aud = requestAudience(request);
  const data = body.data ?? {};
  const client = clientInfo(request);

  let existing: UserRecord | null;
  try {
    existing = await findUserHoldingEmail(context.db, address, aud);
  } catch (error) {
    throw internalError("Database error finding user", error);
  }
  if (existing?.user.email_confirmed_at) {
    await recordAudit(context.db, existing.user, "user_repeated_signup", client.ip, { provider: "email" });
    if (settings.mailerAutoconfirm) throw unprocessable("user_already_exists", "User already registered");
    return Response.json(obfuscatedUser(address, aud, data));
  }
  // Hash outside the transaction: bcrypt is slow and would hold the connection.
  const hash = existing ? null : await hashPassword(password);

  const outcome = await context.db.begin(async (tx) => {
    let userId = existing?.user.id;
    if (!userId) {
      userId = randomUUID();
      try {
        await insertUser(tx, {
          id: userId,
          aud,
          role: DEFAULT_ROLE,
          email: address,
          phone: null,
          encryptedPassword: hash,
          appMetadata: { provider: "email", providers: ["email"] },
          userMetadata: data,
        });
      } catch (error) {
        // Typically a trigger on auth.users failing; GoTrue hides the cause the same way.
        throw internalError("Database error saving new user", error);
      }
      // The signup data joins the identity, without overriding the identity's own claims.
      const identityData = mergeMetadata(data, baseIdentityData(userId, { email: address }));
      await createIdentity(tx, userId, "email", identityData);
      // GoTrue's RemoveUnconfirmedIdentities: an unconfirmed user's metadata becomes the identity's.
      await updateUser(tx, userId, { raw_user_meta_data: mergeMetadata({}, identityData) });
    }
    const record = await findUserById(tx, userId);
    if (!record) throw internalError("Database error saving new user");
    if (!settings.mailerAutoconfirm) return { user: record };
    await recordAudit(tx, record.user, "user_signedup", client.ip, { provider: "email" });
    await confirmEmail(tx, record);
    const confirmed = await findUserById(tx, userId);
    if (confirmed) await recordAudit(tx, confirmed.user, "login", client.ip, { provider: "email" });
    return { session: await issueSession(tx, context, userId, "password", client) };
  });
  return Response.json("session" in outcome ? outcome.session : userJson(outcome.user));
}

/** Routes for POST /signup. */
export function signupRoutes(context: AuthContext): Hono {
  const app = new Hono();
  app.post("/signup", (c) => signUp(context, c.req.raw));
  return app;
}
