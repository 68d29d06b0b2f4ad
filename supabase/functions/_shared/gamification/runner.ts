/**
 * How the gamification handler reaches the database for a caller. When the function can verify
 * the caller's JWT itself (SUPABASE_JWKS holds the key that signed it) and has SUPABASE_DB_URL,
 * the SQL function runs over the function's own connection as the caller (direct-rpc.ts): one
 * hop instead of three (function → gateway → PostgREST → Postgres), which the scoring and
 * position figures need. Otherwise the call goes through PostgREST with the caller's token,
 * which then verifies it. Either way the SQL function sees the same role and claims.
 */
import { callAsCaller, openDirectDatabase, type DirectDatabase } from "../direct-rpc.ts";
import { readEnv } from "../env.ts";
import { createClaimsVerifier, type ClaimsVerifier } from "../jwt-claims.ts";
import { createCallerClient } from "../supabase-clients.ts";
import type { RpcRunner } from "./rpc.ts";

/** Creates the database access for one request from its `Authorization: Bearer <JWT>` header. */
export type RunnerFactory = (authorization: string) => RpcRunner;

/** Runs the call through PostgREST (supabase-js `rpc`) with the caller's own token. */
export const postgrestRunner: RunnerFactory = (authorization) => {
  const client = createCallerClient(authorization);
  return (fn, args) => client.rpc(fn, args);
};

/** A runner factory that verifies tokens with `verify` and calls over `database` when it can. */
export function createDirectRunner(verify: ClaimsVerifier, database: () => DirectDatabase | null, fallback: RunnerFactory = postgrestRunner): RunnerFactory {
  return (authorization) => async (fn, args) => {
    const db = database();
    if (!db) return fallback(authorization)(fn, args);
    const check = await verify(authorization.replace(/^Bearer /, ""));
    if (check.status === "unverifiable") return fallback(authorization)(fn, args);
    // The messages PostgREST gives for the same tokens, so both paths answer alike.
    if (check.status !== "valid") {
      return { data: null, error: { code: check.status === "expired" ? "PGRST303" : "PGRST301", message: check.reason }, status: 401 };
    }
    try {
      return { data: await callAsCaller(db, check.claims, fn, args), error: null, status: 200 };
    } catch (error) {
      // A role without EXECUTE on the function: PostgREST answers 401 to anon and 403 to others.
      if ((error as { code?: unknown }).code !== "42501") throw error;
      return { data: null, error: { code: "42501", message: (error as Error).message }, status: check.claims.role === "anon" ? 401 : 403 };
    }
  };
}

let sharedDatabase: DirectDatabase | null | undefined;

/** The function instance's pool on SUPABASE_DB_URL, opened on first use (null when the variable is unset). */
function projectDatabase(): DirectDatabase | null {
  if (sharedDatabase === undefined) {
    const url = readEnv("SUPABASE_DB_URL");
    sharedDatabase = url ? openDirectDatabase(url) : null;
  }
  return sharedDatabase;
}

let defaultRunner: RunnerFactory | undefined;

/** The default: direct when possible, through PostgREST otherwise (built on first use, once the environment is read). */
export const callerRunner: RunnerFactory = (authorization) => {
  defaultRunner ??= createDirectRunner(createClaimsVerifier(readEnv("SUPABASE_JWKS")), projectDatabase);
  return defaultRunner(authorization);
};
