import type { Db } from "./db.ts";
import { badRequest } from "./errors.ts";
import { clearAllOneTimeTokens } from "./one-time-tokens.ts";
import { deleteAllSessions, deleteOtherSessions } from "./sessions-repository.ts";
import { findUserById, insertIdentity, updateIdentityData, updateUser, type JsonObject, type UserRecord } from "./users-repository.ts";

// checkmail's format check, which GoTrue's validateEmail applies.
const EMAIL_FORMAT = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** GoTrue's validateEmail: required, at most 255 characters, checkmail's format; returns it lower-cased. */
export function validateEmail(email: string): string {
  if (email === "") throw badRequest("validation_failed", "An email address is required");
  if (email.length > 255) throw badRequest("validation_failed", "An email address is too long");
  if (!EMAIL_FORMAT.test(email)) throw badRequest("validation_failed", "Unable to validate email address: invalid format");
  return email.toLowerCase();
}

/** GoTrue's validatePhone: strips formatting characters, then requires E.164 digits. */
export function validatePhone(phone: string): string {
  const digits = phone.replace(/[\s+\-()]/g, "");
  if (!/^[1-9]\d{1,14}$/.test(digits)) throw badRequest("validation_failed", "Invalid phone number format (E.164 required)");
  return digits;
}

/**
 * Merges metadata the way GoTrue's UpdateUserMetaData/UpdateAppMetaData do: top-level keys are set,
 * a null value removes the key, keys not mentioned are kept.
 */
export function mergeMetadata(current: JsonObject | null, updates: JsonObject): JsonObject {
  const merged: JsonObject = { ...(current ?? {}) };
  for (const [key, value] of Object.entries(updates)) {
    if (value === null) delete merged[key];
    // defineProperty, not assignment: a "__proto__" key from JSON must stay an ordinary key.
    else Object.defineProperty(merged, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return merged;
}

/** The identity_data GoTrue writes for an email or phone identity (provider.Claims without empty fields). */
export function baseIdentityData(userId: string, contact: { email?: string; phone?: string }): JsonObject {
  const data: JsonObject = { sub: userId };
  if (contact.email) data.email = contact.email;
  data.email_verified = false;
  if (contact.phone) data.phone = contact.phone;
  data.phone_verified = false;
  return data;
}

/** Creates the user's identity for a provider; for email and phone the provider id is the user id. */
export async function createIdentity(db: Db, userId: string, provider: "email" | "phone", identityData: JsonObject): Promise<void> {
  await insertIdentity(db, userId, provider, String(identityData.sub ?? userId), identityData);
}

/**
 * GoTrue's User.Confirm: stamps email_confirmed_at, clears the confirmation token and records
 * `email_verified: true` in user_metadata (which is why confirmed users carry that key).
 */
export async function confirmEmail(db: Db, record: UserRecord): Promise<void> {
  await updateUser(db, record.user.id, {
    confirmation_token: "",
    email_confirmed_at: "now",
    raw_user_meta_data: mergeMetadata(record.user.raw_user_meta_data, { email_verified: true }),
  });
  await clearAllOneTimeTokens(db, record.user.id);
}

/**
 * GoTrue's UpdatePassword: stores the new hash, voids every pending one-time token (the old
 * password may have been compromised) and signs out other sessions, or all of them when no session
 * is kept (admin changes).
 */
export async function storeNewPassword(db: Db, userId: string, hash: string | null, keepSessionId: string | null): Promise<void> {
  await updateUser(db, userId, {
    encrypted_password: hash,
    confirmation_token: "",
    confirmation_sent_at: null,
    recovery_token: "",
    recovery_sent_at: null,
    email_change_token_current: "",
    email_change_token_new: "",
    email_change_sent_at: null,
    phone_change_token: "",
    phone_change_sent_at: null,
    reauthentication_token: "",
    reauthentication_sent_at: null,
  });
  await clearAllOneTimeTokens(db, userId);
  if (keepSessionId === null) {
    await deleteAllSessions(db, userId);
  } else {
    await deleteOtherSessions(db, userId, keepSessionId);
  }
}

/**
 * Points the user's email or phone identity at a new address (GoTrue updates the existing identity's
 * data, or creates the identity when the user had none for that provider).
 */
export async function upsertContactIdentity(db: Db, record: UserRecord, provider: "email" | "phone", address: string, verified: boolean): Promise<void> {
  const existing = record.identities.find((identity) => identity.provider === provider && identity.provider_id === record.user.id);
  const verifiedKey = provider === "email" ? "email_verified" : "phone_verified";
  if (existing) {
    await updateIdentityData(db, existing.id, mergeMetadata(existing.identity_data, { [provider]: address, [verifiedKey]: verified }));
    return;
  }
  const data = baseIdentityData(record.user.id, provider === "email" ? { email: address } : { phone: address });
  data[verifiedKey] = verified;
  await createIdentity(db, record.user.id, provider, data);
}

/** Recomputes app_metadata.providers (and provider, the first one) from the user's identities. */
export async function refreshProviders(db: Db, userId: string): Promise<void> {
  const record = await findUserById(db, userId);
  if (!record) return;
  const providers = [...new Set(record.identities.map((identity) => identity.provider))];
  const updates: JsonObject = { providers };
  if (providers.length > 0) updates.provider = providers[0];
  await updateUser(db, userId, { raw_app_meta_data: mergeMetadata(record.user.raw_app_meta_data, updates) });
}

/** Reloads a user after changes, for the response body. */
export async function reload(db: Db, userId: string): Promise<UserRecord> {
  const record = await findUserById(db, userId);
  if (!record) throw badRequest("user_not_found", "User not found");
  return record;
}
