import type postgres from "postgres";
import { jsonb, type Db } from "./db.ts";

/** GoTrue keeps every user of a single-tenant install under the nil instance id, and queries by it. */
export const NIL_INSTANCE_ID = "00000000-0000-0000-0000-000000000000";

/** JSON object stored in a jsonb column. */
export type JsonObject = Record<string, unknown>;

/** A row of auth.users as read from the database (timestamps as RFC 3339 text). */
export interface UserRow {
  instance_id: string | null;
  id: string;
  aud: string | null;
  role: string | null;
  email: string | null;
  encrypted_password: string | null;
  email_confirmed_at: string | null;
  invited_at: string | null;
  confirmation_token: string | null;
  confirmation_sent_at: string | null;
  recovery_token: string | null;
  recovery_sent_at: string | null;
  email_change_token_new: string | null;
  email_change: string | null;
  email_change_sent_at: string | null;
  last_sign_in_at: string | null;
  raw_app_meta_data: JsonObject | null;
  raw_user_meta_data: JsonObject | null;
  created_at: string | null;
  updated_at: string | null;
  phone: string | null;
  phone_confirmed_at: string | null;
  phone_change: string | null;
  phone_change_token: string | null;
  phone_change_sent_at: string | null;
  confirmed_at: string | null;
  email_change_token_current: string | null;
  email_change_confirm_status: number | null;
  banned_until: string | null;
  reauthentication_token: string | null;
  reauthentication_sent_at: string | null;
  is_sso_user: boolean;
  deleted_at: string | null;
  is_anonymous: boolean;
}

/** A row of auth.identities. */
export interface IdentityRow {
  id: string;
  provider_id: string;
  user_id: string;
  identity_data: JsonObject | null;
  provider: string;
  last_sign_in_at: string | null;
  created_at: string | null;
  updated_at: string | null;
  email: string | null;
}

/** A row of auth.mfa_factors (the secret never leaves the service). */
export interface FactorRow {
  id: string;
  user_id: string;
  friendly_name: string | null;
  factor_type: "totp" | "webauthn" | "phone";
  status: "unverified" | "verified";
  created_at: string;
  updated_at: string;
  secret: string | null;
  phone: string | null;
  last_challenged_at: string | null;
}

/** A user together with its identities and MFA factors, as GoTrue loads it (eagerly). */
export interface UserRecord {
  user: UserRow;
  identities: IdentityRow[];
  factors: FactorRow[];
}

/**
 * GoTrue scans these columns into non-nullable Go values (strings, ints, times). A NULL in any of
 * them makes every query that loads the user fail; seeds that forget to set the token columns to ''
 * hit exactly this on real Supabase ("converting NULL to string is unsupported").
 */
const NON_NULL_USER_COLUMNS = [
  "aud",
  "role",
  "confirmation_token",
  "recovery_token",
  "email_change_token_new",
  "email_change",
  "email_change_token_current",
  "phone_change",
  "phone_change_token",
  "reauthentication_token",
  "email_change_confirm_status",
  "created_at",
  "updated_at",
] as const satisfies readonly (keyof UserRow)[];

const NON_NULL_IDENTITY_COLUMNS = ["created_at", "updated_at"] as const satisfies readonly (keyof IdentityRow)[];

/** A stored user GoTrue could not read back (a NULL where Go expects a value). */
export class UnreadableUserError extends Error {
  constructor(userId: string, column: string) {
    super(`sql: Scan error on column "${column}" of user ${userId}: converting NULL to string is unsupported`);
    this.name = "UnreadableUserError";
  }
}

function assertReadable(record: UserRecord): UserRecord {
  for (const column of NON_NULL_USER_COLUMNS) {
    if (record.user[column] === null) throw new UnreadableUserError(record.user.id, column);
  }
  for (const identity of record.identities) {
    for (const column of NON_NULL_IDENTITY_COLUMNS) {
      if (identity[column] === null) throw new UnreadableUserError(record.user.id, `identities.${column}`);
    }
  }
  return record;
}

async function withIdentities(db: Db, user: UserRow | undefined): Promise<UserRecord | null> {
  if (!user) return null;
  const identities = await db<IdentityRow[]>`
    select * from auth.identities where user_id = ${user.id} order by created_at, id`;
  const factors = await db<FactorRow[]>`
    select id, user_id, friendly_name, factor_type::text as factor_type, status::text as status, created_at, updated_at, secret, phone, last_challenged_at
    from auth.mfa_factors where user_id = ${user.id} order by created_at, id`;
  return assertReadable({ user, identities: [...identities], factors: [...factors] });
}

/** The user with this id (GoTrue's FindUserByID), or null. Throws UnreadableUserError for bad seeds. */
export async function findUserById(db: Db, id: string, forUpdate = false): Promise<UserRecord | null> {
  const [user] = forUpdate
    ? await db<UserRow[]>`select * from auth.users where instance_id = ${NIL_INSTANCE_ID} and id = ${id} limit 1 for update`
    : await db<UserRow[]>`select * from auth.users where instance_id = ${NIL_INSTANCE_ID} and id = ${id} limit 1`;
  return withIdentities(db, user);
}

/** The non-SSO user with this email (case-insensitive) in the audience, or null. */
export async function findUserByEmail(db: Db, email: string, aud: string): Promise<UserRecord | null> {
  const [user] = await db<UserRow[]>`
    select * from auth.users
    where instance_id = ${NIL_INSTANCE_ID} and lower(email) = ${email.toLowerCase()} and aud = ${aud} and is_sso_user = false
    limit 1`;
  return withIdentities(db, user);
}

/** The non-SSO user with this phone in the audience, or null. */
export async function findUserByPhone(db: Db, phone: string, aud: string): Promise<UserRecord | null> {
  const [user] = await db<UserRow[]>`
    select * from auth.users
    where instance_id = ${NIL_INSTANCE_ID} and phone = ${phone} and aud = ${aud} and is_sso_user = false
    limit 1`;
  return withIdentities(db, user);
}

/**
 * GoTrue's IsDuplicatedEmail: another user of the audience already holds this email, through a
 * non-SSO identity or, failing that, the users table. `exceptUserId` skips the caller's own account.
 */
export async function findUserHoldingEmail(db: Db, email: string, aud: string, exceptUserId?: string): Promise<UserRecord | null> {
  const owners = await db<{ user_id: string }[]>`
    select distinct user_id from auth.identities
    where email = ${email.toLowerCase()} and provider not like 'sso:%'`;
  for (const { user_id } of owners) {
    if (user_id === exceptUserId) continue;
    const owner = await findUserById(db, user_id);
    if (owner && owner.user.aud === aud) return owner;
  }
  const byEmail = await findUserByEmail(db, email, aud);
  return byEmail && byEmail.user.id !== exceptUserId ? byEmail : null;
}


/** What a new user row needs; everything else gets GoTrue's zero values. */
export interface NewUser {
  id: string;
  aud: string;
  role: string;
  email: string | null;
  phone: string | null;
  encryptedPassword: string | null;
  appMetadata: JsonObject;
  userMetadata: JsonObject;
  isAnonymous?: boolean;
}

/**
 * Inserts a user the way GoTrue's model does: nil instance id, every token column '' (never NULL),
 * NULL for an absent email or phone.
 */
export async function insertUser(db: Db, user: NewUser): Promise<void> {
  await db`
    insert into auth.users (
      instance_id, id, aud, role, email, encrypted_password,
      confirmation_token, recovery_token, email_change_token_new, email_change,
      email_change_token_current, email_change_confirm_status, phone_change, phone_change_token,
      reauthentication_token, raw_app_meta_data, raw_user_meta_data, phone,
      created_at, updated_at, is_sso_user, is_anonymous
    ) values (
      ${NIL_INSTANCE_ID}, ${user.id}, ${user.aud}, ${user.role}, ${user.email}, ${user.encryptedPassword},
      '', '', '', '',
      '', 0, '', '',
      '', ${jsonb(db, user.appMetadata)}, ${jsonb(db, user.userMetadata)}, ${user.phone},
      now(), now(), false, ${user.isAnonymous ?? false}
    )`;
}

/** Inserts an identity (provider_id is the user id for the email and phone providers). */
export async function insertIdentity(db: Db, userId: string, provider: string, providerId: string, identityData: JsonObject): Promise<void> {
  await db`
    insert into auth.identities (id, provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
    values (gen_random_uuid(), ${providerId}, ${userId}, ${jsonb(db, identityData)}, ${provider}, now(), now(), now())`;
}

/** Replaces an identity's identity_data (and its provider_id, which a soft delete obfuscates). */
export async function updateIdentityData(db: Db, identityId: string, identityData: JsonObject, providerId?: string): Promise<void> {
  if (providerId === undefined) {
    await db`update auth.identities set identity_data = ${jsonb(db, identityData)}, updated_at = now() where id = ${identityId}`;
  } else {
    await db`update auth.identities set identity_data = ${jsonb(db, identityData)}, provider_id = ${providerId}, updated_at = now() where id = ${identityId}`;
  }
}

/** Columns the service writes after creation; updated_at is always bumped, as pop's UpdateOnly does. */
export interface UserChanges {
  role?: string;
  email?: string | null;
  phone?: string | null;
  encrypted_password?: string | null;
  email_confirmed_at?: "now" | null;
  phone_confirmed_at?: "now" | null;
  last_sign_in_at?: "now";
  banned_until?: Date | null;
  raw_app_meta_data?: JsonObject;
  raw_user_meta_data?: JsonObject;
  confirmation_token?: string;
  recovery_token?: string;
  email_change_token_new?: string;
  email_change_token_current?: string;
  email_change?: string;
  email_change_confirm_status?: number;
  phone_change?: string;
  phone_change_token?: string;
  reauthentication_token?: string;
  confirmation_sent_at?: "now" | null;
  recovery_sent_at?: "now" | null;
  email_change_sent_at?: "now" | null;
  phone_change_sent_at?: "now" | null;
  reauthentication_sent_at?: "now" | null;
  invited_at?: "now";
  deleted_at?: "now";
  is_anonymous?: boolean;
}

/** Applies changes to one user row ("now" means the database clock, as GoTrue's time.Now()). */
export async function updateUser(db: Db, userId: string, changes: UserChanges): Promise<void> {
  const assignments: string[] = [];
  const parameters: (string | null | postgres.Parameter)[] = [];
  for (const [column, value] of Object.entries(changes) as [keyof UserChanges, unknown][]) {
    if (value === undefined) continue;
    if (value === "now") {
      assignments.push(`${column} = now()`);
      continue;
    }
    const cast = column === "raw_app_meta_data" || column === "raw_user_meta_data" ? "::jsonb" : column === "banned_until" ? "::timestamptz" : "";
    if (value === null) parameters.push(null);
    else if (value instanceof Date) parameters.push(value.toISOString());
    else if (typeof value === "object") parameters.push(jsonb(db, value as JsonObject));
    else parameters.push(String(value));
    assignments.push(`${column} = $${parameters.length}${cast}`);
  }
  parameters.push(userId);
  // Column names come from the UserChanges keys above, never from input, so the text is safe.
  await db.unsafe(`update auth.users set ${[...assignments, "updated_at = now()"].join(", ")} where id = $${parameters.length}`, parameters);
}

/** One page of the users of an audience, newest first (GoTrue's default sort), and the total. */
export async function listUsers(db: Db, aud: string, page: number, perPage: number): Promise<{ records: UserRecord[]; total: number }> {
  const [{ count }] = await db<{ count: string }[]>`
    select count(*)::text as count from auth.users where instance_id = ${NIL_INSTANCE_ID} and aud = ${aud}`;
  const offset = Math.max(page - 1, 0) * perPage;
  // A page past 2^53 users cannot hold any (and would not fit Postgres's bigint offset).
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(perPage)) return { records: [], total: Number(count) };
  const users = await db<UserRow[]>`
    select * from auth.users where instance_id = ${NIL_INSTANCE_ID} and aud = ${aud}
    order by created_at desc, id desc limit ${perPage} offset ${offset}`;
  const records: UserRecord[] = [];
  for (const user of users) {
    const record = await withIdentities(db, user);
    if (record) records.push(record);
  }
  return { records, total: Number(count) };
}

/** Deletes a user; identities, sessions, refresh tokens and amr claims go with it (foreign keys). */
export async function deleteUser(db: Db, userId: string): Promise<void> {
  await db`delete from auth.users where id = ${userId}`;
}
