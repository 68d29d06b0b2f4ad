import type { SupabaseClient } from "@supabase/supabase-js";
import { z } from "zod";
import type { ClaimsVerifier } from "../auth/jwt-claims.ts";
import { createCallerClient } from "../db/supabase-clients.ts";
import { resolveCaller } from "../http/caller.ts";
import { HttpError } from "../http/errors.ts";
import { portalErrors } from "./errors.ts";

/** The application roles of the portal (enum public.app_role). */
export type AppRole = "super_admin" | "admin" | "technician";

/** A signed-in caller: their user id and a client that acts as them (RLS applies). */
export interface Caller {
  userId: string;
  client: SupabaseClient;
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

const roleRowsSchema = z.array(z.object({ role: z.enum(["super_admin", "admin", "technician"]) }));

/** The roles a user holds, read with the given client (a caller reads their own; the service role anyone's). */
export async function rolesOf(client: SupabaseClient, userId: string): Promise<Set<AppRole>> {
  const { data, error } = await client.from("user_roles").select("role").eq("user_id", userId);
  if (error) throw new HttpError(error.code === "PGRST301" ? 401 : 502, error.code === "PGRST301" ? "unauthorized" : "database_error", error.message);
  return new Set(roleRowsSchema.parse(data).map((row) => row.role));
}

/** Whether a set of roles includes admin or super_admin. */
export function isAdministrator(roles: Set<AppRole>): boolean {
  return roles.has("admin") || roles.has("super_admin");
}
