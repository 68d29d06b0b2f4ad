import { createHmac } from "node:crypto";

/**
 * The Supabase CLI's well-known local JWT secret. Every `supabase start` uses it, so the anon and
 * service_role keys derived from it are the same on every machine and appear in Supabase's docs.
 * Set SUPABASE_JWT_SECRET to use another one.
 */
export const LOCAL_JWT_SECRET = "super-secret-jwt-token-with-at-least-32-characters-long";

/** The CLI's fixed local publishable key (maps to the anon role at the gateway). */
export const LOCAL_PUBLISHABLE_KEY = "sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH";

/** The CLI's fixed local secret key (maps to the service_role at the gateway). */
export const LOCAL_SECRET_KEY = "sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz";

/** Expiry the CLI writes into its local API keys (2032-11-12). */
const LOCAL_KEY_EXPIRY = 1983812996;

/** Signs an HS256 JWT whose header and payload keep the given key order (the CLI's keys depend on it). */
export function signHs256(payload: Record<string, unknown>, secret: string): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = `${encode({ alg: "HS256", typ: "JWT" })}.${encode(payload)}`;
  const signature = createHmac("sha256", secret).update(unsigned).digest("base64url");
  return `${unsigned}.${signature}`;
}

/** The API keys and secret a stack serves with, derived as the Supabase CLI derives them. */
export interface ApiKeys {
  jwtSecret: string;
  anonKey: string;
  serviceRoleKey: string;
  publishableKey: string;
  secretKey: string;
}

/** Derives the anon and service_role JWT keys from the secret, payload `{iss, role, exp}` as the CLI does. */
export function deriveApiKeys(jwtSecret: string = LOCAL_JWT_SECRET): ApiKeys {
  const key = (role: string) =>
    signHs256({ iss: "supabase-demo", role, exp: LOCAL_KEY_EXPIRY }, jwtSecret);
  return {
    jwtSecret,
    anonKey: key("anon"),
    serviceRoleKey: key("service_role"),
    publishableKey: LOCAL_PUBLISHABLE_KEY,
    secretKey: LOCAL_SECRET_KEY,
  };
}
