import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { join } from "node:path";
import type { StackConfig } from "../config.ts";

/** A long-running service process started by the platform, logging to its own file. */
export interface Child {
  name: string;
  process: ChildProcess;
  logFile: string;
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
}

/** Starts a service process in its own process group, output appended to logs/<name>.log. */
export function startChild(config: StackConfig, name: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}): Child {
  const logFile = join(config.logDir, `${name}.log`);
  const log = createWriteStream(logFile, { flags: "a" });
  const child = spawn(command, args, {
    env: { ...process.env, ...env, ORBITA_PROFILE: config.profile, ORBITA_STACK_SLOT: String(config.slot) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { name, process: child, logFile, exited };
}

/** Stops a child: SIGTERM to its process group, SIGKILL if it is still alive after the grace period. */
export async function stopChild(child: Child, graceMs = 5000): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  killGroup(child.process.pid, "SIGTERM");
  const timer = setTimeout(() => killGroup(child.process.pid, "SIGKILL"), graceMs);
  await child.exited;
  clearTimeout(timer);
}

/** Signals a process group, ignoring one that is already gone. */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // Already exited.
  }
}
