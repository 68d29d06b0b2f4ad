import { randomUUID } from "node:crypto";
import type { Db } from "./db.ts";
import { AuthError, badRequest, unprocessable } from "./errors.ts";
import { parseCodeChallengeMethod, type PkceAuthenticationMethod, type PkceRequest } from "./pkce.ts";

/**
 * How long a flow state's auth code may be exchanged: GoTrue's FlowStateExpiryDuration, whose
 * default (300 s) is also its floor, and which neither the CLI nor config.toml sets.
 */
export const FLOW_STATE_EXPIRY_SECONDS = 300;

/** A row of auth.flow_state, as far as e-mailed PKCE flows use it. */
export interface FlowStateRow {
  id: string;
  user_id: string | null;
  auth_code: string | null;
  code_challenge: string | null;
  code_challenge_method: string | null;
  provider_type: string;
  authentication_method: string;
  auth_code_issued_at: string | null;
  created_at: string;
}

/** What starts a flow state: the user the link is for, how they authenticate, and the client's challenge. */
export interface NewFlowState {
  userId: string;
  providerType: string;
  authenticationMethod: PkceAuthenticationMethod;
  pkce: PkceRequest;
}

/**
 * GoTrue's generateFlowState for a PKCE request: a fresh auth code (a UUID, as GoTrue mints it)
 * with the challenge and its lower-cased method. Run it in the transaction that sends the link.
 */
export async function createFlowState(db: Db, params: NewFlowState): Promise<void> {
  const method = parseCodeChallengeMethod(params.pkce.codeChallengeMethod);
  await db`
    insert into auth.flow_state (id, user_id, auth_code, code_challenge_method, code_challenge, provider_type, authentication_method, created_at, updated_at)
    values (${randomUUID()}, ${params.userId}, ${randomUUID()}, ${method}::auth.code_challenge_method, ${params.pkce.codeChallenge}, ${params.providerType}, ${params.authenticationMethod}, now(), now())`;
}

/**
 * The flow state of a request that gave a challenge (nothing for the implicit flow), created in the
 * transaction that sends its link. GoTrue names the provider after the method on these paths.
 */
export async function startFlow(db: Db, userId: string, authenticationMethod: PkceAuthenticationMethod, pkce: PkceRequest | null): Promise<void> {
  if (pkce) await createFlowState(db, { userId, providerType: authenticationMethod, authenticationMethod, pkce });
}

/**
 * GoTrue's issueAuthCode, when a PKCE link is followed: the user's newest flow state for this
 * authentication method hands out its auth code, and records when (a magic link's code lives
 * from then on). None is 400 flow_state_not_found in GoTrue's wording.
 */
export async function issueAuthCode(db: Db, userId: string, authenticationMethod: PkceAuthenticationMethod): Promise<string> {
  const [row] = await db<{ id: string; auth_code: string | null; code_challenge: string | null }[]>`
    select id, auth_code, code_challenge from auth.flow_state
    where user_id = ${userId} and authentication_method = ${authenticationMethod}
    order by created_at desc, id desc limit 1`;
  // GoTrue wraps its inner 422 in the 400, status and all.
  if (!row) throw badRequest("flow_state_not_found", "No associated flow state found. 422: No valid flow state found for user.");
  if (!row.code_challenge || !row.auth_code) throw badRequest("flow_state_not_found", "No associated flow state found. 422: Flow state does not have an auth code (not a PKCE flow).");
  await db`update auth.flow_state set auth_code_issued_at = now(), updated_at = now() where id = ${row.id}`;
  return row.auth_code;
}

/**
 * GoTrue's FlowState.IsExpired: a magic link's code lives FLOW_STATE_EXPIRY_SECONDS from when the
 * link handed it out; every other flow's from when the flow state was created (so a signup link
 * followed more than five minutes after the signup cannot be exchanged, as on Supabase).
 */
export function flowStateExpired(row: Pick<FlowStateRow, "authentication_method" | "auth_code_issued_at" | "created_at">, now = Date.now()): boolean {
  const start = row.auth_code_issued_at !== null && row.authentication_method === "magiclink" ? row.auth_code_issued_at : row.created_at;
  return now > Date.parse(start) + FLOW_STATE_EXPIRY_SECONDS * 1000;
}

/**
 * The flow state an auth code belongs to, locked until the caller's transaction ends so two
 * exchanges of one code cannot both succeed. Unknown, used or user-less codes are GoTrue's 404
 * flow_state_not_found; an expired one is 422 flow_state_expired.
 */
export async function takeFlowState(db: Db, authCode: string): Promise<FlowStateRow & { user_id: string }> {
  const [row] = await db<FlowStateRow[]>`
    select id, user_id, auth_code, code_challenge, code_challenge_method::text as code_challenge_method, provider_type,
           authentication_method, auth_code_issued_at, created_at
    from auth.flow_state where auth_code = ${authCode} limit 1 for update`;
  if (!row || row.user_id === null) throw new AuthError(404, "flow_state_not_found", "invalid flow state, no valid flow state found");
  if (flowStateExpired(row)) throw unprocessable("flow_state_expired", "invalid flow state, flow state has expired");
  return { ...row, user_id: row.user_id };
}

/** Removes a used flow state: an auth code is exchanged once. */
export async function deleteFlowState(db: Db, id: string): Promise<void> {
  await db`delete from auth.flow_state where id = ${id}`;
}
