import { spawnSync, type SpawnSyncOptions } from "node:child_process";

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

/** Prefix for commands that need root: nothing when root, sudo -n otherwise. */
export function privileged(command: string, args: string[]): [string, string[]] {
  return IS_ROOT ? [command, args] : ["sudo", ["-n", command, ...args]];
}
