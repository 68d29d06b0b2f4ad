import { spawn } from "node:child_process";
import { createWriteStream, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { StackConfig } from "../config/stack-config.ts";
import { PlatformError } from "./errors.ts";
import type { ExitReason, RunningService, ServiceDefinition } from "./supervisor.ts";

/** How long a child gets to stop after SIGTERM before its process group is killed. */
const STOP_GRACE_MS = 5_000;

/** A long-running service process: its own process group, output appended to logs/<name>.log. */
export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Resolves once the process serves; it is raced against the process exiting. */
  ready(): Promise<unknown>;
}

/**
 * A service run as a child process. Each start spawns it in a process group of its own (so a
 * signal meant for the supervisor's terminal never reaches it, and stopping it takes its whole
 * group) and waits until it is ready, failing at once with its last error line if it exits first.
 */
export function processService(config: StackConfig, spec: ProcessSpec): ServiceDefinition {
  const logFile = join(config.logDir, `${spec.name}.log`);
  return {
    name: spec.name,
    logFile,
    start: async () => {
      const running = spawnChild(config, spec, logFile);
      let starting = true;
      const failedToStart = running.exited.then((reason) => {
        if (!starting) return;
        throw new PlatformError(`${spec.name} exited (${describe(reason)}) while starting: ${lastErrorLine(logFile)}`, `See ${logFile}.`);
      });
      try {
        await Promise.race([spec.ready(), failedToStart]);
      } catch (error) {
        await running.stop();
        throw error;
      } finally {
        starting = false;
      }
      return running;
    },
  };
}

function describe(reason: ExitReason): string {
  return reason.signal ? `signal ${reason.signal}` : `code ${reason.code}`;
}

/** The last line of a log that mentions an error, else its last line. */
function lastErrorLine(logFile: string): string {
  const lines = existsSync(logFile) ? readFileSync(logFile, "utf8").trim().split("\n") : [];
  return (lines.reverse().find((line) => /error/i.test(line)) ?? lines[0] ?? "no output").trim();
}

function spawnChild(config: StackConfig, spec: ProcessSpec, logFile: string): RunningService {
  const log = createWriteStream(logFile, { flags: "a" });
  const child = spawn(spec.command, spec.args, {
    env: { ...process.env, ...spec.env, ORBITA_PROFILE: config.profile, ORBITA_STACK_SLOT: String(config.slot) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  // Both streams feed one file, which is closed once both have ended.
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  const pid = child.pid ?? 0;
  const exited = new Promise<ExitReason>((resolve) => {
    child.once("error", (error) => log.end(() => resolve({ code: null, signal: null, detail: `could not be started: ${error.message}` })));
    // Whatever the process left behind in its group (a helper it forked) goes with it, so a
    // restart never meets a stray process holding the port or the log pipe.
    child.once("exit", () => killGroup(pid, "SIGKILL"));
    // Settled once its last output is in the log, so a crash message can quote it.
    child.once("close", (code, signal) => log.end(() => resolve({ code, signal })));
  });
  return {
    pid,
    exited,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      killGroup(pid, "SIGTERM");
      const timer = setTimeout(() => killGroup(pid, "SIGKILL"), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
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
