import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import postgres from "postgres";
import { LOCAL_DB_PASSWORD, type StackConfig } from "../config/stack-config.ts";
import { PlatformError } from "../process/errors.ts";
import { assertPortFree, isListening } from "../process/ports.ts";
import type { ExitReason, ServiceDefinition } from "../process/supervisor.ts";
import { IS_ROOT, run, runAsPostgres, runAsPostgresInBackground } from "../process/system.ts";
import { PG_BIN } from "../commands/setup.ts";

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

/** Commits reach the kernel before they are acknowledged (see initCluster). */
const SYNCHRONOUS_COMMIT = "synchronous_commit = on";

/**
 * Runs initdb with supabase_admin as the bootstrap superuser, TCP-only on 127.0.0.1 (no Unix
 * socket, so the path length of the checkout never matters), pg_cron and pg_stat_statements preloaded.
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
    // pg_stat_statements as hosted Supabase preloads it: profiling a path (docs/performance.md)
    // needs it. Its hooks count every top-level statement (a hash lookup each) whether or not a
    // database has run `create extension`, which only adds the view that reads the counts.
    "shared_preload_libraries = 'pg_cron,pg_stat_statements'",
    "cron.database_name = 'postgres'",
    // pg_cron's own libpq connections would need a password; background workers need none.
    "cron.use_background_workers = on",
    "max_worker_processes = 32",
    "max_connections = 300",
    "timezone = 'UTC'",
    "log_timezone = 'UTC'",
    // No fsync: an OS crash may lose recent commits, which a local stack can afford. But a commit
    // is written to the kernel before it is acknowledged, so a crash of Postgres itself (kill -9,
    // which the supervisor recovers from) never loses one that a client was told succeeded.
    "fsync = off",
    SYNCHRONOUS_COMMIT,
    "full_page_writes = off",
    "shared_buffers = 256MB",
    "work_mem = 16MB",
    "log_min_messages = warning",
    "",
  ].join("\n");
  writeFileSync(join(config.pgDataDir, "postgresql.auto.conf"), settings);
}

/**
 * Clusters created before commits were made crash-safe say `synchronous_commit = off`, which
 * loses acknowledged commits when Postgres is killed; that one platform line is brought up to date.
 */
function upgradeSettings(config: StackConfig): void {
  const file = join(config.pgDataDir, "postgresql.auto.conf");
  if (!existsSync(file)) return;
  const settings = readFileSync(file, "utf8");
  if (settings.includes("\nsynchronous_commit = off\n")) writeFileSync(file, settings.replace("\nsynchronous_commit = off\n", `\n${SYNCHRONOUS_COMMIT}\n`));
}

/**
 * The pid in postmaster.pid when that process is alive, else null. A file left by a crash stays:
 * the postmaster replaces it itself, after checking through the shared-memory key it records that
 * no backend of the dead server still runs (removing it would defeat that check).
 */
function runningPid(config: StackConfig): number | null {
  const pid = recordedPid(config);
  if (pid === null) return null;
  const status = runAsPostgres(join(PG_BIN, "pg_ctl"), ["-D", config.pgDataDir, "status"]);
  // pg_ctl counts a dead postmaster that is still a zombie as running.
  return status.ok && alive(pid) ? pid : null;
}

/** The pid postmaster.pid names, or null when there is no such file. */
function recordedPid(config: StackConfig): number | null {
  const pidFile = join(config.pgDataDir, "postmaster.pid");
  if (!existsSync(pidFile)) return null;
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** A process's state letter in /proc ("S", "R", "Z" for a zombie…), null when /proc has no such process. */
function procState(pid: number): string | null {
  try {
    // "1234 (postgres) S …": the state follows the parenthesised command name.
    return /\) (\S) /.exec(readFileSync(`/proc/${pid}/stat`, "utf8"))?.[1] ?? null;
  } catch {
    return null;
  }
}

/**
 * True while the process runs. The postmaster is not our child, so once dead it stays a zombie
 * until init reaps it, and a zombie still answers kill(pid, 0): /proc says which it is.
 */
function alive(pid: number): boolean {
  const state = procState(pid);
  if (state !== null) return state !== "Z";
  // No /proc entry: gone, or no /proc at all, where kill(pid, 0) is the best there is.
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * While a killed postmaster is a zombie, a new one takes the pid file for a live server's and
 * refuses to start; this waits (up to 10 s) for init to reap it.
 */
async function untilReaped(pid: number | null): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (pid !== null && procState(pid) === "Z" && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}

/**
 * Starts the cluster (initialising and bootstrapping it on first use). Starting a running cluster
 * is harmless; a stale pid file is recovered. Returns whether the cluster was created now.
 */
export async function startCluster(config: StackConfig): Promise<{ created: boolean }> {
  const created = !clusterExists(config);
  if (created) initCluster(config);
  if (runningPid(config) !== null) return { created: false };
  await untilReaped(recordedPid(config));
  await assertPortFree(config.ports.db, "Postgres");
  prepareDirectories(config);
  upgradeSettings(config);
  const result = await runAsPostgresInBackground(join(PG_BIN, "pg_ctl"), [
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

/** How often the supervisor checks that the postmaster is still alive. */
const POSTMASTER_POLL_MS = 250;

/** The last line of the server log, to say what Postgres reported before it went away. */
function lastLogLine(config: StackConfig): string {
  if (!existsSync(pgLogFile(config))) return "";
  return readFileSync(pgLogFile(config), "utf8").trim().split("\n").pop()?.trim() ?? "";
}

/**
 * Postgres as a supervised service. pg_ctl starts the postmaster as a daemon, so it is not a
 * child of the supervisor and its exit status is never known: the supervisor polls its pid and
 * reports it gone. Starting again is `pg_ctl start`, which waits for crash recovery; right after a
 * crash it fails while the old backends still hold shared memory, and the backoff retries it.
 */
export function postgresService(config: StackConfig): ServiceDefinition {
  return {
    name: "postgres",
    logFile: pgLogFile(config),
    start: async () => {
      await startCluster(config);
      const pid = runningPid(config);
      if (pid === null) throw new PlatformError("Postgres stopped right after it started.", `See ${pgLogFile(config)}.`);
      let watcher: ReturnType<typeof setInterval> | undefined;
      const exited = new Promise<ExitReason>((resolve) => {
        watcher = setInterval(() => {
          if (alive(pid)) return;
          clearInterval(watcher);
          const last = lastLogLine(config);
          resolve({ code: null, signal: null, detail: `the postmaster (pid ${pid}) is gone${last ? `; the log's last line: ${last}` : ""}` });
        }, POSTMASTER_POLL_MS);
      });
      return {
        pid,
        exited,
        stop: async () => {
          clearInterval(watcher);
          stopCluster(config);
        },
      };
    },
  };
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
