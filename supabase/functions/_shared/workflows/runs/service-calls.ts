/**
 * How the workflow runtime calls its SQL lifecycle (admit, finish, claim, heartbeat, the reads):
 * straight over the function instance's own Postgres pool, as the service role, one round trip a
 * call (db/direct-rpc.ts). No supabase-js and no PostgREST hop on the hot path: at hundreds of runs
 * a second those hops cost more CPU than the run itself.
 */
import { callAsService, openServiceDatabase, type DirectDatabase } from "../../db/direct-rpc.ts";
import { requireEnv } from "../../db/env.ts";

/** Calls `public.<fn>` with named arguments and returns its JSON answer. */
export type ServiceCall = (fn: string, args: Record<string, unknown>) => Promise<unknown>;

/** Connections per function instance: a run holds one only while admit or finish runs. */
const POOL_SIZE = 6;

let database: DirectDatabase | undefined;

/** The instance's service-role pool on SUPABASE_DB_URL, opened on first use. */
function serviceDatabase(): DirectDatabase {
  database ??= openServiceDatabase(requireEnv("SUPABASE_DB_URL"), POOL_SIZE);
  return database;
}

/** The default ServiceCall: the instance's pool. */
export const callService: ServiceCall = (fn, args) => callAsService(serviceDatabase(), fn, args);
