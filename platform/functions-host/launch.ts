import { existsSync } from "node:fs";
import { join } from "node:path";
import { stackJwks, stackKeys } from "../keys/signing-keys.ts";
import { localOutboundAllowedHosts, localOutboundDeniedAddresses, PROJECT_ROOT, readFunctionsEnvFile, type StackConfig } from "../config/stack-config.ts";
import { processService } from "../process/children.ts";
import { waitForPort } from "../process/ports.ts";
import type { ServiceDefinition } from "../process/supervisor.ts";
import { readFunctionSettings } from "./function-config.ts";
import { FUNCTIONS_EGRESS_ADDRESS, HOST_CONFIG_VARIABLE, type FunctionRoot, type HostConfig } from "./host-config.ts";

/** Supabase's documented wall-clock limit on the free plan. */
const DEFAULT_WALL_CLOCK_MS = 150_000;
/** Idle workers are stopped after this long and boot again on demand. */
const DEFAULT_IDLE_MS = 15 * 60_000;

export const FUNCTIONS_DIR = join(PROJECT_ROOT, "supabase", "functions");
export const FIXTURE_FUNCTIONS_DIR = join(PROJECT_ROOT, "test", "fixtures", "functions");
export const IMPORT_MAP = join(FUNCTIONS_DIR, "import_map.json");
/** Function settings only the test stack has (e.g. POSTAL_LOOKUP_URL of the fake lookup service). */
const FIXTURE_ENV_FILE = join(PROJECT_ROOT, "test", "fixtures", "functions.env");

/**
 * test/fixtures/functions.env as the test stack of `slot` sees it: `{{port N}}` in a value becomes
 * N + slot × 100, the shift the stack's own ports get, so the stand-ins of two test runs side by
 * side (ORBITA_TEST_SLOT) listen on different ports. Tests read the same values to know where to
 * listen.
 */
export function fixtureFunctionEnvironment(slot: number): Record<string, string> {
  const env = readFunctionsEnvFile(FIXTURE_ENV_FILE);
  return Object.fromEntries(Object.entries(env).map(([name, value]) => [name, value.replace(/\{\{port (\d+)\}\}/g, (_, port: string) => String(Number(port) + slot * 100))]));
}


/**
 * The environment a function sees, as under `supabase functions serve`: the stack's URL, keys and
 * database, then supabase/functions/.env (and test/fixtures/functions.env in the test stack). Locally RESEND_BASE_URL points at the mail catcher, so
 * the real `resend` client delivers there (a .env value wins, to send for real on purpose), and
 * OUTBOUND_ALLOWED_HOSTS lets workflows call loopback addresses on ports other than the stack's own
 * (a .env value wins here too). OUTBOUND_DENIED_ADDRESSES, the stack's own ports, and SUPABASE_*
 * names stay the platform's: the first so that no .env can open the stack's services to workflows,
 * the others as the CLI does not let an env file override them.
 */
export function functionEnvironment(config: StackConfig): Record<string, string> {
  // The test stack adds test-only settings, e.g. the address of a fake outside service.
  const files = config.profile === "test" ? [readFunctionsEnvFile(), fixtureFunctionEnvironment(config.slot)] : [readFunctionsEnvFile()];
  const user = Object.fromEntries(files.flatMap((env) => Object.entries(env)).filter(([name]) => !name.startsWith("SUPABASE_")));
  return {
    RESEND_BASE_URL: `http://127.0.0.1:${config.ports.mail}`,
    OUTBOUND_ALLOWED_HOSTS: localOutboundAllowedHosts(config.ports),
    ...user,
    OUTBOUND_DENIED_ADDRESSES: localOutboundDeniedAddresses(config.ports),
    SUPABASE_URL: config.apiUrl,
    SUPABASE_ANON_KEY: config.anonKey,
    SUPABASE_SERVICE_ROLE_KEY: config.serviceRoleKey,
    SUPABASE_DB_URL: config.dbUrl,
    SUPABASE_PUBLISHABLE_KEYS: JSON.stringify({ default: config.publishableKey }),
    SUPABASE_SECRET_KEYS: JSON.stringify({ default: config.secretKey }),
    SUPABASE_JWKS: stackJwks(stackKeys(config)),
  };
}

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer (milliseconds), got "${raw}"`);
  return value;
}

/** Everything the Deno host needs; test fixtures are served only by the test profile. */
export function hostConfig(config: StackConfig): HostConfig {
  const roots: FunctionRoot[] = [{ dir: FUNCTIONS_DIR, settings: readFunctionSettings(join(PROJECT_ROOT, "supabase", "config.toml")) }];
  if (config.profile === "test") {
    roots.push({ dir: FIXTURE_FUNCTIONS_DIR, settings: readFunctionSettings(join(FIXTURE_FUNCTIONS_DIR, "config.toml"), { fixtures: true }) });
  }
  const wallClockMs = positiveInteger("ORBITA_FUNCTIONS_WALL_CLOCK_MS", DEFAULT_WALL_CLOCK_MS);
  return {
    port: config.ports.functions,
    jwtSecret: config.jwtSecret,
    publicKeys: stackKeys(config).published,
    roots,
    wallClockMs,
    idleMs: positiveInteger("ORBITA_FUNCTIONS_IDLE_MS", DEFAULT_IDLE_MS),
    reload: config.profile === "dev",
    // Functions learn the host's wall clock, as hosted projects set it for their plan, so the
    // workflow service fits its run budgets inside it (docs/workflow-limits.md).
    env: { ...functionEnvironment(config), FUNCTIONS_WALL_CLOCK_MS: String(wallClockMs) },
    gatewayOrigin: new URL(config.apiUrl).origin,
    egressAddress: FUNCTIONS_EGRESS_ADDRESS,
  };
}

/** The Deno binary the `deno` npm package installs. */
export function denoBinary(): string {
  const binary = join(PROJECT_ROOT, "node_modules", "deno", "deno");
  return existsSync(binary) ? binary : join(PROJECT_ROOT, "node_modules", ".bin", "deno");
}

/**
 * `deno run` arguments for a module that serves function code: the host's permissions and import
 * map, and any `flags` of its own.
 */
export function denoRunArguments(entrypoint: string, flags: string[] = []): string[] {
  const args = ["run", "--allow-all", "--no-prompt", "--no-lock", "--node-modules-dir=manual", ...flags];
  if (existsSync(IMPORT_MAP)) args.push(`--import-map=${IMPORT_MAP}`);
  args.push(entrypoint);
  return args;
}

/**
 * The edge-functions host on `ports.functions`, as a supervised service (ready once it listens). Bare
 * imports resolve through supabase/functions/import_map.json, the same map `supabase functions
 * serve` and deploy use; its `npm:` entries are served from node_modules, so nothing is downloaded.
 */
export function functionsHostService(config: StackConfig): ServiceDefinition {
  return processService(config, {
    name: "functions",
    command: denoBinary(),
    // The host watches each request's signal for a client that goes away; Deno's legacy behaviour
    // also aborts it after every successful response, building a DOMException with its stack each
    // time (9% of the host's time under load).
    args: denoRunArguments(join(PROJECT_ROOT, "platform", "functions-host", "main.ts"), ["--unstable-no-legacy-abort"]),
    env: { [HOST_CONFIG_VARIABLE]: JSON.stringify(hostConfig(config)), DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    ready: () => waitForPort(config.ports.functions, "The functions host", 60_000),
  });
}
