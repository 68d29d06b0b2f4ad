import type { SupabaseClient } from "@supabase/supabase-js";
import { z } from "zod";
import { createCallerClient } from "../supabase-clients.ts";
import { PortalError } from "./errors.ts";

/** The application roles of the portal (enum public.app_role). */
export type AppRole = "super_admin" | "admin" | "technician";

/** A signed-in caller: their user id and a client that acts as them (RLS applies). */
export interface Caller {
  userId: string;
  client: SupabaseClient;
}

const claimsSchema = z.object({ sub: z.uuid(), role: z.literal("authenticated") });

/**
 * The claims of a bearer token, unverified. Only safe because these functions run with
 * verify_jwt = true (the runtime has already checked the signature and expiry) and every
 * privileged read goes through PostgREST with the same token, which verifies it again.
 */
export function claimsOf(token: string): z.infer<typeof claimsSchema> | null {
  const payload = token.split(".")[1];
  if (!payload) return null;
  try {
    const base64 = payload.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(payload.length / 4) * 4, "=");
    const json = new TextDecoder().decode(Uint8Array.from(atob(base64), (char) => char.charCodeAt(0)));
    const parsed = claimsSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * The signed-in user behind a request, or 401. The anon key is a valid JWT too, so the check is
 * that the token belongs to a user (role authenticated, a sub), not merely that it verifies.
 */
export function requireCaller(request: Request): Caller {
  const authorization = request.headers.get("authorization") ?? "";
  const token = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
  const claims = token ? claimsOf(token) : null;
  if (!claims) throw new PortalError(401, "unauthorized", "Sign in first: this function needs a user's access token");
  return { userId: claims.sub, client: createCallerClient(authorization) };
}

const roleRowsSchema = z.array(z.object({ role: z.enum(["super_admin", "admin", "technician"]) }));

/** The roles a user holds, read with the given client (a caller reads their own; the service role anyone's). */
export async function rolesOf(client: SupabaseClient, userId: string): Promise<Set<AppRole>> {
  const { data, error } = await client.from("user_roles").select("role").eq("user_id", userId);
  if (error) throw new PortalError(error.code === "PGRST301" ? 401 : 502, error.code === "PGRST301" ? "unauthorized" : "database_error", error.message);
  return new Set(roleRowsSchema.parse(data).map((row) => row.role));
}

/** Whether a set of roles includes admin or super_admin. */
export function isAdministrator(roles: Set<AppRole>): boolean {
  return roles.has("admin") || roles.has("super_admin");
}
