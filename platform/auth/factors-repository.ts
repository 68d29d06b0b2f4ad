import { randomUUID } from "node:crypto";
import type { Db } from "./db.ts";
import type { FactorRow } from "./users-repository.ts";

/** A row of auth.mfa_challenges. */
export interface ChallengeRow {
  id: string;
  factor_id: string;
  created_at: string;
  verified_at: string | null;
  ip_address: string;
}

const FACTOR_COLUMNS = "id, user_id, friendly_name, factor_type::text as factor_type, status::text as status, created_at, updated_at, secret, phone, last_challenged_at";

/** Deletes unverified factors that were never challenged and are older than `seconds` (GoTrue's DeleteExpiredFactors). */
export async function deleteExpiredFactors(db: Db, seconds: number): Promise<void> {
  await db`
    delete from auth.mfa_factors f
    where status != 'verified' and created_at + make_interval(secs => ${seconds}) < now()
      and not exists (select 1 from auth.mfa_challenges c where c.factor_id = f.id)`;
}

/** Creates an unverified TOTP factor holding its secret. */
export async function insertTotpFactor(db: Db, userId: string, friendlyName: string, secret: string): Promise<FactorRow> {
  const [row] = await db<FactorRow[]>`
    insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret)
    values (${randomUUID()}, ${userId}, ${friendlyName}, 'totp', 'unverified', now(), now(), ${secret})
    returning ${db.unsafe(FACTOR_COLUMNS)}`;
  return row;
}

/** The user's factor with this id, or null (another user's factor is not found either). */
export async function findOwnedFactor(db: Db, userId: string, factorId: string): Promise<FactorRow | null> {
  const [row] = await db<FactorRow[]>`select ${db.unsafe(FACTOR_COLUMNS)} from auth.mfa_factors where id = ${factorId} and user_id = ${userId}`;
  return row ?? null;
}

/** Records a challenge of a factor from a client address, and when the factor was last challenged. */
export async function insertChallenge(db: Db, factorId: string, ip: string): Promise<ChallengeRow> {
  const [row] = await db<ChallengeRow[]>`
    insert into auth.mfa_challenges (id, factor_id, created_at, ip_address)
    values (${randomUUID()}, ${factorId}, now(), ${ip}::inet)
    returning id, factor_id, created_at, verified_at, host(ip_address) as ip_address`;
  await db`update auth.mfa_factors set last_challenged_at = now() where id = ${factorId}`;
  return row;
}

/** The factor's challenge with this id, or null. */
export async function findChallenge(db: Db, factorId: string, challengeId: string): Promise<ChallengeRow | null> {
  const [row] = await db<ChallengeRow[]>`
    select id, factor_id, created_at, verified_at, host(ip_address) as ip_address from auth.mfa_challenges
    where id = ${challengeId} and factor_id = ${factorId}`;
  return row ?? null;
}

/** Marks a challenge used. */
export async function markChallengeVerified(db: Db, challengeId: string): Promise<void> {
  await db`update auth.mfa_challenges set verified_at = now() where id = ${challengeId}`;
}

/** Deletes one challenge (an expired one is discarded when used). */
export async function deleteChallenge(db: Db, challengeId: string): Promise<void> {
  await db`delete from auth.mfa_challenges where id = ${challengeId}`;
}

/** Marks a factor verified. */
export async function markFactorVerified(db: Db, factorId: string): Promise<void> {
  await db`update auth.mfa_factors set status = 'verified', updated_at = now() where id = ${factorId}`;
}

/** Deletes the user's other unverified factors of a type once one is verified. */
export async function deleteUnverifiedFactors(db: Db, userId: string, factorType: string): Promise<void> {
  await db`delete from auth.mfa_factors where user_id = ${userId} and status = 'unverified' and factor_type::text = ${factorType}`;
}

/** Deletes a factor (its challenges cascade). */
export async function deleteFactor(db: Db, factorId: string): Promise<void> {
  await db`delete from auth.mfa_factors where id = ${factorId}`;
}

/** GoTrue's DowngradeSessionsToAAL1: sessions raised by the factor lose its amr claim and drop to aal1. */
export async function downgradeSessions(db: Db, factor: FactorRow): Promise<void> {
  await db`
    delete from auth.mfa_amr_claims where authentication_method = ${factor.factor_type}
      and session_id in (select id from auth.sessions where factor_id = ${factor.id})`;
  await db`update auth.sessions set aal = 'aal1', factor_id = null, updated_at = now() where user_id = ${factor.user_id} and factor_id = ${factor.id}`;
}

/** GoTrue's InvalidateSessionsWithAALLessThan(aal2): once a factor is verified, the user's aal1 sessions end. */
export async function deleteAal1Sessions(db: Db, userId: string): Promise<void> {
  await db`delete from auth.sessions where user_id = ${userId} and aal < 'aal2'`;
}
