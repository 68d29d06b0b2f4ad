/**
 * The api function's direct database path (supabase/functions/_shared/db/direct-rpc.ts and
 * gamification/runner.ts) against the running stack: SQL functions run as the verified caller,
 * settings stay inside the call's transaction, no other role can be taken, and the answers match
 * those of the PostgREST path that tokens the function cannot verify still take.
 */
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { callAsCaller, openDirectDatabase, type DirectDatabase } from "../../supabase/functions/_shared/db/direct-rpc.ts";
import { createClaimsVerifier } from "../../supabase/functions/_shared/auth/jwt-claims.ts";
import { gamificationErrors } from "../../supabase/functions/_shared/gamification/errors.ts";
import { createGamificationHandler } from "../../supabase/functions/_shared/gamification/http.ts";
import type { PostgrestResult } from "../../supabase/functions/_shared/gamification/rpc.ts";
import { createDirectRunner, postgrestRunner } from "../../supabase/functions/_shared/gamification/runner.ts";
import { resolveCaller, type TokenPrincipal } from "../../supabase/functions/_shared/http/caller.ts";
import { env } from "../helpers/env.ts";
import { createCall, createCity, createTechnician, type Technician } from "./factories.ts";

const projectKeys = JSON.stringify({ keys: [{ kty: "oct", k: Buffer.from(env.jwtSecret).toString("base64url"), alg: "HS256" }] });
const base = "http://function.local/api/v1/gamification";

let db: DirectDatabase;
let technician: Technician;

// The fixture functions (test/fixtures/*.sql) and the missing one are not in the generated types,
// which describe the project's schema: these calls name them on purpose, so they go untyped.
const callFixture = callAsCaller as (db: DirectDatabase, claims: JWTPayload, fn: string, args: Record<string, unknown>) => Promise<unknown>;

beforeAll(async () => {
  // The PostgREST path creates supabase-js clients as the edge runtime would; under Node 20 they
  // need a WebSocket implementation for their realtime transport, which Deno has built in.
  globalThis.WebSocket ??= WebSocket as unknown as typeof globalThis.WebSocket;
  // One connection, so the test sees what the next caller on it would see.
  db = openDirectDatabase(env.dbUrl, 1);
  technician = await createTechnician(await createCity());
});

afterAll(async () => {
  await db.sql.end();
});

describe("callAsCaller", () => {
  it("runs the function as the token's role and user, converting each named argument to its declared type", async () => {
    const result = await callFixture(db, { sub: technician.id, role: "authenticated" }, "test_caller_context", {
      p_texto: "olá", p_numero: 42, p_id: technician.id, p_doc: { a: [1, 2] }, p_ignorado: "not an argument",
    });
    expect(result).toEqual({
      current_user: "authenticated", uid: technician.id, role: "authenticated", statement_timeout: "8s",
      texto: "olá", numero: 42, numero_tipo: "integer", id: technician.id, doc: { a: [1, 2] }, padrao: "padrão",
    });
  });

  it("leaves no role or claims behind on the connection for the next caller", async () => {
    await callFixture(db, { role: "service_role" }, "test_caller_context", { p_texto: "x", p_numero: 1, p_id: technician.id, p_doc: {} });
    const [after] = await db.sql<{ who: string; claims: string | null }[]>`select current_user as who, nullif(current_setting('request.jwt.claims', true), '') as claims`;
    expect(after).toEqual({ who: "postgres", claims: null });
  });

  it("rolls a failed call back in its own round trip and leaves the connection clean for the next caller", async () => {
    await expect(callFixture(db, { sub: technician.id, role: "authenticated" }, "test_caller_context", {
      p_texto: "x", p_numero: "not a number", p_id: technician.id, p_doc: {},
    })).rejects.toMatchObject({ code: "22P02" });
    // Had the aborted transaction been left open, this statement would fail with 25P02.
    const [after] = await db.sql<{ who: string; claims: string | null }[]>`
      select current_user as who, nullif(current_setting('request.jwt.claims', true), '') as claims`;
    expect(after).toEqual({ who: "postgres", claims: null });
    const result = await callFixture(db, { sub: technician.id, role: "authenticated" }, "test_caller_context", {
      p_texto: "y", p_numero: 2, p_id: technician.id, p_doc: {},
    });
    expect(result).toMatchObject({ current_user: "authenticated", uid: technician.id, numero: 2 });
  });

  it("refuses to take a role other than anon, authenticated or service_role", async () => {
    await expect(callFixture(db, { role: "postgres" }, "test_caller_context", {})).rejects.toThrow(/refusing to take role/);
    await expect(callFixture(db, { role: "supabase_admin" }, "test_caller_context", {})).rejects.toThrow(/refusing to take role/);
  });

  it("fails, without running anything, for a function that does not exist", async () => {
    await expect(callFixture(db, { role: "authenticated" }, "no_such_function", {})).rejects.toThrow();
  });
});

describe("the gamification handler over the direct path", () => {
  const verify = createClaimsVerifier(projectKeys);
  const direct = createDirectRunner(() => db);
  const directFixture = direct as (caller: TokenPrincipal) => (fn: string, args: Record<string, unknown>) => PromiseLike<PostgrestResult>;

  /** The caller a request with `token` resolves to, verified with the project's keys. */
  async function callerWith(token: string): Promise<TokenPrincipal> {
    const caller = await resolveCaller(new Request(base, { headers: { Authorization: `Bearer ${token}` } }), { errors: gamificationErrors, verify });
    if (caller.kind === "apiKey" || caller.authorization === null) throw new Error("the token was not read");
    return caller;
  }

  it("answers a role without EXECUTE as PostgREST does: 401 for anon, 403 for others", async () => {
    const anon = await directFixture(await callerWith(env.anonKey))("test_members_only", {});
    expect([anon.status, anon.error?.code]).toEqual([401, "42501"]);
    const service = await directFixture(await callerWith(env.serviceRoleKey))("test_members_only", {});
    expect([service.status, service.error?.code]).toEqual([403, "42501"]);
    const member = await directFixture(await callerWith(technician.accessToken))("test_members_only", {});
    expect([member.status, member.data]).toEqual([200, "ok"]);
  });

  it("answers like the PostgREST path for the same request", async () => {
    const viaPostgrest = createGamificationHandler({ runnerFor: postgrestRunner, verify });
    const viaDatabase = createGamificationHandler({ runnerFor: direct, verify });
    const chamado = await createCall(technician);
    const scored = await viaDatabase(new Request(`${base}/points`, {
      method: "POST",
      headers: { Authorization: `Bearer ${technician.accessToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({ usuario_id: technician.id, acao: "chamado_concluido", chamado_id: chamado }),
    }));
    expect(scored.status).toBe(200);

    const read = (handler: typeof viaDatabase) =>
      handler(new Request(`${base}/points/history?periodo=30d`, { headers: { Authorization: `Bearer ${technician.accessToken}` } }));
    const [fromDatabase, fromPostgrest] = await Promise.all([read(viaDatabase), read(viaPostgrest)]);
    const [a, b] = [await fromDatabase.json(), await fromPostgrest.json()];
    expect(fromDatabase.status).toBe(200);
    expect(fromPostgrest.status).toBe(200);
    // Everything but the clock readings (the period's bounds and the envelope's timestamp).
    const timeless = (body: { data: { periodo: unknown } }) => ({ ...body, timestamp: null, data: { ...body.data, periodo: null } });
    expect(timeless(a)).toEqual(timeless(b));
    expect(a.data.historico).toHaveLength(1);
  });

  it("sends tokens it holds no key for through PostgREST, which judges them", async () => {
    const { publicKey, privateKey } = await generateKeyPair("ES256");
    const keys = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: "published", alg: "ES256" }] });
    const handler = createGamificationHandler({ runnerFor: createDirectRunner(() => db), verify: createClaimsVerifier(keys) });
    const stranger = await new SignJWT({ role: "authenticated", sub: technician.id }).setProtectedHeader({ alg: "ES256", kid: "published" }).setExpirationTime("1h").sign(privateKey);
    // The function verifies this one itself (its kid is published), and it is valid.
    const own = await handler(new Request(`${base}/badges/user/${technician.id}`, { headers: { Authorization: `Bearer ${stranger}` } }));
    expect(own.status).toBe(200);
    // The project's HS256 session token is not in that key set: PostgREST verifies it and serves it.
    const legacy = await handler(new Request(`${base}/badges/user/${technician.id}`, { headers: { Authorization: `Bearer ${technician.accessToken}` } }));
    expect(legacy.status).toBe(200);
    // An ES256 token under an unknown kid goes to PostgREST too, which refuses it.
    const unknown = await new SignJWT({ role: "authenticated", sub: technician.id }).setProtectedHeader({ alg: "ES256", kid: "elsewhere" }).setExpirationTime("1h").sign(privateKey);
    const refused = await handler(new Request(`${base}/badges/user/${technician.id}`, { headers: { Authorization: `Bearer ${unknown}` } }));
    expect([refused.status, (await refused.json()).error.codigo]).toEqual([401, "NAO_AUTENTICADO"]);
  });
});
