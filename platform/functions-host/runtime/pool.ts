/**
 * One Deno `Worker` per function, booted on its first request and reused for the next ones (the
 * CLI's `per_worker` policy). A worker is *retired* when the sources change, when a request on it
 * runs past the wall-clock limit, or after it has been idle a while: retired workers take no new
 * requests and are terminated as soon as their last request settles, and the next request boots a
 * fresh one. A worker *fails* when it cannot boot, throws an uncaught error, exits or stops
 * answering: it is terminated at once, the requests waiting for it to boot get a BootError and those
 * in flight on it are failed, and one log line says which function and why.
 */
import { Exchange } from "./exchange.ts";
import type { Logger } from "../../log/logger.ts";
import type { BootMessage, ExchangeHostMessage, WorkerMessage } from "./protocol.ts";
import type { FunctionEntry } from "./registry.ts";

const WORKER_URL = new URL("./worker.ts", import.meta.url);

/** The worker could not start serving; the reason is the message. */
export class BootError extends Error {}

/** Where a worker's lines go (the host's structured logger). */
export type WorkerLog = Logger;

export class FunctionWorker {
  readonly worker: Worker;
  /** Settles once the function has registered its handler; rejects with a BootError when it never will. */
  readonly ready: Promise<void>;
  /** Requests (and EdgeRuntime.waitUntil tasks) currently using this worker. */
  inFlight = 0;
  retired = false;
  dead = false;
  lastUsed = Date.now();
  /** Settles once the worker is terminated, for whatever reason. */
  readonly gone: Promise<void>;
  private markGone: () => void = () => {};
  /** The function has registered its handler (`ready` has settled successfully). */
  serving = false;
  private rejectReady: (error: BootError) => void = () => {};
  private readonly bootTimer: ReturnType<typeof setTimeout>;
  private readonly failures = new Set<(reason: string) => void>();
  /** Requests posted to the worker and not yet settled, by id. */
  private readonly exchanges = new Map<number, Exchange>();
  private nextExchangeId = 1;

  constructor(
    readonly entry: FunctionEntry,
    private readonly limitMs: number,
    private readonly log: WorkerLog,
    egress: BootMessage["egress"],
    listen: BootMessage["listen"],
  ) {
    this.gone = new Promise((resolve) => (this.markGone = resolve));
    this.worker = new Worker(WORKER_URL, { type: "module", name: entry.slug });
    this.bootTimer = setTimeout(() => this.fail(`did not start serving within ${limitMs} ms`), limitMs);
    this.ready = new Promise<void>((resolve, reject) => {
      this.rejectReady = reject;
      this.worker.onmessage = (event: MessageEvent<WorkerMessage>) => {
        const message = event.data;
        if ("id" in message) {
          this.exchanges.get(message.id)?.receive(message);
          return;
        }
        switch (message.type) {
          case "ready":
            clearTimeout(this.bootTimer);
            this.serving = true;
            resolve();
            break;
          case "boot-error":
            this.fail(`boot error: ${message.message}`);
            break;
          case "fatal":
            this.fail(message.message);
            break;
          case "exit":
            this.fail(`exited with code ${message.code}`);
            break;
          case "background":
            if (message.delta > 0) this.begin();
            else this.end();
            break;
        }
      };
      this.worker.onerror = (event: ErrorEvent) => {
        // Without preventDefault an uncaught error in a worker would take the whole host down.
        event.preventDefault();
        const rejection = /^Uncaught \(in promise\) /.test(event.message);
        const where = event.filename ? ` (at ${event.filename}:${event.lineno}:${event.colno})` : "";
        this.fail(`${rejection ? "unhandled rejection" : "uncaught error"}: ${event.message.replace(/^Uncaught (\(in promise\) )?/, "")}${where}`);
      };
      this.worker.onmessageerror = () => this.fail("sent a message the host cannot read");
    });
    // Rejections are consumed by whoever awaits `ready`; this keeps an unawaited one quiet.
    this.ready.catch(() => {});
    const boot: BootMessage = { type: "boot", slug: entry.slug, entrypoint: entry.entrypoint, egress, listen };
    this.worker.postMessage(boot);
  }

  /** A new request to this worker; `onSettled` runs once it is answered, fails or is aborted. */
  exchange(onSettled: () => void): Exchange {
    const id = this.nextExchangeId++;
    const post = (message: ExchangeHostMessage, transfer: ArrayBuffer[] = []) => {
      if (!this.dead) this.worker.postMessage(message, transfer);
    };
    const exchange = new Exchange(id, post, () => {
      this.exchanges.delete(id);
      onSettled();
    });
    this.exchanges.set(id, exchange);
    return exchange;
  }

  /**
   * The worker is gone or unusable: logs one line with the reason, fails whoever waits for it
   * (a BootError before it serves, the failure callbacks after) and terminates it.
   */
  fail(reason: string): void {
    if (this.dead) return;
    // A reason from the worker may carry the error's stack after its first line.
    const [headline, ...stack] = reason.split("\n");
    this.log.error("function worker failed", {
      function: this.entry.slug,
      phase: this.serving ? "serving" : "boot",
      reason: headline,
      inFlight: this.inFlight,
      ...(stack.length > 0 ? { stack: stack.map((line) => line.trim()).join("\n") } : {}),
    });
    if (this.serving) {
      for (const notify of this.failures) notify(headline);
    } else {
      this.rejectReady(new BootError(headline));
    }
    this.kill();
  }

  /** Registers a callback for the worker failing while it serves a request. */
  onFailure(callback: (reason: string) => void): () => void {
    this.failures.add(callback);
    return () => this.failures.delete(callback);
  }

  begin(): void {
    this.inFlight += 1;
    this.lastUsed = Date.now();
  }

  end(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.lastUsed = Date.now();
    if (this.retired && this.inFlight === 0) this.kill();
  }

  /** No new requests; terminated once its requests and background tasks settle, or after the limit. */
  retire(reason: string): void {
    if (this.retired) return;
    this.retired = true;
    this.log.info("retiring function worker", { function: this.entry.slug, reason });
    if (this.inFlight === 0) this.kill();
    else setTimeout(() => this.kill(), this.limitMs);
  }

  /** Retires a worker a request has given up on (past its wall-clock limit), saying so once. */
  exceeded(reason: string): void {
    if (this.retired) return;
    this.log.error("function worker failed", { function: this.entry.slug, phase: this.serving ? "serving" : "boot", reason, inFlight: this.inFlight });
    this.retire(reason);
  }

  /** Terminates the worker; anyone still waiting for it to boot is told it never will. */
  kill(): void {
    this.retired = true;
    if (this.dead) return;
    this.dead = true;
    clearTimeout(this.bootTimer);
    if (!this.serving) this.rejectReady(new BootError("it was stopped before it started serving"));
    this.worker.terminate();
    // Requests still open on it (a retired worker's grace period ran out) end with it.
    for (const exchange of this.exchanges.values()) exchange.abort(new Error("the worker was stopped"), false);
    this.markGone();
  }
}

export class WorkerPool {
  private readonly workers = new Map<string, FunctionWorker>();
  private readonly sweeper: ReturnType<typeof setInterval>;

  constructor(
    /** The wall-clock limit of a function: its boot timeout and a retired worker's grace period. */
    private readonly limitOf: (entry: FunctionEntry) => number,
    private readonly idleMs: number,
    private readonly log: WorkerLog,
    private readonly egress: BootMessage["egress"],
    private readonly listen: BootMessage["listen"],
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(30_000, Math.max(1_000, idleMs / 2)));
  }

  /** The live worker for this function, booting one when there is none or the entry moved. */
  acquire(entry: FunctionEntry): FunctionWorker {
    const current = this.workers.get(entry.slug);
    if (current && !current.retired && current.entry.entrypoint === entry.entrypoint) return current;
    current?.retire("replaced");
    const fresh = new FunctionWorker(entry, this.limitOf(entry), this.log, this.egress, this.listen);
    this.workers.set(entry.slug, fresh);
    return fresh;
  }

  /** Retires every worker (the sources changed). */
  retireAll(reason: string): void {
    for (const worker of this.workers.values()) worker.retire(reason);
    this.workers.clear();
  }

  private sweep(): void {
    const now = Date.now();
    for (const [slug, worker] of this.workers) {
      if (worker.retired) {
        this.workers.delete(slug);
      } else if (worker.inFlight === 0 && now - worker.lastUsed > this.idleMs) {
        worker.retire("idle");
        this.workers.delete(slug);
      }
    }
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const worker of this.workers.values()) worker.kill();
    this.workers.clear();
  }
}
