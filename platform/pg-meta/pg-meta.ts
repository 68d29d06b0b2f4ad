import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { PROJECT_ROOT, type StackConfig } from "../config.ts";
import { processService } from "../process/children.ts";
import { waitForPort } from "../process/ports.ts";
import type { ServiceDefinition } from "../process/supervisor.ts";

/** The published server of `@supabase/postgres-meta`, the pg-meta image's entry point. */
const PG_META_SERVER = join(PROJECT_ROOT, "node_modules", "@supabase", "postgres-meta", "dist", "server", "server.js");

/**
 * postgres-meta 0.99.0 from npm, as `supabase start` runs it for Studio: reached only through the
 * gateway at /pg/ with the service_role key. It connects as `postgres` (as the hosted dashboard
 * does), listens on 127.0.0.1 on `ports.pgMeta` and, for its admin app (metrics), on the port after.
 * CRYPTO_KEY only encrypts connection strings a caller passes in a header; the dashboard never
 * does, so a fresh random key per start is enough.
 */
export function pgMetaService(config: StackConfig): ServiceDefinition {
  return processService(config, {
    name: "pg-meta",
    command: process.execPath,
    args: [PG_META_SERVER],
    env: {
      PG_META_HOST: "127.0.0.1",
      PG_META_PORT: String(config.ports.pgMeta),
      PG_META_DB_URL: config.dbUrl,
      CRYPTO_KEY: randomBytes(32).toString("hex"),
      NODE_ENV: "production",
      SENTRY_DSN: "",
    },
    ready: () => waitForPort(config.ports.pgMeta, "postgres-meta"),
  });
}
