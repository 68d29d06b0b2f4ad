import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { deriveApiKeys, type ApiKeys } from "../keys/api-keys.ts";

/** The project root (the folder holding package.json and supabase/). */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * A stack profile. `dev` is what `npm start` runs on the Supabase CLI's ports; `test` is the
 * isolated stack `npm test` brings up on its own ports and data folder, so a developer's running
 * stack is never touched. `bench` is the stack `npm run bench` fills with generated data.
 */
export type ProfileName = "dev" | "test" | "bench";

/** Ports of one stack. Only the gateway, Postgres, mail and the dashboard are public; the rest are internal hops. */
export interface Ports {
  gateway: number;
  db: number;
  mail: number;
  postgrest: number;
  postgrestAdmin: number;
  functions: number;
  /** The dashboard (Studio's place under `supabase start`). */
  studio: number;
  /** postgres-meta, reached through the gateway at /pg/; it also listens on the next port (its admin app). */
  pgMeta: number;
  /** The node half of the gateway (auth, storage and the token verifier), behind the HAProxy front on `gateway`. */
  gatewayInner: number;
}

const PORTS: Record<ProfileName, Ports> = {
  dev: { gateway: 54321, db: 54322, mail: 54324, postgrest: 54330, postgrestAdmin: 54332, functions: 54331, studio: 54323, pgMeta: 54336, gatewayInner: 54346 },
  test: { gateway: 55321, db: 55322, mail: 55324, postgrest: 55330, postgrestAdmin: 55332, functions: 55331, studio: 55323, pgMeta: 55336, gatewayInner: 55346 },
  bench: { gateway: 57321, db: 57322, mail: 57324, postgrest: 57330, postgrestAdmin: 57332, functions: 57331, studio: 57323, pgMeta: 57336, gatewayInner: 57346 },
};

/** Everything a platform process needs to know about the stack it belongs to. */
export interface StackConfig extends ApiKeys {
  profile: ProfileName;
  /** Port and folder shift of this stack (0 for the usual one). */
  slot: number;
  ports: Ports;
  /** Ignored folder holding this profile's cluster, logs, stored files and caught mail. */
  runtimeDir: string;
  pgDataDir: string;
  logDir: string;
  storageDir: string;
  mailDir: string;
  stateFile: string;
  /** Public URL of the gateway, as clients and `SUPABASE_URL` see it. */
  apiUrl: string;
  /** Connection string for the `postgres` role, as `supabase status` prints it. */
  dbUrl: string;
  /** Superuser connection string, used only by the platform's own bootstrap. */
  adminDbUrl: string;
  /** Issuer of user access tokens, as the CLI sets it. */
  jwtIssuer: string;
  /**
   * ORBITA_TRUSTED_PROXIES: addresses or CIDR ranges, comma-separated, of proxies in front of the
   * gateway whose X-Forwarded-For it believes (empty: it believes none).
   */
  trustedProxies: string;
}

/** Every port a stack's processes listen on: its Ports, and pg-meta's admin app on the port after pg-meta's. */
export function listeningPorts(ports: Ports): number[] {
  return [...new Set([...Object.values(ports), ports.pgMeta + 1])].sort((a, b) => a - b);
}

/** The loopback ranges the local stacks open to workflows, as allow-list entries take them before a port. */
const LOOPBACK_ENTRIES = ["127.0.0.0/8", "[::1]"];

/** The lowest port the local allow-list opens: below it are the machine's system services (ssh, mail). */
const LOWEST_OPEN_PORT = 1024;

/**
 * What a local stack puts in OUTBOUND_ALLOWED_HOSTS: loopback on the unprivileged ports, in ranges
 * around the stack's own, so workflows can call services on this machine (the tests' stand-ins on
 * the kernel's ephemeral ports, a model server run locally) but not pg-meta, the mail catcher, the
 * dashboard or the gateway's internal hops. Only the ports the stack listens on are cut out: a
 * stand-in's ephemeral port can be any other (the dev, test and bench stacks' ports lie inside the
 * kernel's 32768–60999). Hosted deployments leave the variable empty, and the outbound guard then
 * refuses every non-public address.
 */
export function localOutboundAllowedHosts(ports: Ports): string {
  const ranges: string[] = [];
  let next = LOWEST_OPEN_PORT;
  for (const port of [...listeningPorts(ports), 65536]) {
    if (port > next) ranges.push(port - 1 === next ? String(next) : `${next}-${port - 1}`);
    next = Math.max(next, port + 1);
  }
  return LOOPBACK_ENTRIES.flatMap((host) => ranges.map((range) => `${host}:${range}`)).join(",");
}

/**
 * What a local stack puts in OUTBOUND_DENIED_ADDRESSES: its own ports at every address, refused by
 * the outbound guard whatever OUTBOUND_ALLOWED_HOSTS says (a .env value included), so that opening
 * loopback wholesale never opens the stack itself again.
 */
export function localOutboundDeniedAddresses(ports: Ports): string {
  return listeningPorts(ports).flatMap((port) => [`0.0.0.0/0:${port}`, `[::/0]:${port}`]).join(",");
}

/** The database password every local Supabase stack uses. */
export const LOCAL_DB_PASSWORD = "postgres";

/**
 * Builds the configuration of a profile; `ORBITA_PROFILE` selects it in child processes, and
 * `slot` (from ORBITA_TEST_SLOT by default) shifts a test stack's ports and folder.
 */
export function loadConfig(profile: ProfileName = currentProfile(), slot = testSlot(profile)): StackConfig {
  const ports = Object.fromEntries(Object.entries(PORTS[profile]).map(([name, port]) => [name, port + slot * 100])) as unknown as Ports;
  const runtimeDir = join(PROJECT_ROOT, ".orbita", slot === 0 ? profile : `${profile}-${slot}`);
  const keys = deriveApiKeys(process.env.SUPABASE_JWT_SECRET || undefined);
  const apiUrl = `http://127.0.0.1:${ports.gateway}`;
  return {
    ...keys,
    profile,
    slot,
    ports,
    runtimeDir,
    pgDataDir: join(runtimeDir, "pgdata"),
    logDir: join(runtimeDir, "logs"),
    storageDir: join(runtimeDir, "storage"),
    mailDir: join(runtimeDir, "mail"),
    stateFile: join(runtimeDir, "state.json"),
    apiUrl,
    dbUrl: `postgresql://postgres:${LOCAL_DB_PASSWORD}@127.0.0.1:${ports.db}/postgres`,
    adminDbUrl: `postgresql://supabase_admin:${LOCAL_DB_PASSWORD}@127.0.0.1:${ports.db}/postgres`,
    jwtIssuer: `${apiUrl}/auth/v1`,
    trustedProxies: process.env.ORBITA_TRUSTED_PROXIES ?? "",
  };
}

/**
 * ORBITA_TEST_SLOT=N (0–9) shifts a test or bench stack's ports by N×100 and gives it its own
 * folder, so several test runs (or a bench beside a test run) can proceed side by side on one machine.
 * Test stacks take slots 0–9, a bench's ports are a test stack's slots 20–29, and the tests that
 * need a stack or cluster of their own take 40–89 (test/helpers/own-stack.ts).
 */
function testSlot(profile: ProfileName): number {
  // ORBITA_STACK_SLOT is how the platform tells its own service processes which stack they are in.
  const inherited = process.env.ORBITA_STACK_SLOT;
  if (inherited !== undefined) return Number(inherited);
  if (profile === "dev") return 0;
  const slot = Number(process.env.ORBITA_TEST_SLOT ?? 0);
  if (!Number.isInteger(slot) || slot < 0 || slot > 9) throw new Error("ORBITA_TEST_SLOT must be an integer from 0 to 9");
  return slot;
}

/** The profile this process runs under. */
export function currentProfile(): ProfileName {
  const value = process.env.ORBITA_PROFILE;
  if (value === undefined || value === "dev" || value === "test" || value === "bench") return value ?? "dev";
  throw new Error(`ORBITA_PROFILE must be "dev", "test" or "bench", got "${value}"`);
}

/**
 * Reads an env file of KEY=VALUE lines when it exists: by default `supabase/functions/.env`, which
 * the CLI gives every function.
 */
export function readFunctionsEnvFile(file = join(PROJECT_ROOT, "supabase", "functions", ".env")): Record<string, string> {
  if (!existsSync(file)) return {};
  const env: Record<string, string> = {};
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)\s*$/.exec(line);
    if (match) env[match[1]] = match[2].replace(/^(['"])(.*)\1$/, "$2");
  }
  return env;
}
