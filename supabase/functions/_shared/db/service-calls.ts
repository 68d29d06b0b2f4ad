/**
 * How the workflow runtime calls its SQL (admit, finish, claim, heartbeat, the reads, a model
 * block's cost): straight over the function instance's own Postgres pool, as the service role, one
 * round trip a call (direct-rpc.ts). No supabase-js and no PostgREST hop on the hot path: at
 * hundreds of runs a second those hops cost more CPU than the run itself. A call that loses its
 * connection (the database restarting, an administrator terminating backends) becomes a 503 with
 * Retry-After instead of the 500 of an unexpected error: the client can simply try again.
 */
import { callAsService, openServiceDatabase, type DirectDatabase } from "./direct-rpc.ts";
import type { Rpc } from "./rpc.ts";
import { requireEnv } from "../config/env.ts";
import { HttpError } from "../http/errors.ts";

/** Calls `public.<fn>` with named arguments and returns its answer (name, arguments and result typed, rpc.ts). */
export type ServiceCall = Rpc;

/** Connections per function instance: a run holds one only while admit or finish runs. */
const POOL_SIZE = 6;

let database: DirectDatabase | undefined;

/** The instance's service-role pool on SUPABASE_DB_URL, opened on first use. */
function serviceDatabase(): DirectDatabase {
  database ??= openServiceDatabase(requireEnv("SUPABASE_DB_URL"), POOL_SIZE);
  return database;
}

/**
 * postgres.js's codes for a lost connection, and Postgres's for a terminated or starting backend
 * and for a connection refused because every slot (or the role's limit) is taken: 53300 is what a
 * burst over max_connections meets on hosted Supabase, and it passes once connections free up.
 */
const CONNECTION_CODES = new Set(["CONNECTION_CLOSED", "CONNECTION_DESTROYED", "CONNECTION_ENDED", "CONNECT_TIMEOUT", "ECONNREFUSED", "ECONNRESET", "EPIPE", "53300", "57P01", "57P02", "57P03"]);

/** Whether `error` means the call lost (or never had) its connection, rather than a fault of the call. */
export function isConnectionError(error: unknown): boolean {
  return CONNECTION_CODES.has(String((error as { code?: unknown })?.code));
}

/**
 * Whether `error` is the 503 a ServiceCall throws for a lost database connection: the call may be
 * sent again, and a run it stopped is not at fault (it is left to its lease, or recorded so).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return error instanceof HttpError && error.status === 503;
}

/** The default ServiceCall: the instance's pool. */
export const callService: ServiceCall = async (fn, args) => {
  try {
    return await callAsService(serviceDatabase(), fn, args);
  } catch (error) {
    if (!isConnectionError(error)) throw error;
    throw new HttpError(503, "DATABASE_UNAVAILABLE", "The database connection was lost; try again", undefined, { "Retry-After": "1" });
  }
};
