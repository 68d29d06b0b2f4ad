import { randomBytes, randomUUID } from "node:crypto";
import type { Db } from "./db.ts";
import type { AmrEntry } from "./jwt.ts";
import { NIL_INSTANCE_ID } from "./users-repository.ts";

/** A row of auth.sessions. */
export interface SessionRow {
  id: string;
  user_id: string;
  created_at: string;
  updated_at: string;
  factor_id: string | null;
  aal: string | null;
  not_after: string | null;
}

/** A row of auth.refresh_tokens. */
export interface RefreshTokenRow {
  id: string;
  token: string;
  user_id: string;
  revoked: boolean;
  parent: string | null;
  session_id: string | null;
  created_at: string;
  updated_at: string;
}

/** Where a grant came from; GoTrue keeps it on the session row. */
export interface ClientInfo {
  userAgent: string | null;
  ip: string | null;
}

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

/**
 * A refresh token as GoTrue mints them: 12 characters of lower-case base32 from a CSPRNG. They are
 * opaque to clients and looked up verbatim.
 */
export function newRefreshTokenString(length = 12): string {
  const bytes = randomBytes(Math.ceil((length * 5) / 8));
  let bits = 0;
  let buffer = 0;
  let output = "";
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5 && output.length < length) {
      output += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return output;
}

/** Creates a session at aal1 and returns its id. */
export async function createSession(db: Db, userId: string, client: ClientInfo): Promise<string> {
  const id = randomUUID();
  await db`
    insert into auth.sessions (id, user_id, created_at, updated_at, aal, user_agent, ip)
    values (${id}, ${userId}, now(), now(), 'aal1', ${client.userAgent}, ${client.ip}::inet)`;
  return id;
}

/** The session with this id, or null. */
export async function findSession(db: Db, sessionId: string, forUpdate = false): Promise<SessionRow | null> {
  const [row] = forUpdate
    ? await db<SessionRow[]>`select id, user_id, created_at, updated_at, factor_id, aal::text as aal, not_after from auth.sessions where id = ${sessionId} for update`
    : await db<SessionRow[]>`select id, user_id, created_at, updated_at, factor_id, aal::text as aal, not_after from auth.sessions where id = ${sessionId}`;
  return row ?? null;
}

/** Records a refresh of the session (GoTrue's UpdateOnlyRefreshInfo). */
export async function touchSession(db: Db, sessionId: string, client: ClientInfo): Promise<void> {
  await db`
    update auth.sessions
    set refreshed_at = now() at time zone 'utc', updated_at = now(),
        user_agent = ${client.userAgent}, ip = ${client.ip}::inet
    where id = ${sessionId}`;
}

/** Mints and stores a refresh token for a session; `parent` is the token it replaces. */
export async function insertRefreshToken(db: Db, userId: string, sessionId: string, parent: string | null): Promise<string> {
  const token = newRefreshTokenString();
  await db`
    insert into auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, parent, session_id)
    values (${NIL_INSTANCE_ID}, ${token}, ${userId}, false, now(), now(), ${parent}, ${sessionId})`;
  return token;
}

/** The refresh token row for a token string, locked for the rest of the transaction when asked. */
export async function findRefreshToken(db: Db, token: string, forUpdate = false): Promise<RefreshTokenRow | null> {
  const [row] = forUpdate
    ? await db<RefreshTokenRow[]>`select id::text as id, token, user_id, revoked, parent, session_id, created_at, updated_at from auth.refresh_tokens where token = ${token} limit 1 for update`
    : await db<RefreshTokenRow[]>`select id::text as id, token, user_id, revoked, parent, session_id, created_at, updated_at from auth.refresh_tokens where token = ${token} limit 1`;
  return row ?? null;
}

/** The newest unrevoked token of a session (GoTrue's FindCurrentlyActiveRefreshToken). */
export async function findActiveRefreshToken(db: Db, sessionId: string): Promise<RefreshTokenRow | null> {
  const [row] = await db<RefreshTokenRow[]>`
    select id::text as id, token, user_id, revoked, parent, session_id, created_at, updated_at
    from auth.refresh_tokens where session_id = ${sessionId} and revoked = false
    order by id desc limit 1`;
  return row ?? null;
}

/** Marks one refresh token revoked; updated_at starts its reuse window. */
export async function revokeRefreshToken(db: Db, tokenId: string): Promise<void> {
  await db`update auth.refresh_tokens set revoked = true, updated_at = now() where id = ${tokenId}`;
}

/** Whether more than `seconds` have passed since the token was revoked (its updated_at). */
export async function reuseWindowClosed(db: Db, tokenId: string, seconds: number): Promise<boolean> {
  const [row] = await db<{ closed: boolean }[]>`
    select now() > updated_at + make_interval(secs => ${seconds}) as closed from auth.refresh_tokens where id = ${tokenId}`;
  return row?.closed ?? true;
}

/** Deletes one refresh token. */
export async function deleteRefreshToken(db: Db, tokenId: string): Promise<void> {
  await db`delete from auth.refresh_tokens where id = ${tokenId}`;
}

/** Revokes every live token of the session, after a reuse outside the window (possible theft). */
export async function revokeTokenFamily(db: Db, sessionId: string): Promise<void> {
  await db`update auth.refresh_tokens set revoked = true, updated_at = now() where session_id = ${sessionId} and revoked = false`;
}

/** Adds (or refreshes) an authentication-method claim on the session. */
export async function addAmrClaim(db: Db, sessionId: string, method: string): Promise<void> {
  await db`
    insert into auth.mfa_amr_claims (id, session_id, created_at, updated_at, authentication_method)
    values (gen_random_uuid(), ${sessionId}, now(), now(), ${method})
    on conflict on constraint mfa_amr_claims_session_id_authentication_method_pkey
    do update set updated_at = excluded.updated_at`;
}

/** The session's `amr` claim entries, newest first, with unix-second timestamps. */
export async function listAmrClaims(db: Db, sessionId: string): Promise<AmrEntry[]> {
  const rows = await db<{ method: string; timestamp: string }[]>`
    select authentication_method as method, floor(extract(epoch from updated_at))::bigint::text as timestamp
    from auth.mfa_amr_claims where session_id = ${sessionId} order by updated_at desc`;
  return rows.map((row) => ({ method: row.method, timestamp: Number(row.timestamp) }));
}

/** Signs the user out everywhere: all sessions (tokens and claims cascade) and legacy tokens. */
export async function deleteAllSessions(db: Db, userId: string): Promise<void> {
  await db`delete from auth.sessions where user_id = ${userId}`;
  await db`delete from auth.refresh_tokens where instance_id = ${NIL_INSTANCE_ID} and user_id = ${userId}`;
}

/** Signs out one session. */
export async function deleteSession(db: Db, sessionId: string): Promise<void> {
  await db`delete from auth.sessions where id = ${sessionId}`;
}

/** Signs out every session of the user but one. */
export async function deleteOtherSessions(db: Db, userId: string, keepSessionId: string): Promise<void> {
  await db`delete from auth.sessions where user_id = ${userId} and id <> ${keepSessionId}`;
  await db`delete from auth.refresh_tokens where instance_id = ${NIL_INSTANCE_ID} and user_id = ${userId} and session_id is distinct from ${keepSessionId}`;
}
