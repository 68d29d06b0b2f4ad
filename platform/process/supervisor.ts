/**
 * Keeps a stack's services running, as `supabase start`'s containers are kept by their restart
 * policy: a service that dies unexpectedly is started again after a short, capped exponential
 * backoff, with one log line saying why it died, while the others keep running. A service that
 * keeps dying (the crash-loop guard) is left stopped, with a line saying so. A deliberate stop
 * (Ctrl-C, `npm stop`, SIGTERM) stops everything in reverse order and restarts nothing.
 */

/** Why a service's process ended. */
export interface ExitReason {
  code: number | null;
  signal: string | null;
  /** A sentence for the log when code and signal do not tell the story (e.g. a vanished postmaster). */
  detail?: string;
}

/** One started instance of a service. */
export interface RunningService {
  pid: number;
  /** Resolves when the process has ended, for whatever reason. */
  exited: Promise<ExitReason>;
  /** Stops it on purpose and resolves once it is gone. */
  stop(): Promise<void>;
}

/** How to start a service. */
export interface ServiceDefinition {
  name: string;
  /** Where its output goes, named in crash messages. */
  logFile: string;
  /** Starts the service and resolves once it is ready; rejects when it cannot start. */
  start(): Promise<RunningService>;
  /** Runs after the supervisor has started the service again (not after its first start). */
  afterRestart?(): void;
}

/** What a service is doing now. */
export type ServiceState = "starting" | "running" | "restarting" | "crash-loop" | "stopped";

/** A service as `npm run status` shows it. */
export interface ServiceStatus {
  name: string;
  state: ServiceState;
  pid: number | null;
  /** Times it was started again after its first start. */
  restarts: number;
  /** When the current process started (ISO time), null when none runs. */
  since: string | null;
  /** The last time it ended without being asked to, and why. */
  lastExit: { at: string; reason: string } | null;
  logFile: string;
}

/** When to start a dead service again, and when to give up. */
export interface RestartPolicy {
  /** Wait before the first restart; doubled for each failure in a row. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** A service that ran this long before dying starts its backoff over. */
  stableAfterMs: number;
  /** This many unexpected exits within `withinMs` means it keeps dying: it is not restarted again. */
  crashLoopExits: number;
  crashLoopWithinMs: number;
}

/** Restarts within about a second, backing off to 8 s; five deaths in a minute is a crash loop. */
export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  firstDelayMs: 250,
  maxDelayMs: 8_000,
  stableAfterMs: 30_000,
  crashLoopExits: 5,
  crashLoopWithinMs: 60_000,
};

/** A line the supervisor wants seen: `warn` for deaths and restarts, `error` when it gives up. */
export type SupervisorLog = (level: "info" | "warn" | "error", line: string) => void;

interface Entry {
  definition: ServiceDefinition;
  state: ServiceState;
  running: RunningService | null;
  since: number | null;
  restarts: number;
  /** Failures in a row, for the backoff. */
  consecutive: number;
  /** Times of recent unexpected exits, for the crash-loop guard. */
  recentExits: number[];
  lastExit: { at: string; reason: string } | null;
  timer: ReturnType<typeof setTimeout> | null;
  /** Set while the supervisor itself stops or replaces the process, so its exit is expected. */
  expectingExit: boolean;
}

/** Describes an exit for a log line: "exit code 1", "signal SIGKILL", or the detail given. */
export function describeExit(reason: ExitReason): string {
  const parts = [];
  if (reason.signal) parts.push(`signal ${reason.signal}`);
  else if (reason.code !== null) parts.push(`exit code ${reason.code}`);
  if (reason.detail) parts.push(reason.detail);
  return parts.join(": ") || "unknown cause";
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 1000 ? 2 : 1)} s`;
}

/** Supervises services started one by one with `launch`, in the order given. */
export class Supervisor {
  private readonly entries: Entry[] = [];
  private stopping = false;

  constructor(
    private readonly log: SupervisorLog,
    /** Called whenever a service's status changes (the stack records it for `npm run status`). */
    private readonly onChange: () => void = () => {},
    private readonly policy: RestartPolicy = DEFAULT_RESTART_POLICY,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts a service (its first start) and supervises it from then on; rejects if it cannot start. */
  async launch(definition: ServiceDefinition): Promise<void> {
    if (this.stopping) throw new Error("the supervisor is stopping");
    const entry: Entry = {
      definition, state: "starting", running: null, since: null, restarts: 0, consecutive: 0,
      recentExits: [], lastExit: null, timer: null, expectingExit: false,
    };
    this.entries.push(entry);
    this.onChange();
    let running: RunningService;
    try {
      running = await definition.start();
    } catch (error) {
      entry.state = "stopped";
      this.onChange();
      throw error;
    }
    if (this.stopping) {
      // Asked to stop while this service was starting: it must not outlive the stop.
      await running.stop();
      entry.state = "stopped";
      this.onChange();
      throw new Error(`${definition.name} was started while the stack was stopping`);
    }
    this.adopt(entry, running);
  }

  /** Stops every service, last started first; nothing is restarted from now on. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const entry of [...this.entries].reverse()) {
      if (entry.timer) clearTimeout(entry.timer);
      entry.timer = null;
      const running = entry.running;
      entry.expectingExit = true;
      if (running) await running.stop();
      entry.running = null;
      entry.since = null;
      entry.state = "stopped";
    }
    this.onChange();
  }

  /** Replaces a running service on purpose (logged with `why`); counted as a restart. */
  async restart(name: string, why: string): Promise<void> {
    const entry = this.entries.find((candidate) => candidate.definition.name === name);
    if (!entry || this.stopping || entry.state !== "running" || !entry.running) return;
    this.log("warn", `restarting ${name}: ${why}`);
    entry.expectingExit = true;
    entry.state = "restarting";
    this.onChange();
    await entry.running.stop();
    entry.running = null;
    entry.expectingExit = false;
    await this.startAgain(entry);
  }

  /** Every service's current status, in start order. */
  status(): ServiceStatus[] {
    return this.entries.map((entry) => ({
      name: entry.definition.name,
      state: entry.state,
      pid: entry.running?.pid ?? null,
      restarts: entry.restarts,
      since: entry.since === null ? null : new Date(entry.since).toISOString(),
      lastExit: entry.lastExit,
      logFile: entry.definition.logFile,
    }));
  }

  private adopt(entry: Entry, running: RunningService): void {
    entry.running = running;
    entry.since = this.now();
    entry.state = "running";
    entry.expectingExit = false;
    this.onChange();
    void running.exited.then((reason) => {
      if (entry.running !== running) return;
      if (this.stopping || entry.expectingExit) return;
      const ranMs = this.now() - (entry.since ?? this.now());
      entry.running = null;
      entry.since = null;
      this.died(entry, describeExit(reason), ranMs);
    });
  }

  /** Records an unexpected death (or a failed start) and schedules the next start, or gives up. */
  private died(entry: Entry, reason: string, ranMs: number): void {
    const { name, logFile } = entry.definition;
    const now = this.now();
    entry.lastExit = { at: new Date(now).toISOString(), reason };
    entry.consecutive = ranMs >= this.policy.stableAfterMs ? 1 : entry.consecutive + 1;
    entry.recentExits = [...entry.recentExits.filter((at) => now - at < this.policy.crashLoopWithinMs), now];
    if (entry.recentExits.length >= this.policy.crashLoopExits) {
      entry.state = "crash-loop";
      this.onChange();
      this.log("error", `${name} keeps dying (${entry.recentExits.length} times within ${seconds(this.policy.crashLoopWithinMs)}; last: ${reason}). ` +
        `It is not restarted again; see ${logFile}, fix the cause and start the stack again.`);
      return;
    }
    const delay = Math.min(this.policy.maxDelayMs, this.policy.firstDelayMs * 2 ** (entry.consecutive - 1));
    entry.state = "restarting";
    this.onChange();
    this.log("warn", `${name} died (${reason}); restarting it in ${seconds(delay)}`);
    entry.timer = setTimeout(() => {
      entry.timer = null;
      void this.startAgain(entry);
    }, delay);
  }

  private async startAgain(entry: Entry): Promise<void> {
    if (this.stopping) return;
    let running: RunningService;
    try {
      running = await entry.definition.start();
    } catch (error) {
      if (this.stopping) return;
      this.died(entry, `it did not start again: ${error instanceof Error ? error.message : String(error)}`, 0);
      return;
    }
    if (this.stopping) {
      await running.stop();
      return;
    }
    entry.restarts += 1;
    this.adopt(entry, running);
    this.log("info", `${entry.definition.name} is running again (pid ${running.pid}, restart ${entry.restarts})`);
    entry.definition.afterRestart?.();
  }
}
