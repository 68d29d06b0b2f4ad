import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { PROJECT_ROOT, type StackConfig } from "../../platform/config/stack-config.ts";
import type { ServiceStatus } from "../../platform/process/supervisor.ts";
import { readState, resetStack } from "../../platform/commands/stack.ts";
import { until } from "./until.ts";

/**
 * Slots for the test files that need a stack or cluster of their own, because they kill processes
 * or restart Postgres and must not disturb the shared test stack. Each file has its own decade of
 * slots, shifted by the run's ORBITA_TEST_SLOT (0–9), so no two runs on one machine share a port:
 * test stacks take slots 0–9, a bench's ports are a test stack's slots 20–29, these take 40–89.
 * One table, so a new file cannot take a decade another already has.
 */
const OWN_STACK_DECADES = { lifecycle: 40, webhookResilience: 50, supervision: 60, faultsUnderLoad: 70, asyncWorkerKill: 80 } as const;

/** The slot (a `loadConfig("test", slot)` argument) of `file`'s own stack in this run. */
export function ownStackSlot(file: keyof typeof OWN_STACK_DECADES): number {
  return OWN_STACK_DECADES[file] + Number(process.env.ORBITA_TEST_SLOT ?? 0);
}

/**
 * How long a test may wait for its own stack to boot: a quiet machine takes about 30 s, one whose
 * two cores are both busy (the whole suite beside a CPU hog) several times that.
 */
export const STACK_BOOT_MS = 300_000;

/**
 * A supervised stack in a process of its own (test/helpers/supervised-stack.ts, what `npm start`
 * runs), for a file that kills its services: started fresh, its supervisor's output kept.
 */
export class OwnStack {
  private output = "";

  private constructor(
    readonly config: StackConfig,
    private readonly supervisor: ChildProcess,
  ) {
    supervisor.stdout?.on("data", (chunk: Buffer) => (this.output += chunk.toString()));
    supervisor.stderr?.on("data", (chunk: Buffer) => (this.output += chunk.toString()));
  }

  /**
   * Starts the stack of `config` and resolves once it says READY; fails, leaving nothing behind,
   * if it exits first or takes longer than `timeoutMs`.
   */
  static async start(config: StackConfig, timeoutMs: number): Promise<OwnStack> {
    const supervisor = spawn(
      process.execPath,
      ["--import", join(PROJECT_ROOT, "node_modules", "tsx", "dist", "loader.mjs"), join(PROJECT_ROOT, "test", "helpers", "supervised-stack.ts"), String(config.slot)],
      { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    const stack = new OwnStack(config, supervisor);
    try {
      await until("the supervised stack to start", () => {
        if (supervisor.exitCode !== null) throw new Error(`the supervised stack exited while starting:\n${stack.output}`);
        return stack.output.includes("READY");
      }, timeoutMs);
    } catch (error) {
      await stack.dispose();
      throw error;
    }
    return stack;
  }

  /** Everything the supervisor has printed. */
  get log(): string {
    return this.output;
  }

  /** The supervisor's exit code, null while it runs. */
  get exitCode(): number | null {
    return this.supervisor.exitCode;
  }

  /** A service's current state, pid and restarts, from the stack's state file. */
  service(name: string): ServiceStatus {
    const found = readState(this.config)?.services.find((candidate) => candidate.name === name);
    if (!found) throw new Error(`${name} is not in the stack's state`);
    return found;
  }

  /** Sends SIGTERM (what `npm stop` sends) and waits up to `timeoutMs` for the supervisor to exit. */
  async stop(timeoutMs = 30_000): Promise<void> {
    this.supervisor.kill("SIGTERM");
    await until("the supervised stack to stop", () => this.supervisor.exitCode !== null, timeoutMs);
  }

  /** Stops the stack if it still runs and removes its data, whatever happened before. */
  async dispose(): Promise<void> {
    if (this.supervisor.exitCode === null) await this.stop().catch(() => {});
    await resetStack(this.config);
  }
}
