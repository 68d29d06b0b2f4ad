import postgres from "postgres";
import type { StackConfig } from "../config/stack-config.ts";
import type { Identity } from "./identity.ts";

/** Something queries can run on: the pool or an open transaction. */
export type Queryable = postgres.ISql;

/** The service's connection pool. */
export type Database = postgres.Sql;

/**
 * Connects as supabase_storage_admin, the role Storage uses. It owns the storage tables (so its own
 * bookkeeping reads bypass RLS) and is a member of the API roles (so each request can drop to the
 * caller's role with `set local role` and let the project's policies decide).
 */
export function connectDatabase(config: StackConfig): Database {
  return postgres(`postgresql://supabase_storage_admin:postgres@127.0.0.1:${config.ports.db}/postgres`, {
    max: 10,
    idle_timeout: 30,
    connect_timeout: 10,
    onnotice: () => {},
    connection: { application_name: "orbita-storage" },
  });
}

/** What a request tells Postgres about itself, as Storage sets it for policies to read. */
export interface RequestScope {
  identity: Identity;
  method: string;
  path: string;
  headers: Headers;
  /** Storage's name for the operation (e.g. "storage.object.upload"), exposed as `storage.operation`. */
  operation: string;
}

/**
 * Runs `work` in one transaction as the caller: the role claim becomes the current role and the
 * claims, headers, method and path become transaction-local settings, the same GUCs PostgREST and
 * Storage set, so `auth.uid()`, `auth.jwt()` and `current_setting('request.headers')` work in
 * storage policies. `before` runs first with the service's own rights (row locks, lookups that must
 * see rows the caller can not). Everything commits or rolls back together.
 */
export async function asCaller<T>(
  db: Database,
  scope: RequestScope,
  work: (tx: Queryable) => Promise<T>,
  before?: (tx: Queryable) => Promise<void>,
): Promise<T> {
  const { identity } = scope;
  const headers = JSON.stringify(Object.fromEntries([...scope.headers].filter(([name]) => name !== "cookie")));
  const result = await db.begin(async (tx) => {
    if (before) await before(tx);
    await tx`
      select set_config('role', ${identity.role}, true),
             set_config('request.jwt.claims', ${JSON.stringify(identity.claims)}, true),
             set_config('request.jwt.claim.sub', ${identity.sub ?? ""}, true),
             set_config('request.jwt.claim.role', ${identity.role}, true),
             set_config('request.headers', ${headers}, true),
             set_config('request.method', ${scope.method}, true),
             set_config('request.path', ${scope.path}, true),
             set_config('storage.operation', ${scope.operation}, true)`;
    return work(tx);
  });
  return result as T;
}

/** Serialises writers of one object name for the rest of the transaction (even before its row exists). */
export async function lockObjectName(tx: Queryable, bucketId: string, objectName: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtextextended(${`${bucketId}/${objectName}`}, 0))`;
}
