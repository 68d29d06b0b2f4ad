import { jsonb, type Db } from "./db.ts";
import { NIL_INSTANCE_ID, type UserRow } from "./users-repository.ts";

/** Audit actions this service records, with GoTrue's log type for each. */
const LOG_TYPES = {
  login: "account",
  logout: "account",
  user_signedup: "team",
  user_repeated_signup: "user",
  user_modified: "user",
  user_updated_password: "user",
  user_deleted: "team",
  token_refreshed: "token",
  token_revoked: "token",
  user_invited: "team",
  user_recovery_requested: "user",
  user_confirmation_requested: "user",
  // GoTrue leaves this one out of its log-type map, so its entries carry an empty log_type.
  user_reauthenticate_requested: "",
  factor_in_progress: "factor",
  factor_unenrolled: "factor",
  challenge_created: "factor",
  verification_attempted: "factor",
  factor_deleted: "factor",
} as const;

/** An action written to auth.audit_log_entries. */
export type AuditAction = keyof typeof LOG_TYPES;

/** Who did it: a user, or an admin token (GoTrue records the role as the actor's name). */
export type AuditActor = Pick<UserRow, "id" | "email" | "phone" | "is_sso_user" | "raw_user_meta_data"> | { adminRole: string };

/**
 * Appends an audit entry shaped like GoTrue's (`actor_id`, `actor_username`, `action`, `log_type`,
 * `traits`), so the Studio-style audit views and anything reading the table see the same payload.
 */
export async function recordAudit(db: Db, actor: AuditActor, action: AuditAction, ip: string | null, traits?: Record<string, unknown>): Promise<void> {
  const payload: Record<string, unknown> =
    "adminRole" in actor
      ? { actor_id: NIL_INSTANCE_ID, actor_username: actor.adminRole, actor_via_sso: false }
      : { actor_id: actor.id, actor_via_sso: actor.is_sso_user };
  if (!("adminRole" in actor)) {
    const fullName = actor.raw_user_meta_data?.full_name;
    if (fullName !== undefined) payload.actor_name = fullName;
    // GoTrue names the actor by phone when it has one, else by e-mail.
    const username = actor.phone || actor.email;
    if (username) payload.actor_username = username;
  }
  payload.action = action;
  payload.log_type = LOG_TYPES[action];
  if (traits) payload.traits = traits;
  await db`
    insert into auth.audit_log_entries (instance_id, id, payload, created_at, ip_address)
    values (${NIL_INSTANCE_ID}, gen_random_uuid(), ${jsonb(db, payload)}::json, now(), ${ip ?? ""})`;
}
