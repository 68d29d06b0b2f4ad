import { randomUUID } from "node:crypto";
import type { Db } from "./db.ts";

/** The kinds of auth.one_time_tokens rows, one live row per kind and user (GoTrue's OneTimeTokenType). */
export type OneTimeTokenType =
  | "confirmation_token"
  | "reauthentication_token"
  | "recovery_token"
  | "email_change_token_new"
  | "email_change_token_current"
  | "phone_change_token";

/** A row of auth.one_time_tokens. */
export interface OneTimeTokenRow {
  id: string;
  user_id: string;
  token_type: OneTimeTokenType;
  token_hash: string;
  relates_to: string;
}

/**
 * Records the hash of a code or link just sent, replacing the user's previous one of that kind, as
 * GoTrue's CreateOneTimeToken does (the users row keeps the same hash in its token column).
 */
export async function createOneTimeToken(db: Db, userId: string, relatesTo: string, hash: string, type: OneTimeTokenType): Promise<void> {
  await db`delete from auth.one_time_tokens where user_id = ${userId} and token_type = ${type}::auth.one_time_token_type`;
  await db`
    insert into auth.one_time_tokens (id, user_id, token_type, token_hash, relates_to)
    values (${randomUUID()}, ${userId}, ${type}::auth.one_time_token_type, ${hash}, ${relatesTo.toLowerCase()})`;
}

/** The token row with this hash among the given kinds, or null (a used or replaced token is gone). */
export async function findOneTimeToken(db: Db, hash: string, types: OneTimeTokenType[]): Promise<OneTimeTokenRow | null> {
  const [row] = await db<OneTimeTokenRow[]>`
    select id, user_id, token_type::text as token_type, token_hash, relates_to from auth.one_time_tokens
    where token_hash = ${hash} and token_type::text = any(${types}::text[])
    limit 1`;
  return row ?? null;
}

/** Drops one kind of the user's pending tokens. */
export async function clearOneTimeToken(db: Db, userId: string, type: OneTimeTokenType): Promise<void> {
  await db`delete from auth.one_time_tokens where user_id = ${userId} and token_type = ${type}::auth.one_time_token_type`;
}

/** Drops all of the user's pending tokens: one used link or code voids the others, as in GoTrue. */
export async function clearAllOneTimeTokens(db: Db, userId: string): Promise<void> {
  await db`delete from auth.one_time_tokens where user_id = ${userId}`;
}
