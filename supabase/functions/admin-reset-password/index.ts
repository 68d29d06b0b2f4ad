// admin-reset-password: an admin sets a new password for a user. Admins only; a super admin's
// password only by a super admin; the password policy is enforced; every reset is audited.
// POST {"userId": "<uuid>", "newPassword": "<password>"} → 200 {"userId", "passwordReset": true}.
import { createServiceRoleClient } from "../_shared/db/supabase-clients.ts";
import { HttpError } from "../_shared/http/errors.ts";
import { databaseFailure, requireCaller } from "../_shared/portal/caller.ts";
import { jsonResponse } from "../_shared/portal/errors.ts";
import { readJsonBody, servePortalFunction } from "../_shared/portal/http.ts";
import { passwordProblems } from "../_shared/portal/password-policy.ts";
import { resetPasswordBodySchema } from "../_shared/portal/schemas.ts";

Deno.serve(servePortalFunction("admin-reset-password", ["POST"], async (request, log) => {
  const caller = await requireCaller(request);
  const { userId, newPassword } = await readJsonBody(request, resetPasswordBodySchema);

  // One call decides (public.password_reset_refusal). A non-admin is refused before anything about
  // the target is looked at, so non-admins cannot probe which user ids exist.
  const refusal = await caller.client.rpc("password_reset_refusal", { p_target: userId });
  if (refusal.error) throw databaseFailure(refusal.error);
  if (refusal.data === "not_an_admin") throw new HttpError(403, "not_an_admin", "Only admins can reset passwords");
  const problems = passwordProblems(newPassword);
  if (problems.length > 0) throw new HttpError(422, "weak_password", "The new password does not meet the password policy", problems);

  // The service role is needed to look the target up and to change their password.
  const service = createServiceRoleClient();
  const target = await service.auth.admin.getUserById(userId);
  if (target.error || !target.data.user) throw new HttpError(404, "user_not_found", `No user ${userId}`);
  if (refusal.data === "target_is_super_admin") {
    throw new HttpError(403, "target_is_super_admin", "Only a super admin can reset a super admin's password");
  }

  const updated = await service.auth.admin.updateUserById(userId, { password: newPassword });
  if (updated.error) throw new HttpError(502, "auth_error", updated.error.message);
  const audit = await service.from("audit_log").insert({ action: "user.password_reset", actor_id: caller.userId, entity_type: "user", entity_id: userId });
  if (audit.error) log.error("password_reset_not_audited", { actor: caller.userId, target: userId, reason: audit.error.message });
  log.info("password_reset", { actor: caller.userId, target: userId });
  return jsonResponse({ userId, passwordReset: true });
}));
