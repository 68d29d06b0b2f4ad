import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import postgres from "postgres";
import { LOCAL_DB_PASSWORD, type StackConfig } from "../config.ts";
import { PlatformError } from "../process/errors.ts";
import { assertPortFree, isListening } from "../process/ports.ts";
import { IS_ROOT, run, runAsPostgres } from "../process/system.ts";
import { PG_BIN } from "../setup.ts";

const BOOTSTRAP_DIR = join(dirname(new URL(import.meta.url).pathname), "bootstrap");

function pgLogFile(config: StackConfig): string {
  return join(config.logDir, "postgres.log");
}

/**
 * The postgres OS user must reach the data directory through every parent folder. A checkout in a
 * `mktemp -d` folder (mode 700) would block it, so each parent gets the search bit (x) only.
 */
function grantTraversal(path: string): void {
  let current = dirname(path);
  while (current !== dirname(current)) {
    const mode = statSync(current).mode;
    if ((mode & 0o001) === 0) chmodSync(current, mode | 0o001);
    current = dirname(current);
  }
}

/** Creates the runtime folders; when root, the Postgres ones belong to the postgres user. */
function prepareDirectories(config: StackConfig): void {
  mkdirSync(config.logDir, { recursive: true });
  if (IS_ROOT) {
    grantTraversal(config.pgDataDir);
    run("chown", ["postgres:postgres", config.runtimeDir, config.logDir]);
  }
}

/** True when the data directory holds an initialised cluster. */
export function clusterExists(config: StackConfig): boolean {
  return existsSync(join(config.pgDataDir, "PG_VERSION"));
}

/**
 * Runs initdb with supabase_admin as the bootstrap superuser, TCP-only on 127.0.0.1 (no Unix
 * socket, so the path length of the checkout never matters), pg_cron preloaded.
 */
function initCluster(config: StackConfig): void {
  prepareDirectories(config);
  const pwfile = join(config.runtimeDir, ".pwfile");
  writeFileSync(pwfile, `${LOCAL_DB_PASSWORD}\n`, { mode: 0o600 });
  if (IS_ROOT) run("chown", ["postgres:postgres", pwfile]);
  const result = runAsPostgres(join(PG_BIN, "initdb"), [
    "-D", config.pgDataDir, "-U", "supabase_admin", "--auth=scram-sha-256", `--pwfile=${pwfile}`,
    "-E", "UTF8", "--locale=C.UTF-8", "--no-instructions",
  ]);
  rmSync(pwfile, { force: true });
  if (!result.ok) {
    throw new PlatformError(`initdb failed: ${result.stderr.trim().split("\n").pop()}`, `Remove ${config.pgDataDir} and try again.`);
  }
  const settings = [
    "# Orbita local platform settings (Supabase-like).",
    "listen_addresses = '127.0.0.1'",
    `port = ${config.ports.db}`,
    "unix_socket_directories = ''",
    "shared_preload_libraries = 'pg_cron'",
    "cron.database_name = 'postgres'",
    // pg_cron's own libpq connections would need a password; background workers need none.
    "cron.use_background_workers = on",
    "max_worker_processes = 32",
    "max_connections = 300",
    "timezone = 'UTC'",
    "log_timezone = 'UTC'",
    "fsync = off",
    "synchronous_commit = off",
    "full_page_writes = off",
    "shared_buffers = 256MB",
    "work_mem = 16MB",
    "log_min_messages = warning",
    "",
  ].join("\n");
  writeFileSync(join(config.pgDataDir, "postgresql.auto.conf"), settings);
}

/** The pid in postmaster.pid when that process is alive, else null (and a stale file is removed). */
function runningPid(config: StackConfig): number | null {
  const pidFile = join(config.pgDataDir, "postmaster.pid");
  if (!existsSync(pidFile)) return null;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  const status = runAsPostgres(join(PG_BIN, "pg_ctl"), ["-D", config.pgDataDir, "status"]);
  if (status.ok && Number.isInteger(pid)) return pid;
  // A crash or a reboot left the pid file behind; Postgres would refuse to start over it.
  rmSync(pidFile, { force: true });
  return null;
}

/**
 * Starts the cluster (initialising and bootstrapping it on first use). Starting a running cluster
 * is harmless; a stale pid file is recovered. Returns whether the cluster was created now.
 */
export async function startCluster(config: StackConfig): Promise<{ created: boolean }> {
  const created = !clusterExists(config);
  if (created) initCluster(config);
  if (runningPid(config) !== null) return { created: false };
  await assertPortFree(config.ports.db, "Postgres");
  prepareDirectories(config);
  const result = runAsPostgres(join(PG_BIN, "pg_ctl"), [
    "-D", config.pgDataDir, "-l", pgLogFile(config), "-w", "-t", "60", "start",
  ]);
  if (!result.ok || !(await isListening(config.ports.db))) {
    const log = existsSync(pgLogFile(config)) ? readFileSync(pgLogFile(config), "utf8").trim().split("\n").slice(-3).join(" | ") : "";
    throw new PlatformError(`Postgres did not start: ${log || result.stderr.trim()}`, `See ${pgLogFile(config)}.`);
  }
  if (created) {
    try {
      await bootstrap(config);
    } catch (error) {
      // A half-bootstrapped cluster would fail in confusing ways later; start from scratch next time.
      stopCluster(config);
      rmSync(config.pgDataDir, { recursive: true, force: true });
      throw error;
    }
  }
  return { created };
}

/** Stops the cluster if it runs (fast shutdown: open sessions are disconnected). */
export function stopCluster(config: StackConfig): boolean {
  if (!clusterExists(config) || runningPid(config) === null) return false;
  runAsPostgres(join(PG_BIN, "pg_ctl"), ["-D", config.pgDataDir, "-m", "fast", "-w", "stop"]);
  return true;
}

/** True when the cluster's postmaster is alive. */
export function clusterRunning(config: StackConfig): boolean {
  return clusterExists(config) && runningPid(config) !== null;
}

/** Deletes the cluster (the test stack starts from an empty database every run). */
export function destroyCluster(config: StackConfig): void {
  stopCluster(config);
  rmSync(config.pgDataDir, { recursive: true, force: true });
}

/** Applies the Supabase database contract (roles, schemas, auth, storage) to a fresh cluster. */
async function bootstrap(config: StackConfig): Promise<void> {
  const sql = postgres(config.adminDbUrl, { max: 1, onnotice: () => {} });
  try {
    for (const file of readdirSync(BOOTSTRAP_DIR).filter((name) => name.endsWith(".sql")).sort()) {
      try {
        await sql.unsafe(readFileSync(join(BOOTSTRAP_DIR, file), "utf8"));
      } catch (error) {
        throw new PlatformError(`Bootstrap step ${file} failed: ${(error as Error).message}`, "This is a bug in the local platform; please report it.");
      }
    }
  } finally {
    await sql.end();
  }
}
