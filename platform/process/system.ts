import { spawn, spawnSync, type SpawnSyncOptions } from "node:child_process";

/** True when this process runs as root (the Postgres server must then run as the postgres user). */
export const IS_ROOT = typeof process.getuid === "function" && process.getuid() === 0;

/** Runs a command to completion and returns its output; never throws for a non-zero exit. */
export function run(command: string, args: string[], options: SpawnSyncOptions = {}) {
  const result = spawnSync(command, args, { encoding: "utf8", ...options });
  return {
    ok: result.status === 0,
    status: result.status,
    stdout: String(result.stdout ?? ""),
    stderr: String(result.stderr ?? ""),
    error: result.error,
  };
}

/** Runs a command as the postgres OS user when we are root, otherwise as ourselves. */
export function runAsPostgres(command: string, args: string[], options: SpawnSyncOptions = {}) {
  return IS_ROOT ? run("runuser", ["-u", "postgres", "--", command, ...args], options) : run(command, args, options);
}

/**
 * `runAsPostgres` without blocking the event loop, for slow commands a supervisor runs while it
 * must keep answering signals and other services' exits (pg_ctl start waiting for crash recovery).
 */
export function runAsPostgresInBackground(command: string, args: string[]): Promise<ReturnType<typeof run>> {
  const [file, argv] = IS_ROOT ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
  return new Promise((resolve) => {
    const child = spawn(file, argv, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.once("error", (error) => resolve({ ok: false, status: null, stdout, stderr, error }));
    child.once("close", (status) => resolve({ ok: status === 0, status, stdout, stderr, error: undefined }));
  });
}

/** Prefix for commands that need root: nothing when root, sudo -n otherwise. */
export function privileged(command: string, args: string[]): [string, string[]] {
  return IS_ROOT ? [command, args] : ["sudo", ["-n", command, ...args]];
}
