import { type AppRole, isAdministrator } from "./caller.ts";

/** Whether a caller may reset a user's password, and if not, why. */
export type ResetDecision = { allowed: true } | { allowed: false; code: "not_an_admin" | "target_is_super_admin"; message: string };

/**
 * Admins and super admins reset passwords; a super admin's password can be reset only by a super
 * admin, so an admin cannot take over the one account above theirs.
 */
export function decidePasswordReset(callerRoles: Set<AppRole>, targetRoles: Set<AppRole>): ResetDecision {
  if (!isAdministrator(callerRoles)) return { allowed: false, code: "not_an_admin", message: "Only admins can reset passwords" };
  if (targetRoles.has("super_admin") && !callerRoles.has("super_admin")) {
    return { allowed: false, code: "target_is_super_admin", message: "Only a super admin can reset a super admin's password" };
  }
  return { allowed: true };
}
