/**
 * Calls a `public` SQL function over the function's own Postgres connection (SUPABASE_DB_URL)
 * exactly as PostgREST would for a verified token: in one transaction, as the token's role, with
 * its claims in `request.jwt.claims` (what auth.uid() and auth.role() read) and PostgREST's
 * statement timeout for API roles. It saves the round trip through the gateway and PostgREST on
 * hot paths; the caller must have verified the claims (see jwt-claims.ts).
 */
import postgres, { type Sql } from "postgres";
import type { JWTPayload } from "jose";
import { createLogger } from "../http/logger.ts";
import { isApiRole } from "../auth/jwt-claims.ts";
import { readEnv } from "../config/env.ts";
import type { RpcArgs, RpcName, RpcResult } from "./rpc.ts";

const databaseLog = createLogger("db");

/** Supabase's statement timeout for the API roles (`authenticated` and `anon` are 8 s). */
const STATEMENT_TIMEOUT = "8s";

/** Named arguments of a SQL function with their declared types, read from the catalog once. */
type Signature = { name: string; type: string }[];

/** A pool of connections to the project database, for one function instance. */
export interface DirectDatabase {
  sql: Sql;
  signatures: Map<string, Promise<Signature>>;
}

/**
 * Whether `error` is the uncaught TypeError postgres.js 3.4.9 throws from a setImmediate callback
 * when a connection closes while a small write is still queued: `nextWrite` then calls `write` on
 * the socket it has already set to null (porsager/postgres #1154, #1208). The query that was
 * waiting has been rejected with CONNECTION_CLOSED by then, so the error carries no news; uncaught,
 * it would end the whole function instance (every request in flight on it).
 */
export function isClosedConnectionWrite(error: unknown): boolean {
  return error instanceof TypeError && error.message === "Cannot read properties of null (reading 'write')" && /\bnextWrite\b/.test(error.stack ?? "");
}

/**
 * Whether `error` is postgres.js reporting a lost connection (CONNECTION_CLOSED and its kin, a write
 * to a socket the server closed: EPIPE, ECONNRESET; or the server's 57P01 "terminating connection
 * due to administrator command"). When a connection is
 * terminated, postgres.js 3.4.9 also rejects promises of its own that nobody awaits (besides
 * rejecting the caller's query, which the caller handles), and an unhandled rejection ends the
 * instance, as the uncaught write above does.
 */
export function isLostConnectionRejection(error: unknown): boolean {
  const code = String((error as { code?: unknown } | null)?.code);
  const stack = (error as Error | null)?.stack ?? "";
  if (["CONNECTION_CLOSED", "CONNECTION_DESTROYED", "CONNECTION_ENDED", "57P01", "57P02"].includes(code)) return /postgres[\\/](src|cjs|cf)[\\/]/.test(stack);
  // A reset socket is reported from Deno's node:net internals, with no postgres.js frame; in the
  // functions that open this pool, postgres.js is the only user of node:net sockets.
  return (code === "EPIPE" || code === "ECONNRESET") && /postgres[\\/](src|cjs|cf)[\\/]|ext:deno_node\/internal\/stream_base_commons/.test(stack);
}

/** The runtime's global error events (Deno, browsers), where uncaught errors and unhandled rejections are reported. */
interface ErrorEventTarget {
  addEventListener(type: "error", listener: (event: { error: unknown; preventDefault(): void }) => void): void;
  addEventListener(type: "unhandledrejection", listener: (event: { reason: unknown; preventDefault(): void }) => void): void;
}

let closedWriteGuarded = false;

/**
 * Keeps postgres.js's connection-loss faults above from ending the instance: global `error` and
 * `unhandledrejection` listeners cancel the default (ending the isolate) for exactly those errors,
 * and log them; every other uncaught error or rejection is left alone. Installed once, where the
 * runtime dispatches them as events (Deno).
 */
export function guardClosedConnectionWrites(log: (error: unknown) => void): void {
  const target = globalThis as unknown as Partial<ErrorEventTarget> & { Deno?: unknown };
  if (closedWriteGuarded || typeof target.addEventListener !== "function" || target.Deno === undefined) return;
  closedWriteGuarded = true;
  target.addEventListener("error", (event: { error: unknown; preventDefault(): void }) => {
    if (!isClosedConnectionWrite(event.error)) return;
    event.preventDefault();
    log(event.error);
  });
  target.addEventListener("unhandledrejection", (event: { reason: unknown; preventDefault(): void }) => {
    if (!isLostConnectionRejection(event.reason)) return;
    event.preventDefault();
    log(event.reason);
  });
}

/**
 * Opens (lazily) a small pool on `url`. Statements are prepared once per connection (the call
 * text is the same for every request to a route), which saves the function about 0.3 ms of CPU
 * a request; SUPABASE_DB_URL is a direct session connection, where that is safe.
 */
export function openDirectDatabase(url: string, maxConnections = 4): DirectDatabase {
  guardClosedConnectionWrites((error) => databaseLog.warn("closed_connection_write", { error }));
  return {
    sql: postgres(url, { max: maxConnections, prepare: true, idle_timeout: 60, connect_timeout: 10, onnotice: () => {}, connection: { application_name: "orbita-edge-function" } }),
    signatures: new Map(),
  };
}

let projectPool: DirectDatabase | null | undefined;

/**
 * The function instance's one pool on SUPABASE_DB_URL, opened on first use and shared by every
 * caller in the instance (service-role calls and verified callers alike); null when the variable
 * is unset, so callers go through PostgREST instead.
 */
export function projectDatabase(): DirectDatabase | null {
  if (projectPool === undefined) {
    const url = readEnv("SUPABASE_DB_URL");
    projectPool = url ? openDirectDatabase(url) : null;
  }
  return projectPool;
}

/**
 * The one row a `select fn(…)` always yields. postgres.js can settle a query with no rows when its
 * connection is terminated while the answer is on its way (seen under pg_terminate_backend); that
 * is a lost connection, reported with postgres.js's own code so callers treat it as one, rather
 * than an answer of `undefined` (or, for a signature, an empty one remembered for good).
 */
function onlyRow<Row>(rows: readonly Row[]): Row {
  if (rows.length === 1) return rows[0];
  throw Object.assign(new Error(`the database connection was lost before the answer arrived (${rows.length} rows)`), { code: "CONNECTION_CLOSED" });
}

/** The named arguments of `public.<fn>` in order; fails when the function is missing or overloaded. */
function signatureOf(db: DirectDatabase, fn: string): Promise<Signature> {
  let signature = db.signatures.get(fn);
  if (!signature) {
    // An aggregate without GROUP BY: exactly one row, even for a function with no arguments, so a
    // missing row can only mean a lost answer, never an empty signature to remember.
    signature = db.sql<{ arguments: Signature }[]>`
      select coalesce(json_agg(json_build_object('name', a.name, 'type', format_type(a.type, null)) order by a.position), '[]'::json) as arguments
      from pg_proc p
      cross join lateral unnest(p.proargnames[1:p.pronargs], p.proargtypes::oid[]) with ordinality as a (name, type, position)
      where p.oid = to_regproc(${`public.${fn}`})`.then((rows) => onlyRow(rows).arguments);
    // A failed lookup is not remembered, so the next call tries again.
    signature.catch(() => db.signatures.delete(fn));
    db.signatures.set(fn, signature);
  }
  return signature;
}

/** Quotes an identifier read from the catalog (argument names), as format('%I') would. */
function identifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The statement that calls `public.<fn>` with the named arguments `args` holds, and its parameters. */
async function callStatement(db: DirectDatabase, fn: string, args: object): Promise<{ call: string; parameters: string[] }> {
  const signature = (await signatureOf(db, fn)).filter((argument) => argument.name in args);
  const named = signature.map((argument) => `${identifier(argument.name)} => a.${identifier(argument.name)}`).join(", ");
  const columns = signature.map((argument) => `${identifier(argument.name)} ${argument.type}`).join(", ");
  return signature.length > 0
    ? { call: `select public.${identifier(fn)}(${named}) as result from json_to_record($1::text::json) as a (${columns})`, parameters: [JSON.stringify(args)] }
    : { call: `select public.${identifier(fn)}() as result`, parameters: [] };
}

/**
 * Opens a pool whose sessions are the service role from their start (the `role` setting in the
 * connection's startup message), for server-side code that calls the service-role-only SQL
 * functions on every request (the workflow runs' lifecycle): `callAsService` then needs no
 * transaction of its own, one round trip a call. A statement stops after `statementTimeoutMs`
 * (none of the lifecycle calls comes near it; a stuck lock does not hold a request for ever).
 */
export function openServiceDatabase(url: string, maxConnections = 4, statementTimeoutMs = 60_000): DirectDatabase {
  guardClosedConnectionWrites((error) => databaseLog.warn("closed_connection_write", { error }));
  return {
    sql: postgres(url, {
      max: maxConnections, prepare: true, idle_timeout: 60, connect_timeout: 10, onnotice: () => {},
      connection: { application_name: "orbita-edge-function", role: "service_role", statement_timeout: statementTimeoutMs },
    }),
    signatures: new Map(),
  };
}

/**
 * Runs `public.<fn>(args)` on a pool from openServiceDatabase, in a transaction of its own (the
 * statement's), and returns its result. Arguments are matched by name as in callAsCaller.
 */
export async function callAsService<Fn extends RpcName>(db: DirectDatabase, fn: Fn, args: RpcArgs<Fn>): Promise<RpcResult<Fn>> {
  const { call, parameters } = await callStatement(db, fn, args);
  const rows = await db.sql.unsafe<{ result: RpcResult<Fn> }[]>(call, parameters, { prepare: true });
  return onlyRow(rows).result;
}

/**
 * Runs `public.<fn>(args)` as the caller and returns its result. Arguments are matched by name
 * and converted to the declared types by Postgres (json_to_record), as PostgREST does; names the
 * function does not declare are ignored and missing ones take their defaults.
 */
export async function callAsCaller<Fn extends RpcName>(db: DirectDatabase, claims: JWTPayload, fn: Fn, args: RpcArgs<Fn>): Promise<RpcResult<Fn>> {
  const role = claims.role;
  if (!isApiRole(role)) throw new Error(`refusing to take role ${String(role)}`);
  const { call, parameters } = await callStatement(db, fn, args);

  // Both statements are pipelined: one round trip, still executed in order inside the transaction.
  const [, rows] = await db.sql.begin((tx) => [
    tx`select set_config('role', ${role}, true), set_config('request.jwt.claims', ${JSON.stringify(claims)}, true),
      set_config('statement_timeout', ${STATEMENT_TIMEOUT}, true)`,
    tx.unsafe<{ result: RpcResult<Fn> }[]>(call, parameters, { prepare: true }),
  ]);
  return onlyRow(rows).result;
}
