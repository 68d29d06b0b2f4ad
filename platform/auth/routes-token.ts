import { Hono } from "hono";
import { validatePhone } from "./accounts.ts";
import { recordAudit } from "./audit-log.ts";
import { clientInfo, requestAudience, type AuthContext } from "./context.ts";
import { AuthError, badRequest, internalError, unprocessable } from "./errors.ts";
import { deleteFlowState, takeFlowState } from "./flow-states.ts";
import { checkPasswordStrength, verifyPassword } from "./passwords.ts";
import { verifyCodeChallenge, type PkceAuthenticationMethod } from "./pkce.ts";
import { readBody } from "./request-body.ts";
import { passwordGrantBody, pkceGrantBody, refreshGrantBody } from "./schemas.ts";
import { isBanned, issueSession, refreshSession } from "./tokens.ts";
import { unavailableGrant } from "./routes-unavailable.ts";
import { findUserByEmail, findUserById, findUserByPhone, UnreadableUserError, type UserRecord } from "./users-repository.ts";

const INVALID_LOGIN = "Invalid login credentials";

/**
 * The password grant, in GoTrue's order of checks: unknown user, no password and wrong password are
 * all 400 invalid_credentials with one message (no account enumeration); a banned user is 400
 * user_banned before the password is even checked. A seeded row GoTrue cannot read (NULL token
 * columns) is the 500 "Database error querying schema" real Supabase gives.
 */
async function passwordGrant(context: AuthContext, request: Request): Promise<Response> {
  const { settings } = context;
  const body = await readBody(request, passwordGrantBody);
  const email = body.email ?? "";
  const phone = body.phone ?? "";
  const password = body.password ?? "";
  if (email !== "" && phone !== "") throw badRequest("validation_failed", "Only an email address or phone number should be provided on login.");
  const aud = requestAudience(request);
  let record: UserRecord | null;
  let provider: "email" | "phone";
  try {
    if (email !== "") {
      provider = "email";
      if (!settings.emailEnabled) throw unprocessable("email_provider_disabled", "Email logins are disabled");
      record = await findUserByEmail(context.db, email, aud);
    } else if (phone !== "") {
      provider = "phone";
      if (!settings.phoneEnabled) throw unprocessable("phone_provider_disabled", "Phone logins are disabled");
      record = await findUserByPhone(context.db, validatePhone(phone), aud);
    } else {
      throw badRequest("validation_failed", "missing email or phone");
    }
  } catch (error) {
    if (error instanceof AuthError) throw error;
    if (error instanceof UnreadableUserError) throw internalError("Database error querying schema", error);
    throw error;
  }
  if (!record || !record.user.encrypted_password) throw badRequest("invalid_credentials", INVALID_LOGIN);
  if (isBanned(record)) throw badRequest("user_banned", "User is banned");
  if (!(await verifyPassword(password, record.user.encrypted_password))) throw badRequest("invalid_credentials", INVALID_LOGIN);
  if (provider === "email" && !record.user.email_confirmed_at) throw badRequest("email_not_confirmed", "Email not confirmed");
  if (provider === "phone" && !record.user.phone_confirmed_at) throw badRequest("phone_not_confirmed", "Phone not confirmed");

  // A correct but now-too-weak password still signs in; the session says so (auth-js surfaces it).
  let weakPassword: { message: string; reasons: string[] } | undefined;
  try {
    checkPasswordStrength(password, settings);
  } catch (error) {
    if (error instanceof AuthError && error.reasons) weakPassword = { message: error.message, reasons: error.reasons };
  }
  const client = clientInfo(request);
  const user = record.user;
  const session = await context.db.begin(async (tx) => {
    await recordAudit(tx, user, "login", client.ip, { provider });
    return issueSession(tx, context, user.id, "password", client);
  });
  return Response.json(weakPassword ? { ...session, weak_password: weakPassword } : session);
}

/**
 * The PKCE grant (auth-js `exchangeCodeForSession`), in GoTrue's order of checks: both fields, a
 * known code (404 flow_state_not_found), not expired (422 flow_state_expired), then the verifier
 * against the stored challenge (400 bad_code_verifier, which leaves the code usable). A success
 * uses the code up and signs in with the flow's authentication method as the `amr` method.
 */
async function pkceGrant(context: AuthContext, request: Request): Promise<Response> {
  const body = await readBody(request, pkceGrantBody);
  const authCode = body.auth_code ?? "";
  const codeVerifier = body.code_verifier ?? "";
  if (authCode === "" || codeVerifier === "") throw badRequest("validation_failed", "invalid request: both auth code and code verifier should be non-empty");
  const client = clientInfo(request);
  const session = await context.db.begin(async (tx) => {
    const flow = await takeFlowState(tx, authCode);
    // GoTrue keeps no foreign key from flow states to users: a deleted user's code is just unknown.
    const record = await findUserById(tx, flow.user_id, true);
    if (!record) throw new AuthError(404, "flow_state_not_found", "invalid flow state, no valid flow state found");
    verifyCodeChallenge(flow.code_challenge ?? "", flow.code_challenge_method ?? "", codeVerifier);
    await recordAudit(tx, record.user, "login", client.ip, { provider_type: flow.provider_type });
    // Flow states are only created with the methods of PkceAuthenticationMethod.
    const issued = await issueSession(tx, context, record.user.id, flow.authentication_method as PkceAuthenticationMethod, client);
    await deleteFlowState(tx, flow.id);
    return issued;
  });
  return Response.json(session);
}

/** POST /token: the grant comes from the query string (auth-js puts it there). */
async function token(context: AuthContext, request: Request): Promise<Response> {
  const grantType = new URL(request.url).searchParams.get("grant_type") ?? "";
  if (grantType === "password") return passwordGrant(context, request);
  if (grantType === "pkce") return pkceGrant(context, request);
  if (grantType === "refresh_token") {
    const body = await readBody(request, refreshGrantBody);
    return Response.json(await refreshSession(context, body.refresh_token, clientInfo(request)));
  }
  const unavailable = unavailableGrant(context, grantType);
  if (unavailable) throw unavailable;
  // GoTrue files an unknown grant under invalid_credentials, with the OAuth error name as message.
  throw badRequest("invalid_credentials", "unsupported_grant_type");
}

/** Routes for POST /token. */
export function tokenRoutes(context: AuthContext): Hono {
  const app = new Hono();
  app.post("/token", (c) => token(context, c.req.raw));
  return app;
}
