import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import { recordAudit } from "./audit-log.ts";
import { clientInfo, DEFAULT_ROLE, requestAudience, type AuthContext } from "./context.ts";
import { badRequest, internalError, unprocessable } from "./errors.ts";
import { register } from "./registration.ts";
import { readBody } from "./request-body.ts";
import { signupBody, type SignupBody } from "./schemas.ts";
import { issueSession } from "./tokens.ts";
import { userJson } from "./user-json.ts";
import { findUserById, insertUser, type JsonObject } from "./users-repository.ts";

/** The answer GoTrue gives a repeated signup when confirmations are on: a fake, unsaved user, so addresses cannot be enumerated. */
function obfuscatedUser(provider: "email" | "phone", address: string, aud: string, data: JsonObject): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    aud,
    role: "",
    email: provider === "email" ? address : "",
    phone: provider === "phone" ? address : "",
    confirmation_sent_at: now,
    app_metadata: { provider, providers: [provider] },
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
  context.limits.take("anonymous", client.ip);
  if (!context.settings.enableSignup) throw unprocessable("signup_disabled", "Signups not allowed for this instance");
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
 * POST /signup as GoTrue answers it, for e-mail and phone. With autoconfirm (the local default) a
 * new user gets a full session at once and an already confirmed address is 422
 * user_already_exists; without it the bare user comes back and the confirmation mail (or SMS code)
 * goes out, and a repeated signup gets an obfuscated user.
 */
async function signUp(context: AuthContext, request: Request): Promise<Response> {
  const { settings } = context;
  const body = await readBody(request, signupBody);
  const email = body.email ?? "";
  const phone = body.phone ?? "";
  if (email === "" && phone === "") {
    if (!settings.enableAnonymousSignIns) throw unprocessable("anonymous_provider_disabled", "Anonymous sign-ins are disabled");
    return signUpAnonymously(context, request, body);
  }
  if (!settings.enableSignup) throw unprocessable("signup_disabled", "Signups not allowed for this instance");
  if (email !== "" && phone !== "") throw badRequest("validation_failed", "Only an email address or phone number should be provided on signup.");
  const provider = email !== "" ? "email" : "phone";
  const data = body.data ?? {};
  const outcome = await register(context, request, {
    provider, email, phone, password: body.password ?? "", data, codeChallenge: body.code_challenge, codeChallengeMethod: body.code_challenge_method,
  });
  if (outcome.kind === "exists") {
    const autoconfirm = settings.mailerAutoconfirm || settings.smsAutoconfirm;
    if (autoconfirm) throw unprocessable("user_already_exists", "User already registered");
    return Response.json(obfuscatedUser(provider, outcome.address, requestAudience(request), data));
  }
  if (outcome.kind === "pending") return Response.json(userJson(outcome.record));
  const client = clientInfo(request);
  const session = await context.db.begin(async (tx) => {
    await recordAudit(tx, outcome.record.user, "login", client.ip, { provider });
    return issueSession(tx, context, outcome.record.user.id, "password", client);
  });
  return Response.json(session);
}

/** Routes for POST /signup. */
export function signupRoutes(context: AuthContext): Hono {
  const app = new Hono();
  app.post("/signup", (c) => signUp(context, c.req.raw));
  return app;
}
