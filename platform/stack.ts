import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT, type StackConfig } from "./config.ts";
import { startFunctionsHost } from "./functions-host/launch.ts";
import { applyFixtures, pushMigrations } from "./migrations.ts";
import { destroyCluster, startCluster, stopCluster } from "./postgres/cluster.ts";
import { startPostgrest, waitForPostgrest } from "./postgrest/postgrest.ts";
import { killGroup, startChild, stopChild, type Child } from "./process/children.ts";
import { PlatformError } from "./process/errors.ts";
import { assertPortFree, waitForPort } from "./process/ports.ts";
import { step } from "./process/progress.ts";

/** What `npm run status` and `npm stop` read to find a running stack. */
export interface StackState {
  profile: string;
  supervisorPid: number;
  startedAt: string;
  children: { name: string; pid: number }[];
}

/** A started stack; `stop` takes down everything it started, in reverse order. */
export interface RunningStack {
  config: StackConfig;
  children: Child[];
  stop(): Promise<void>;
}

/** Options for bringing a stack up. */
export interface StartOptions {
  /** Apply test/fixtures/*.sql after migrations and seed (the test stack only). */
  fixtures?: boolean;
  /** Runs once migrations and seed are in, before fixtures or services. */
  afterMigrations?: () => Promise<void>;
}

/**
 * Brings up Postgres, applies migrations and seed, then PostgREST, the platform server (gateway,
 * auth, storage, mail, queue workers) and the functions host. Any failure stops whatever was
 * already started, so a half-started stack is never left running.
 */
export async function startStack(config: StackConfig, options: StartOptions = {}): Promise<RunningStack> {
  const running = readState(config);
  if (running && isAlive(running.supervisorPid)) {
    throw new PlatformError(`An Orbita ${config.profile} stack is already running (pid ${running.supervisorPid}).`, "Use it, or run `npm stop` first.");
  }
  const { ports } = config;
  for (const [port, what] of [[ports.gateway, "API gateway"], [ports.mail, "mail catcher"], [ports.postgrest, "PostgREST"], [ports.postgrestAdmin, "PostgREST admin"], [ports.functions, "functions host"]] as const) {
    await assertPortFree(port, what);
  }
  mkdirSync(config.logDir, { recursive: true });

  const children: Child[] = [];
  let clusterStarted = false;
  const stop = async () => {
    for (const child of [...children].reverse()) await stopChild(child);
    if (clusterStarted) stopCluster(config);
    rmSync(config.stateFile, { force: true });
  };
  try {
    await step(`Starting Postgres 15 on 127.0.0.1:${ports.db}`, async () => {
      await startCluster(config);
      clusterStarted = true;
    });
    await step("Applying migrations and seed (supabase db push)", async () => pushMigrations(config));
    if (options.afterMigrations) await options.afterMigrations();
    if (options.fixtures) await step("Applying test fixtures", () => applyFixtures(config));
    await step("Starting PostgREST 12.0.2", async () => {
      const postgrest = startPostgrest(config);
      children.push(postgrest);
      await untilReadyOrExited(postgrest, waitForPostgrest(config));
    });
    await step("Starting the gateway, auth, storage, mail catcher and queue workers", async () => {
      const platform = startChild(config, "platform", join(PROJECT_ROOT, "node_modules", ".bin", "tsx"), [join(PROJECT_ROOT, "platform", "server.ts")]);
      children.push(platform);
      await untilReadyOrExited(platform, Promise.all([waitForPort(ports.gateway, "The API gateway"), waitForPort(ports.mail, "The mail catcher")]));
    });
    await step("Starting the edge-functions host (Deno)", async () => {
      const functions = startFunctionsHost(config);
      children.push(functions);
      await untilReadyOrExited(functions, waitForPort(ports.functions, "The functions host", 60_000));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  writeState(config, children);
  return { config, children, stop };
}

/** Waits for a service to become ready, failing at once (with its last log line) if it exits first. */
async function untilReadyOrExited(child: Child, ready: Promise<unknown>): Promise<void> {
  let starting = true;
  const exited = child.exited.then((code) => {
    if (!starting) return;
    const log = existsSync(child.logFile) ? readFileSync(child.logFile, "utf8").trim().split("\n") : [];
    const reason = log.reverse().find((line) => /error/i.test(line)) ?? log[0] ?? "no output";
    throw new PlatformError(`${child.name} exited with code ${code} while starting: ${reason.trim()}`, `See ${child.logFile}.`);
  });
  try {
    await Promise.race([ready, exited]);
  } finally {
    starting = false;
  }
}

function writeState(config: StackConfig, children: Child[]): void {
  const state: StackState = {
    profile: config.profile,
    supervisorPid: process.pid,
    startedAt: new Date().toISOString(),
    children: children.map((child) => ({ name: child.name, pid: child.process.pid ?? 0 })),
  };
  writeFileSync(config.stateFile, JSON.stringify(state, null, 2));
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
  for (const child of state?.children ?? []) killGroup(child.pid, "SIGTERM");
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
