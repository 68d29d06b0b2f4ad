import postgres from "postgres";
import { LOCAL_DB_PASSWORD, type StackConfig } from "../config/stack-config.ts";

/** The auth service's connection pool (role supabase_auth_admin, owner of the auth tables). */
export type Sql = postgres.Sql;
/** A pool or a transaction: repositories accept either, so callers choose the transaction scope. */
export type Db = postgres.Sql | postgres.TransactionSql;

/**
 * Postgres prints timestamptz as `2024-05-01 10:00:00.123456+00` in a UTC session; GoTrue's JSON has
 * the same instant as RFC 3339 (`2024-05-01T10:00:00.123456Z`). Keeping the text avoids losing the
 * microseconds a JS Date would drop.
 */
export function timestamptzToRfc3339(value: string): string {
  const match = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d+)?)\+00(?::00)?$/.exec(value);
  return match ? `${match[1]}T${match[2]}Z` : new Date(value).toISOString();
}

/** Opens the pool lazily; nothing connects until the first query. */
export function connectAuthDatabase(config: StackConfig): Sql {
  return postgres(`postgresql://supabase_auth_admin:${LOCAL_DB_PASSWORD}@127.0.0.1:${config.ports.db}/postgres`, {
    max: 10,
    idle_timeout: 30,
    onnotice: () => {},
    connection: { application_name: "orbita-auth", TimeZone: "UTC" },
    types: {
      timestamptz: {
        to: 1184,
        from: [1184],
        serialize: (value: Date | string) => (value instanceof Date ? value.toISOString() : value),
        parse: timestamptzToRfc3339,
      },
    },
  });
}

/**
 * A jsonb parameter. The object itself must be passed: postgres.js learns the parameter's type from
 * the server and JSON-encodes it, so a pre-stringified value would be stored as a JSON string.
 */
export function jsonb(db: Db, value: Record<string, unknown>): postgres.Parameter {
  // Metadata objects come from decoded JSON, so they are always serialisable.
  return db.json(value as unknown as postgres.JSONValue);
}
