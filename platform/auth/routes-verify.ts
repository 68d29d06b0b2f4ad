import { Hono } from "hono";
import { validateEmail } from "./accounts.ts";
import { clientInfo, type AuthContext } from "./context.ts";
import type { Db } from "./db.ts";
import { completeEmailChange, tokenHash } from "./email-change.ts";
import { AuthError, badRequest, forbidden, unprocessable } from "./errors.ts";
import { readBody } from "./request-body.ts";
import { verifyBody } from "./schemas.ts";
import { issueSession, type SessionJson } from "./tokens.ts";
import { findUserByEmailChangeToken, updateUser, type UserRow } from "./users-repository.ts";

/** Verification types GoTrue knows; only email_change tokens are ever issued by this stack. */
const VERIFY_TYPES = ["signup", "invite", "recovery", "magiclink", "email_change", "sms", "phone_change", "email"];

const LINK_INVALID = "Email link is invalid or has expired";

interface Verification {
  type: string;
  /** The stored token hash to look for (from `token_hash`, or computed from email + code). */
  hash: string;
  /** When a code was given with an address, the address it was sent to. */
  email: string | null;
}

/** Finds the user a pending email change token belongs to, if it is still within `otp_expiry`. */
async function findEmailChangeUser(db: Db, context: AuthContext, verification: Verification): Promise<UserRow> {
  const user = await findUserByEmailChangeToken(db, verification.hash, context.settings.emailOtpExpiry);
  const message = verification.email === null ? LINK_INVALID : "Token has expired or is invalid";
  if (!user || user.expired) throw forbidden("otp_expired", message);
  if (verification.email !== null && verification.email !== user.email_change && verification.email !== user.email) {
    throw forbidden("otp_expired", message);
  }
  return user;
}

/**
 * Completes an email change (GoTrue's emailChangeVerify). With autoconfirm on, as locally, one
 * confirmation from either address is enough; otherwise, with double confirmation, the first link
 * only records itself and the answer is GoTrue's "Confirmation link accepted" message.
 */
async function verify(context: AuthContext, request: Request, verification: Verification): Promise<SessionJson | { msg: string; code: number }> {
  if (verification.type !== "email_change") throw forbidden("otp_expired", verification.email === null ? LINK_INVALID : "Token has expired or is invalid");
  const client = clientInfo(request);
  return context.db.begin(async (tx) => {
    const user = await findEmailChangeUser(tx, context, verification);
    const needsBoth = !context.settings.mailerAutoconfirm && context.settings.doubleConfirmEmailChanges && Boolean(user.email);
    if (needsBoth && user.email_change_confirm_status === 0) {
      const usedCurrent = verification.hash === user.email_change_token_current;
      await updateUser(tx, user.id, {
        email_change_confirm_status: 1,
        ...(usedCurrent ? { email_change_token_current: "" } : { email_change_token_new: "" }),
      });
      return { msg: "Confirmation link accepted. Please proceed to confirm link sent to the other email", code: 200 };
    }
    await completeEmailChange(tx, user, client.ip);
    return issueSession(tx, context, user.id, "email_change", client);
  });
}

/** POST /verify (auth-js verifyOtp): `{type, token_hash}` or `{type, email, token}`. */
async function verifyPost(context: AuthContext, request: Request): Promise<Response> {
  const body = await readBody(request, verifyBody);
  const type = body.type ?? "";
  if (type === "") throw unprocessable("validation_failed", "Verify requires a verification type");
  if (!VERIFY_TYPES.includes(type)) throw badRequest("validation_failed", "Unsupported verification type");
  const token = body.token ?? "";
  const hash = body.token_hash ?? "";
  if ((token === "") === (hash === "")) throw badRequest("validation_failed", "Verify requires either a token or a token hash");
  let verification: Verification;
  if (token !== "") {
    if (!body.email || body.phone) throw badRequest("validation_failed", "Only an email address or phone number should be provided on verify");
    const email = validateEmail(body.email);
    verification = { type, hash: tokenHash(email, token), email };
  } else {
    if (body.email || body.phone || body.redirect_to) throw badRequest("validation_failed", "Only the token_hash and type should be provided");
    verification = { type, hash, email: null };
  }
  return Response.json(await verify(context, request, verification));
}

/** Where GET /verify may send the browser: under site_url, else site_url itself. */
function redirectTarget(context: AuthContext, requested: string | null): string {
  const site = context.settings.siteUrl;
  if (requested && requested.startsWith(site)) return requested;
  return site;
}

/**
 * GET /verify (the link in the email): verifies, then redirects (303) with the session in the URL
 * fragment as GoTrue's implicit flow does, or with `error`/`error_description` when the link is bad.
 */
async function verifyGet(context: AuthContext, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const type = url.searchParams.get("type") ?? "";
  const token = url.searchParams.get("token") ?? "";
  const target = redirectTarget(context, url.searchParams.get("redirect_to"));
  const fragment = new URLSearchParams();
  try {
    if (type === "") throw unprocessable("validation_failed", "Verify requires a verification type");
    if (token === "") throw unprocessable("validation_failed", "Verify requires a token or a token hash");
    const result = await verify(context, request, { type, hash: token, email: null });
    if ("access_token" in result) {
      fragment.set("access_token", result.access_token);
      fragment.set("expires_at", String(result.expires_at));
      fragment.set("expires_in", String(result.expires_in));
      fragment.set("refresh_token", result.refresh_token);
      fragment.set("token_type", result.token_type);
      fragment.set("type", type);
    } else {
      fragment.set("message", result.msg);
    }
  } catch (error) {
    if (!(error instanceof AuthError)) throw error;
    fragment.set("error", error.status === 403 ? "access_denied" : "invalid_request");
    fragment.set("error_code", error.code);
    fragment.set("error_description", error.message);
  }
  return new Response(null, { status: 303, headers: { Location: `${target}#${fragment.toString()}` } });
}

/** Routes for GET and POST /verify. */
export function verifyRoutes(context: AuthContext): Hono {
  const app = new Hono();
  app.get("/verify", (c) => verifyGet(context, c.req.raw));
  app.post("/verify", (c) => verifyPost(context, c.req.raw));
  return app;
}
