/**
 * How the gamification handler reaches the database for a caller. When the caller's token was
 * verified inside the function (http/caller.ts: SUPABASE_JWKS holds the key that signed it) and
 * the function has SUPABASE_DB_URL, the SQL function runs over the function's own connection as
 * the caller (db/direct-rpc.ts): one hop instead of three (function → gateway → PostgREST →
 * Postgres), which the scoring and position figures need. Otherwise the call goes through
 * PostgREST with the caller's token, which then verifies it. Either way the SQL function sees the
 * same role and claims.
 */
import { callAsCaller, projectDatabase, type DirectDatabase } from "../db/direct-rpc.ts";
import { postgrestRpc } from "../db/rpc.ts";
import { createCallerClient } from "../db/supabase-clients.ts";
import type { TokenPrincipal } from "../http/caller.ts";
import type { RpcRunner } from "./rpc.ts";

/** Creates the database access for one request's caller. */
export type RunnerFactory = (caller: TokenPrincipal) => RpcRunner;

/** Runs the call through PostgREST (supabase-js `rpc`) with the caller's own token. */
export const postgrestRunner: RunnerFactory = (caller) => {
  const client = createCallerClient(caller.authorization);
  return (fn, args) => postgrestRpc(client, fn, args);
};

/** A runner factory that calls over `database` for verified callers, through `fallback` for the rest. */
export function createDirectRunner(database: () => DirectDatabase | null, fallback: RunnerFactory = postgrestRunner): RunnerFactory {
  return (caller) => async (fn, args) => {
    const db = database();
    if (!db || !caller.verified) return await fallback(caller)(fn, args);
    try {
      return { data: await callAsCaller(db, caller.claims, fn, args), error: null, status: 200 };
    } catch (error) {
      // A role without EXECUTE on the function: PostgREST answers 401 to anon and 403 to others.
      if ((error as { code?: unknown }).code !== "42501") throw error;
      return { data: null, error: { code: "42501", message: (error as Error).message }, status: caller.claims.role === "anon" ? 401 : 403 };
    }
  };
}

/** The default: direct when possible, through PostgREST otherwise. */
export const callerRunner: RunnerFactory = createDirectRunner(projectDatabase);
