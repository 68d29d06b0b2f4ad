import { Hono } from "hono";
import { mergeMetadata, refreshProviders, reload, storeNewPassword, upsertContactIdentity, validateEmail, validatePhone } from "./accounts.ts";
import { recordAudit } from "./audit-log.ts";
import { requireUser } from "./authenticate.ts";
import { ADMIN_ROLES, clientInfo, requestAudience, type AuthContext } from "./context.ts";
import { forbidden, unprocessable } from "./errors.ts";
import { startEmailChange } from "./email-change.ts";
import { checkPasswordStrength, hashPassword, verifyPassword } from "./passwords.ts";
import { readBody } from "./request-body.ts";
import { userUpdateBody } from "./schemas.ts";
import { userJson } from "./user-json.ts";
import { findUserByPhone, findUserHoldingEmail, updateUser } from "./users-repository.ts";

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
 * signed out), user_metadata merged key by key, app_metadata only for admin roles, and an email
 * change that waits for confirmation by mail (`new_email`), as on `supabase start`.
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
  if (user.is_anonymous && password !== null && email === "" && phone === "") {
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
  let newHash: string | null = null;
  if (password !== null) {
    if (password !== "" && (await verifyPassword(password, user.encrypted_password))) {
      throw unprocessable("same_password", "New password should be different from the old password.");
    }
    newHash = password === "" ? null : await hashPassword(password);
  }

  const client = clientInfo(request);
  const updated = await context.db.begin(async (tx) => {
    if (password !== null) {
      await storeNewPassword(tx, user.id, newHash, caller.session?.id ?? null);
      await recordAudit(tx, user, "user_updated_password", client.ip);
    }
    if (body.data) await updateUser(tx, user.id, { raw_user_meta_data: mergeMetadata(user.raw_user_meta_data, body.data) });
    if (body.app_metadata) await updateUser(tx, user.id, { raw_app_meta_data: mergeMetadata(user.raw_app_meta_data, body.app_metadata) });
    if (email !== "" && email !== user.email) await startEmailChange(tx, context, await reload(tx, user.id), email, client.ip);
    if (phone !== "" && phone !== user.phone) {
      // With `[auth.sms] enable_confirmations = false` GoTrue confirms a phone change at once.
      await upsertContactIdentity(tx, await reload(tx, user.id), "phone", phone, true);
      await updateUser(tx, user.id, { phone, phone_confirmed_at: "now" });
      await refreshProviders(tx, user.id);
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
