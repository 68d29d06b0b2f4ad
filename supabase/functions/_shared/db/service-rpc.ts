/**
 * Calls a `public` SQL function as the service role: how edge functions reach the SQL functions
 * granted to the service role alone (the run lifecycle, the logs API, webhook deliveries). Over
 * the function's own connection (SUPABASE_DB_URL, see direct-rpc.ts) when it has one, which saves
 * the hops through the gateway and PostgREST; otherwise through PostgREST with the service-role
 * client. Either way the SQL function runs as `service_role` in one transaction.
 */
import { callAsCaller, projectDatabase } from "./direct-rpc.ts";
import { postgrestRpc, type Rpc } from "./rpc.ts";
import { createServiceRoleClient } from "./supabase-clients.ts";

/** Runs `public.<fn>(args)` as the service role (name, arguments and result typed, rpc.ts). */
export type ServiceRpc = Rpc;

const SERVICE_CLAIMS = { role: "service_role" };

/** The default ServiceRpc (see the module comment). */
export const serviceRpc: ServiceRpc = async (fn, args) => {
  const database = projectDatabase();
  if (database) return await callAsCaller(database, SERVICE_CLAIMS, fn, args);
  const { data, error } = await postgrestRpc(createServiceRoleClient(), fn, args);
  if (error) throw new Error(`${fn} failed: ${error.code ?? "?"} ${error.message}`);
  return data;
};
