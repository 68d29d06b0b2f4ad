import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT, type StackConfig } from "../config/stack-config.ts";
import { dashboardService } from "../dashboard/service.ts";
import { functionsHostService } from "../functions-host/launch.ts";
import { gatewayFrontService } from "../gateway/front.ts";
import { createGatewayCredential } from "../gateway/internal-credential.ts";
import { parseTrustedProxies } from "../gateway/trusted-proxies.ts";
import { applyFixtures, pushMigrations } from "../postgres/migrations.ts";
import { destroyCluster, postgresService, stopCluster } from "../postgres/cluster.ts";
import { postgrestService, waitForPostgrest } from "../postgrest/postgrest.ts";
import { pgMetaService } from "../pg-meta/pg-meta.ts";
import { killGroup, processService } from "../process/children.ts";
import { PlatformError } from "../process/errors.ts";
import { assertPortFree, waitForPort } from "../process/ports.ts";
import { step } from "../process/progress.ts";
import { Supervisor, type ServiceDefinition, type ServiceStatus, type SupervisorLog } from "../process/supervisor.ts";

/** What `npm run status` and `npm stop` read to find a running stack (written on every change). */
export interface StackState {
  profile: string;
  supervisorPid: number;
  startedAt: string;
  services: ServiceStatus[];
}

/** A started, supervised stack; `stop` takes down everything it started, in reverse order. */
export interface RunningStack {
  config: StackConfig;
  supervisor: Supervisor;
  stop(): Promise<void>;
}

/** Options for bringing a stack up. */
export interface StartOptions {
  /** Apply test/fixtures/*.sql after migrations and seed (the test stack only). */
  fixtures?: boolean;
  /** Runs once migrations and seed are in, before fixtures or services. */
  afterMigrations?: () => Promise<void>;
  /** Where the supervisor's lines go besides logs/supervisor.log (the terminal, by default). */
  print?: (line: string) => void;
}

/**
 * After Postgres comes back, PostgREST gets this long to reconnect before it is restarted: its own
 * retries back off up to 32 s, while a fresh PostgREST connects at once.
 */
const POSTGREST_RECONNECT_MS = 500;

/**
 * Brings up Postgres, applies migrations and seed, then PostgREST, postgres-meta, the platform
 * server (the gateway's node half, auth, storage, mail, queue workers), the gateway's public half
 * (HAProxy), the functions host and the dashboard, each supervised: a service that
 * dies is started again (see process/supervisor.ts). Any failure while starting stops whatever
 * was already started, so a half-started stack is never left running.
 */
export async function startStack(config: StackConfig, options: StartOptions = {}): Promise<RunningStack> {
  const running = readState(config);
  if (running && isAlive(running.supervisorPid)) {
    throw new PlatformError(`An Orbita ${config.profile} stack is already running (pid ${running.supervisorPid}).`, "Use it, or run `npm stop` first.");
  }
  const { ports } = config;
  for (const [port, what] of [[ports.gateway, "API gateway"], [ports.gatewayInner, "API gateway (node half)"], [ports.mail, "mail catcher"], [ports.postgrest, "PostgREST"], [ports.postgrestAdmin, "PostgREST admin"], [ports.functions, "functions host"], [ports.pgMeta, "postgres-meta"], [ports.pgMeta + 1, "postgres-meta admin"], [ports.studio, "dashboard"]] as const) {
    await assertPortFree(port, what);
  }
  try {
    parseTrustedProxies(config.trustedProxies, "ORBITA_TRUSTED_PROXIES");
  } catch (error) {
    throw new PlatformError((error as Error).message, "Set ORBITA_TRUSTED_PROXIES to a comma-separated list of addresses or CIDR ranges, or leave it unset.");
  }
  mkdirSync(config.logDir, { recursive: true });
  // A new secret every start: the gateway sends it to pg-meta and its node half, which demand it.
  createGatewayCredential(config);

  const startedAt = new Date().toISOString();
  const supervisor: Supervisor = new Supervisor(supervisorLog(config, options.print), () => writeState(config, startedAt, supervisor.status()));
  const stop = async () => {
    await supervisor.stop();
    rmSync(config.stateFile, { force: true });
  };
  const postgres: ServiceDefinition = {
    ...postgresService(config),
    afterRestart: () => {
      void waitForPostgrest(config, POSTGREST_RECONNECT_MS).catch(() =>
        supervisor.restart("postgrest", `it had not reconnected ${POSTGREST_RECONNECT_MS} ms after Postgres came back`));
    },
  };
  try {
    await step(`Starting Postgres 15 on 127.0.0.1:${ports.db}`, () => supervisor.launch(postgres));
    await step("Applying migrations and seed (supabase db push)", async () => pushMigrations(config));
    if (options.afterMigrations) await options.afterMigrations();
    if (options.fixtures) await step("Applying test fixtures", () => applyFixtures(config));
    await step("Starting PostgREST 12.0.2", () => supervisor.launch(postgrestService(config)));
    await step("Starting postgres-meta 0.99.0 (the gateway's /pg/)", () => supervisor.launch(pgMetaService(config)));
    await step("Starting auth, storage, the mail catcher and queue workers", () => supervisor.launch(platformServerService(config)));
    await step(`Starting the API gateway (HAProxy) on 127.0.0.1:${ports.gateway}`, () => supervisor.launch(gatewayFrontService(config)));
    await step("Starting the edge-functions host (Deno)", () => supervisor.launch(functionsHostService(config)));
    await step(`Starting the dashboard on 127.0.0.1:${ports.studio}`, () => supervisor.launch(dashboardService(config)));
  } catch (error) {
    await stop();
    throw error;
  }
  return { config, supervisor, stop };
}

/**
 * Keeps a started stack up until Ctrl-C (SIGINT) or SIGTERM (`npm stop` sends it), then stops it
 * and resolves. A service that dies meanwhile is restarted by the supervisor, not a reason to stop.
 */
export function runUntilStopped(stack: RunningStack, print: (line: string) => void = (line) => console.log(line)): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false;
    const shutdown = async (reason: string) => {
      if (stopping) return;
      stopping = true;
      print(`\n${reason} Stopping…`);
      await stack.stop();
      print("Stopped.");
      process.off("SIGINT", interrupted);
      process.off("SIGTERM", asked);
      resolve();
    };
    const interrupted = () => void shutdown("Interrupted.");
    const asked = () => void shutdown("Asked to stop.");
    process.on("SIGINT", interrupted);
    process.on("SIGTERM", asked);
  });
}

/**
 * The platform server (platform/server/main.ts) under Node with tsx's loader in-process, so the pid
 * the supervisor watches is the server itself, not a launcher in front of it.
 */
function platformServerService(config: StackConfig): ServiceDefinition {
  return processService(config, {
    name: "platform",
    command: process.execPath,
    args: ["--import", join(PROJECT_ROOT, "node_modules", "tsx", "dist", "loader.mjs"), join(PROJECT_ROOT, "platform", "server", "main.ts")],
    ready: () => Promise.all([waitForPort(config.ports.gatewayInner, "The API gateway's node half"), waitForPort(config.ports.mail, "The mail catcher")]),
  });
}

/** The supervisor's lines: appended to logs/supervisor.log and printed (to the terminal by default). */
function supervisorLog(config: StackConfig, print: (line: string) => void = (line) => console.log(line)): SupervisorLog {
  const file = join(config.logDir, "supervisor.log");
  return (level, line) => {
    appendFileSync(file, `${new Date().toISOString()} ${level} ${line}\n`);
    print(`${level === "error" ? "✗" : "↻"} ${line}`);
  };
}

/** Records the stack for `npm run status` and `npm stop`; replaced whole, so a reader never sees half a file. */
function writeState(config: StackConfig, startedAt: string, services: ServiceStatus[]): void {
  const state: StackState = { profile: config.profile, supervisorPid: process.pid, startedAt, services };
  const temporary = `${config.stateFile}.${process.pid}`;
  writeFileSync(temporary, JSON.stringify(state, null, 2));
  renameSync(temporary, config.stateFile);
}

/** The recorded state of a stack, or null when none was recorded. */
export function readState(config: StackConfig): StackState | null {
  if (!existsSync(config.stateFile)) return null;
  return JSON.parse(readFileSync(config.stateFile, "utf8")) as StackState;
}

/** True when a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops a stack started by another process: asks its supervisor to shut down, and cleans up
 * directly when the supervisor is gone (a crash or a killed terminal).
 */
export async function stopRecordedStack(config: StackConfig): Promise<boolean> {
  const state = readState(config);
  if (state && isAlive(state.supervisorPid)) {
    process.kill(state.supervisorPid, "SIGTERM");
    const deadline = Date.now() + 20_000;
    while (isAlive(state.supervisorPid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // Postgres is not a process group of ours (pg_ctl runs it); pg_ctl stops it below.
  for (const service of state?.services ?? []) if (service.name !== "postgres") killGroup(service.pid ?? undefined, "SIGTERM");
  const stopped = stopCluster(config);
  rmSync(config.stateFile, { force: true });
  return stopped || state !== null;
}

/**
 * Throws a stack's state away so the next start begins from an empty database: whatever runs is
 * stopped, and the cluster, stored files and caught mail (which belonged to it) are deleted.
 */
export async function resetStack(config: StackConfig): Promise<void> {
  await stopRecordedStack(config);
  destroyCluster(config);
  for (const dir of [config.storageDir, config.mailDir]) rmSync(dir, { recursive: true, force: true });
}
