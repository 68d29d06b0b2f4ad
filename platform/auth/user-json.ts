import type { FactorRow, IdentityRow, JsonObject, UserRecord } from "./users-repository.ts";

/** An identity as the API shows it: `identity_id` is the row id, `id` the provider's subject. */
export interface IdentityJson {
  identity_id: string;
  id: string;
  user_id: string;
  identity_data?: JsonObject;
  provider: string;
  last_sign_in_at?: string;
  created_at: string | null;
  updated_at: string | null;
  email?: string;
}

/** A user as GoTrue serialises it (tokens and the password hash never leave the service). */
export type UserJson = Record<string, unknown> & { id: string; identities: IdentityJson[] };

/**
 * Go's encoding/json writes map keys in sorted order at every level, so metadata and identity_data
 * come out alphabetised from GoTrue; this keeps the same bytes for anyone comparing responses.
 */
export function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== "object") return value;
  const source = value as Record<string, unknown>;
  return Object.fromEntries(Object.keys(source).sort().map((key) => [key, sortedKeys(source[key])]));
}

/** Adds a key only when the value is present, mirroring Go's `omitempty`. */
function optional(target: Record<string, unknown>, key: string, value: string | null | undefined): void {
  if (value !== null && value !== undefined && value !== "") target[key] = value;
}

/** Serialises one identity in GoTrue's field order. */
export function identityJson(identity: IdentityRow): IdentityJson {
  const json: Record<string, unknown> = {
    identity_id: identity.id,
    id: identity.provider_id,
    user_id: identity.user_id,
  };
  if (identity.identity_data && Object.keys(identity.identity_data).length > 0) json.identity_data = sortedKeys(identity.identity_data);
  json.provider = identity.provider;
  optional(json, "last_sign_in_at", identity.last_sign_in_at);
  json.created_at = identity.created_at;
  json.updated_at = identity.updated_at;
  optional(json, "email", identity.email);
  return json as unknown as IdentityJson;
}

/** A factor as GoTrue serialises it (auth-js `Factor`); the secret is never included. */
export function factorJson(factor: FactorRow): Record<string, unknown> {
  const json: Record<string, unknown> = { id: factor.id, created_at: factor.created_at, updated_at: factor.updated_at, status: factor.status };
  optional(json, "friendly_name", factor.friendly_name);
  json.factor_type = factor.factor_type;
  json.phone = factor.phone ?? "";
  json.last_challenged_at = factor.last_challenged_at;
  return json;
}

/**
 * Serialises a user in GoTrue's field order with its omitempty rules: email and phone are always
 * present ("" when absent), timestamps only when set, `new_email`/`new_phone` only when pending.
 */
export function userJson({ user, identities, factors }: UserRecord): UserJson {
  const json: Record<string, unknown> = {
    id: user.id,
    aud: user.aud ?? "",
    role: user.role ?? "",
    email: user.email ?? "",
  };
  optional(json, "email_confirmed_at", user.email_confirmed_at);
  optional(json, "invited_at", user.invited_at);
  json.phone = user.phone ?? "";
  optional(json, "phone_confirmed_at", user.phone_confirmed_at);
  optional(json, "confirmation_sent_at", user.confirmation_sent_at);
  optional(json, "confirmed_at", user.confirmed_at);
  optional(json, "recovery_sent_at", user.recovery_sent_at);
  optional(json, "new_email", user.email_change);
  optional(json, "email_change_sent_at", user.email_change_sent_at);
  optional(json, "new_phone", user.phone_change);
  optional(json, "phone_change_sent_at", user.phone_change_sent_at);
  optional(json, "reauthentication_sent_at", user.reauthentication_sent_at);
  optional(json, "last_sign_in_at", user.last_sign_in_at);
  json.app_metadata = sortedKeys(user.raw_app_meta_data ?? {});
  json.user_metadata = sortedKeys(user.raw_user_meta_data ?? {});
  if (factors.length > 0) json.factors = factors.map(factorJson);
  json.identities = identities.map(identityJson);
  json.created_at = user.created_at;
  json.updated_at = user.updated_at;
  optional(json, "banned_until", user.banned_until);
  optional(json, "deleted_at", user.deleted_at);
  json.is_anonymous = user.is_anonymous;
  return json as UserJson;
}
