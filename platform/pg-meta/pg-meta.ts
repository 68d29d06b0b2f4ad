import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { PROJECT_ROOT, type StackConfig } from "../config/stack-config.ts";
import { GATEWAY_CREDENTIAL_VARIABLE, readGatewayCredential } from "../gateway/internal-credential.ts";
import { processService } from "../process/children.ts";
import { waitForPort } from "../process/ports.ts";
import type { ServiceDefinition } from "../process/supervisor.ts";

/** The published server of `@supabase/postgres-meta`, the pg-meta image's entry point. */
const PG_META_SERVER = join(PROJECT_ROOT, "node_modules", "@supabase", "postgres-meta", "dist", "server", "server.js");

/**
 * postgres-meta 0.99.0 from npm, as `supabase start` runs it for Studio: reached only through the
 * gateway at /pg/ with the service_role key. It connects as `postgres` (as the hosted dashboard
 * does), listens on 127.0.0.1 on `ports.pgMeta` and, for its admin app (metrics), on the port after.
 * Both answer only requests carrying the gateway's credential (require-credential.ts, loaded first
 * with tsx's loader), since anything on the machine can open a loopback port.
 * CRYPTO_KEY only encrypts connection strings a caller passes in a header; the dashboard never
 * does, so a fresh random key per start is enough.
 */
export function pgMetaService(config: StackConfig): ServiceDefinition {
  return processService(config, {
    name: "pg-meta",
    command: process.execPath,
    args: [
      "--import", join(PROJECT_ROOT, "node_modules", "tsx", "dist", "loader.mjs"),
      "--import", join(PROJECT_ROOT, "platform", "pg-meta", "require-credential.ts"),
      PG_META_SERVER,
    ],
    env: {
      PG_META_HOST: "127.0.0.1",
      PG_META_PORT: String(config.ports.pgMeta),
      PG_META_DB_URL: config.dbUrl,
      CRYPTO_KEY: randomBytes(32).toString("hex"),
      [GATEWAY_CREDENTIAL_VARIABLE]: readGatewayCredential(config),
      NODE_ENV: "production",
      SENTRY_DSN: "",
    },
    // pg-meta loads slowly on a busy machine (its server, then tsx for the credential check).
    ready: () => waitForPort(config.ports.pgMeta, "postgres-meta", 60_000),
  });
}
