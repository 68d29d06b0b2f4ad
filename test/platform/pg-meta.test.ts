/**
 * postgres-meta (the published npm package) behind the gateway at /pg/, as `supabase start` runs
 * it for Studio: only the service_role key gets through, and it describes the project's schema.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../platform/config/stack-config.ts";
import { signHs256 } from "../../platform/keys/api-keys.ts";
import { env } from "../helpers/env.ts";

const pg = `${env.url}/pg`;
const asServiceRole = { apikey: env.secretKey };

describe("pg-meta at /pg/", () => {
  it("refuses a request without a key (401) and with any key but the service role's (403)", async () => {
    const missing = await fetch(`${pg}/tables`);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ message: "No API key found in request" });
    for (const headers of <Record<string, string>[]>[{ apikey: env.publishableKey }, { apikey: env.anonKey }, { authorization: `Bearer ${env.anonKey}` }, { apikey: "not-a-key" }]) {
      const refused = await fetch(`${pg}/tables`, { headers });
      expect(refused.status, JSON.stringify(headers)).toBe(403);
      expect(await refused.json()).toEqual({ message: "You cannot consume this service" });
    }
    // A forged service_role token (wrong secret) is no service role.
    const forged = await signHs256({ role: "service_role", exp: Math.floor(Date.now() / 1000) + 60 }, "a-different-secret-that-is-at-least-32-chars");
    expect((await fetch(`${pg}/tables`, { headers: { authorization: `Bearer ${forged}` } })).status).toBe(403);
    // Nothing was run for the refused callers: /query is refused the same way.
    const query = await fetch(`${pg}/query`, { method: "POST", headers: { apikey: env.anonKey, "content-type": "application/json" }, body: JSON.stringify({ query: "select 1" }) });
    expect(query.status).toBe(403);
  });

  it("is reachable only through the gateway: its own port refuses a request without the gateway's credential", async () => {
    const own = `http://127.0.0.1:${loadConfig("test").ports.pgMeta}`;
    const body = JSON.stringify({ query: "select current_user" });
    // The repro of issue 29: SQL as postgres on pg-meta's port, with no key at all; and a made-up credential.
    for (const headers of <Record<string, string>[]>[{}, { "x-orbita-gateway-credential": "guess" }, { apikey: env.secretKey, authorization: `Bearer ${env.serviceRoleKey}` }]) {
      const refused = await fetch(`${own}/query`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body });
      expect(refused.status, JSON.stringify(headers)).toBe(401);
      expect(await refused.json()).toEqual({ error: "Unauthorized: postgres-meta answers only the API gateway; call /pg/ on the gateway with the service_role key" });
    }
    expect((await fetch(`${own}/tables`)).status).toBe(401);
    // Its metrics app, on the next port, the same.
    expect((await fetch(`http://127.0.0.1:${loadConfig("test").ports.pgMeta + 1}/metrics`)).status).toBe(401);
    // Through the gateway with the service_role key, the same query runs; a credential the client
    // sends is replaced by the gateway's own, so a guess changes nothing either way.
    const through = await fetch(`${pg}/query`, { method: "POST", headers: { ...asServiceRole, "x-orbita-gateway-credential": "guess", "content-type": "application/json" }, body });
    expect(through.status).toBe(200);
    expect(await through.json()).toEqual([{ current_user: "postgres" }]);
  });

  it("lists the project's tables with columns and primary keys to the secret key and the service_role JWT", async () => {
    for (const headers of <Record<string, string>[]>[asServiceRole, { apikey: env.serviceRoleKey }, { authorization: `Bearer ${env.serviceRoleKey}` }]) {
      const response = await fetch(`${pg}/tables?included_schemas=public&include_columns=true`, { headers });
      expect(response.status).toBe(200);
      const tables = (await response.json()) as { schema: string; name: string; rls_enabled: boolean; primary_keys: { name: string }[]; columns: { name: string }[] }[];
      const userRoles = tables.find((table) => table.name === "user_roles");
      expect(userRoles).toMatchObject({ schema: "public", rls_enabled: true });
      expect(userRoles?.columns.map((column) => column.name)).toEqual(expect.arrayContaining(["user_id", "role"]));
      expect(tables.every((table) => table.schema === "public")).toBe(true);
    }
  });

  it("lists schemas, the RLS policies of a table and the project's functions", async () => {
    const schemas = (await (await fetch(`${pg}/schemas`, { headers: asServiceRole })).json()) as { name: string }[];
    expect(schemas.map((schema) => schema.name)).toEqual(expect.arrayContaining(["public", "gamificacao", "auth", "storage"]));
    const policies = (await (await fetch(`${pg}/policies?included_schemas=public`, { headers: asServiceRole })).json()) as { table: string; name: string; command: string }[];
    expect(policies.filter((policy) => policy.table === "user_roles")).toEqual(expect.arrayContaining([
      expect.objectContaining({ name: "Users can read their own roles", command: "SELECT" }),
    ]));
    const functions = (await (await fetch(`${pg}/functions?included_schemas=public`, { headers: asServiceRole })).json()) as { name: string }[];
    expect(functions.map((fn) => fn.name)).toEqual(expect.arrayContaining(["activate_deployment", "deploy_workflow", "redeliver_webhook"]));
  });

  it("runs SQL through /query as postgres, and answers a bad statement with 400 and Postgres's error", async () => {
    const response = await fetch(`${pg}/query`, { method: "POST", headers: { ...asServiceRole, "content-type": "application/json" }, body: JSON.stringify({ query: "select current_user as role, 40 + 2 as answer" }) });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([{ role: "postgres", answer: 42 }]);
    const bad = await fetch(`${pg}/query`, { method: "POST", headers: { ...asServiceRole, "content-type": "application/json" }, body: JSON.stringify({ query: "select nope from nowhere" }) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: "42P01", message: 'relation "nowhere" does not exist' });
  });
});
