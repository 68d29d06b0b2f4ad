/**
 * User code off the request thread: a pool of worker threads, each holding its own QuickJS engine
 * (sandbox-thread.ts). A call waits for a free thread, runs there while the function's own thread
 * goes on serving requests, and resolves with the outcome. So:
 *
 *  - code that never yields stalls only its own thread, never the function (gamification requests
 *    included) nor other runs;
 *  - independent calls (the Function blocks of a parallel) run at the same time, up to the pool's
 *    size;
 *  - a cancellation (the caller went away, the run timed out or a Response answered) reaches
 *    running code at once: the pool sets the thread's shared stop cell, which the interpreter reads
 *    as it runs, and the call rejects immediately without waiting for the thread;
 *  - a thread that does not stop within a grace period after its deadline or a cancellation, or
 *    that fails (a WebAssembly trap, an exit), is terminated and replaced; nothing waits for it.
 *
 * Threads start on demand, up to the size, and are replaced after a number of calls so a grown
 * WebAssembly heap is given back. Threads are shared fairly between tenants and their runs
 * (fair-queue.ts says how). A call's own time limit (`timeoutMs`) counts from when a thread starts
 * it, so waiting for a thread never uses it up; a call still waiting at its run's time limit
 * (`deadline`) fails with SANDBOX_TIMEOUT.
 */
import { WorkflowError } from "../core/errors.ts";
import type { Sandbox, SandboxRequest, SandboxResult } from "../core/sandbox-contract.ts";
import { FairQueue } from "./fair-queue.ts";
import { refuseEarly, settle, toCall } from "./sandbox.ts";
import type { FromSandboxThread } from "./sandbox-thread.ts";
import type { SandboxThread, SpawnSandboxThread } from "./sandbox-threads.ts";

/** How a pool is built. */
export interface SandboxPoolOptions {
  /** Most threads at once. */
  size: number;
  spawn: SpawnSandboxThread;
  /** How long a thread may take to stop after its deadline or a cancellation before it is replaced. */
  stopGraceMs?: number;
  /** Calls a thread serves before it is replaced. */
  maxCallsPerThread?: number;
}

/** What the pool is doing, for tests and the benchmark. */
export interface SandboxPoolStats {
  size: number;
  threads: number;
  busy: number;
  queued: number;
  /** Threads started since the pool was made (replacements included). */
  started: number;
}

/** The pool could not start a thread at all (a runtime without Web Workers): nothing ran. */
export class SandboxThreadsUnavailable extends WorkflowError {
  constructor(reason: string) {
    super("BLOCK_FAILED", `the sandbox's worker threads could not start: ${reason}`);
    this.name = "SandboxThreadsUnavailable";
  }
}

/** Default grace after a deadline or a cancellation. */
export const DEFAULT_STOP_GRACE_MS = 1_000;
/** Default calls per thread (Sim recycles its isolates after 2,500). */
export const DEFAULT_MAX_CALLS_PER_THREAD = 1_000;

interface Job {
  request: SandboxRequest;
  owner: string;
  /** The billing account held to its share, or null for a call without one. */
  account: string | null;
  signal: AbortSignal | undefined;
  resolve(result: SandboxResult): void;
  reject(error: unknown): void;
  settled: boolean;
  slot: Slot | null;
  queuedTimer: ReturnType<typeof setTimeout> | undefined;
  onAbort: (() => void) | undefined;
}

interface Slot {
  thread: SandboxThread;
  /** The stop cell shared with the thread (null where SharedArrayBuffer is missing: then a cancellation replaces the thread). */
  control: Int32Array | null;
  /** The call it runs for a caller, or null while idle or stopping a cancelled call. */
  job: Job | null;
  /** Id of the call it runs; answers to older calls are ignored. */
  callId: number;
  busy: boolean;
  /** Whether the thread has reported its engine loaded; until then it takes no call. */
  ready: boolean;
  calls: number;
  watchdog: ReturnType<typeof setTimeout> | undefined;
  dead: boolean;
}

function sharedCell(): Int32Array | null {
  return typeof SharedArrayBuffer === "function" ? new Int32Array(new SharedArrayBuffer(4)) : null;
}

/** A pool of sandbox threads; see the module comment. */
export class SandboxPool implements Sandbox {
  private readonly slots = new Set<Slot>();
  private readonly idle: Slot[] = [];
  private readonly queue: FairQueue<Job>;
  private readonly stopGraceMs: number;
  private readonly maxCallsPerThread: number;
  private nextCallId = 1;
  private started = 0;

  constructor(private readonly options: SandboxPoolOptions) {
    this.queue = new FairQueue(options.size);
    this.stopGraceMs = options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
    this.maxCallsPerThread = options.maxCallsPerThread ?? DEFAULT_MAX_CALLS_PER_THREAD;
  }

  /** Runs one call on a free thread; see the module comment. */
  run(request: SandboxRequest): Promise<SandboxResult> {
    try {
      refuseEarly(request);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<SandboxResult>((resolve, reject) => {
      const job: Job = {
        request,
        owner: request.owner ?? "",
        account: request.account ?? null,
        signal: request.signal,
        resolve,
        reject,
        settled: false,
        slot: null,
        queuedTimer: undefined,
        onAbort: undefined,
      };
      if (request.signal) {
        job.onAbort = () => this.cancel(job);
        request.signal.addEventListener("abort", job.onAbort, { once: true });
      }
      job.queuedTimer = setTimeout(() => this.expire(job), Math.max(0, request.deadline - Date.now()));
      this.queue.push(job);
      this.dispatch();
    });
  }

  /** Current figures. */
  stats(): SandboxPoolStats {
    const busy = [...this.slots].filter((slot) => slot.busy).length;
    return { size: this.options.size, threads: this.slots.size, busy, queued: this.queue.length, started: this.started };
  }

  /** Terminates every thread and fails whatever waits (a function shutting down). */
  close(): void {
    for (const job of this.queue.drain()) this.fail(job, new WorkflowError("CANCELLED", "the sandbox pool was closed"));
    for (const slot of [...this.slots]) {
      if (slot.job) this.fail(slot.job, new WorkflowError("CANCELLED", "the sandbox pool was closed"));
      this.retire(slot);
    }
  }

  /**
   * Starts the waiting calls that can start on idle threads, and starts threads for the rest (up to
   * the size). A new thread takes a call only once it reports ready, so its start never uses up a
   * call's own time limit.
   */
  private dispatch(): void {
    for (let job = this.queue.next(); job; job = this.queue.next()) {
      const slot = this.idle.pop();
      if (!slot) {
        this.startThreadsFor(this.queue.length);
        return;
      }
      this.queue.start(job);
      this.begin(slot, job);
    }
  }

  /** Starts threads until `waiting` calls have one starting for them, or the pool is full. */
  private startThreadsFor(waiting: number): void {
    let starting = [...this.slots].filter((slot) => !slot.ready && !slot.dead).length;
    while (starting < waiting && this.slots.size < this.options.size) {
      try {
        this.startThread();
      } catch (error) {
        const reason = new SandboxThreadsUnavailable(error instanceof Error ? error.message : String(error));
        for (const job of this.queue.drain()) this.fail(job, reason);
        return;
      }
      starting++;
    }
  }

  private startThread(): Slot {
    const slot: Slot = { thread: undefined as unknown as SandboxThread, control: sharedCell(), job: null, callId: 0, busy: false, ready: false, calls: 0, watchdog: undefined, dead: false };
    slot.thread = this.options.spawn({
      message: (message) => this.answered(slot, message),
      failure: (reason) => this.failed(slot, reason),
    });
    slot.thread.post({ type: "init", control: slot.control ? (slot.control.buffer as SharedArrayBuffer) : null });
    this.slots.add(slot);
    this.started++;
    return slot;
  }

  private begin(slot: Slot, job: Job): void {
    clearTimeout(job.queuedTimer);
    job.slot = slot;
    slot.job = job;
    slot.busy = true;
    slot.callId = this.nextCallId++;
    if (slot.control) Atomics.store(slot.control, 0, 0);
    // The call's own time limit starts now, not when it was queued.
    const call = toCall(job.request);
    slot.thread.post({ type: "run", id: slot.callId, call });
    slot.watchdog = setTimeout(() => this.stuck(slot, "the code did not stop at its time limit; its sandbox thread was replaced"), Math.max(0, call.deadline - Date.now()) + this.stopGraceMs);
  }

  private answered(slot: Slot, message: FromSandboxThread): void {
    if (message.type === "ready") {
      if (slot.dead || slot.ready) return;
      slot.ready = true;
      this.idle.push(slot);
      this.dispatch();
      return;
    }
    if (slot.dead || !slot.busy || message.id !== slot.callId) return;
    clearTimeout(slot.watchdog);
    const job = slot.job;
    slot.job = null;
    slot.busy = false;
    slot.calls++;
    if (job) {
      this.release(job);
      try {
        job.resolve(settle(message.outcome, job.request.refs));
      } catch (error) {
        job.reject(error);
      }
    }
    if (message.outcome.resetEngine || slot.calls >= this.maxCallsPerThread) this.retire(slot);
    else this.idle.push(slot);
    this.dispatch();
  }

  /** The caller's signal aborted: the call rejects now; a running one is stopped behind it. */
  private cancel(job: Job): void {
    if (job.settled) return;
    const reason: unknown = job.signal?.reason;
    const slot = job.slot;
    if (!slot) {
      this.queue.remove(job);
      this.fail(job, reason);
      return;
    }
    slot.job = null;
    this.fail(job, reason);
    if (!slot.control) {
      this.retire(slot);
      this.dispatch();
      return;
    }
    Atomics.store(slot.control, 0, 1);
    clearTimeout(slot.watchdog);
    slot.watchdog = setTimeout(() => this.stuck(slot, "the code did not stop when its run was cancelled; its sandbox thread was replaced"), this.stopGraceMs);
  }

  /** A call still waiting for a thread at its run's time limit. */
  private expire(job: Job): void {
    if (job.settled || job.slot) return;
    this.queue.remove(job);
    this.fail(job, new WorkflowError("SANDBOX_TIMEOUT", `the code waited for a free sandbox thread until its run's time limit (all ${this.options.size} were busy, or its account held its share of them)`));
  }

  private stuck(slot: Slot, message: string): void {
    if (slot.dead) return;
    if (slot.job) this.fail(slot.job, new WorkflowError("SANDBOX_TIMEOUT", message));
    this.retire(slot);
    this.dispatch();
  }

  private failed(slot: Slot, reason: string): void {
    if (slot.dead) return;
    if (slot.job) this.fail(slot.job, new WorkflowError("BLOCK_FAILED", `the sandbox thread failed (${reason}); it was replaced`));
    this.retire(slot);
    if (!slot.ready) {
      // A thread that dies before it is ready would die again: say so rather than start threads for ever.
      const error = new SandboxThreadsUnavailable(reason);
      for (const job of this.queue.drain()) this.fail(job, error);
      return;
    }
    this.dispatch();
  }

  private retire(slot: Slot): void {
    if (slot.dead) return;
    slot.dead = true;
    clearTimeout(slot.watchdog);
    this.slots.delete(slot);
    const index = this.idle.indexOf(slot);
    if (index >= 0) this.idle.splice(index, 1);
    slot.thread.terminate();
  }

  /** The job is over for its caller: stop counting it against its run. */
  private release(job: Job): void {
    job.settled = true;
    clearTimeout(job.queuedTimer);
    if (job.onAbort) job.signal?.removeEventListener("abort", job.onAbort);
    if (job.slot) this.queue.finish(job);
  }

  private fail(job: Job, error: unknown): void {
    if (job.settled) return;
    this.release(job);
    job.reject(error);
  }
}
