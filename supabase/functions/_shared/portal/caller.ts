import type { SupabaseClient } from "@supabase/supabase-js";
import type { Database } from "../db/database.types.ts";
import type { ClaimsVerifier } from "../auth/jwt-claims.ts";
import { createCallerClient } from "../db/supabase-clients.ts";
import { resolveCaller } from "../http/caller.ts";
import { HttpError } from "../http/errors.ts";
import { portalErrors } from "./errors.ts";

/** A signed-in caller: their user id and a client that acts as them (RLS applies). */
export interface Caller {
  userId: string;
  client: SupabaseClient<Database>;
}

/**
 * The signed-in user behind a request, or 401. The anon key is a valid JWT too, so the check is
 * that the token belongs to a user (role authenticated, a `sub` Postgres accepts as a UUID), not
 * merely that it verifies. The functions run with verify_jwt = true, and http/caller.ts verifies
 * the token again when the function holds its key; every privileged read goes through PostgREST
 * with the same token besides.
 */
export async function requireCaller(request: Request, verify?: ClaimsVerifier): Promise<Caller> {
  const principal = await resolveCaller(request, { errors: portalErrors, verify });
  if (principal.kind !== "user") throw portalErrors.describe({ kind: "missing_credentials" });
  return { userId: principal.userId, client: createCallerClient(principal.authorization) };
}

/** A failed call through the caller's client: 401 when PostgREST refused the token, 502 otherwise. */
export function databaseFailure(error: { code?: string; message: string }): HttpError {
  return error.code === "PGRST301" ? new HttpError(401, "unauthorized", error.message) : new HttpError(502, "database_error", error.message);
}
