/**
 * One Deno `Worker` per function, booted on its first request and reused for the next ones (the
 * CLI's `per_worker` policy). A worker is *retired* when the sources change, when a request on it
 * runs past the wall-clock limit, when it dies, or after it has been idle a while: retired workers
 * take no new requests and are terminated as soon as their last request settles, and the next
 * request boots a fresh one.
 */
import type { BootMessage, WorkerMessage } from "./protocol.ts";
import type { FunctionEntry } from "./registry.ts";

const WORKER_URL = new URL("./worker.ts", import.meta.url);

export class BootError extends Error {}

export class FunctionWorker {
  readonly worker: Worker;
  readonly ready: Promise<number>;
  /** Requests currently using this worker. */
  inFlight = 0;
  retired = false;
  dead = false;
  lastUsed = Date.now();
  private readonly failures = new Set<(reason: string) => void>();

  constructor(
    readonly entry: FunctionEntry,
    private readonly limitMs: number,
    private readonly log: (line: string) => void,
    egress: BootMessage["egress"],
  ) {
    const bootTimeoutMs = limitMs;
    this.worker = new Worker(WORKER_URL, { type: "module", name: entry.slug });
    this.ready = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new BootError(`did not start serving within ${bootTimeoutMs} ms`));
        this.retire("boot timeout");
      }, bootTimeoutMs);
      this.worker.onmessage = (event: MessageEvent<WorkerMessage>) => {
        const message = event.data;
        if (message.type === "ready") {
          clearTimeout(timer);
          resolve(message.port);
        } else if (message.type === "boot-error") {
          clearTimeout(timer);
          reject(new BootError(message.message));
          this.kill();
        } else if (message.type === "fatal") {
          this.fail(message.message);
        } else if (message.type === "background") {
          if (message.delta > 0) this.begin();
          else this.end();
        }
      };
      this.worker.onerror = (event: ErrorEvent) => {
        // Without preventDefault an uncaught error in a worker would take the whole host down.
        event.preventDefault();
        clearTimeout(timer);
        reject(new BootError(event.message));
        this.fail(event.message);
      };
      this.worker.onmessageerror = () => this.fail("unreadable message from worker");
    });
    // Rejections are consumed by whoever awaits `ready`; this keeps an unawaited one quiet.
    this.ready.catch(() => {});
    const boot: BootMessage = { type: "boot", slug: entry.slug, entrypoint: entry.entrypoint, egress };
    this.worker.postMessage(boot);
  }

  /** Called when the worker died: requests still on it are failed by their own fetch errors. */
  private fail(reason: string): void {
    if (this.dead) return;
    this.log(`worker for "${this.entry.slug}" died: ${reason.split("\n")[0]}`);
    for (const notify of this.failures) notify(reason);
    this.kill();
  }

  /** Registers a callback for the worker dying while a request is on it. */
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
    this.log(`retiring worker for "${this.entry.slug}": ${reason}`);
    if (this.inFlight === 0) this.kill();
    else setTimeout(() => this.kill(), this.limitMs);
  }

  kill(): void {
    this.retired = true;
    if (this.dead) return;
    this.dead = true;
    this.worker.terminate();
  }
}

export class WorkerPool {
  private readonly workers = new Map<string, FunctionWorker>();
  private readonly sweeper: ReturnType<typeof setInterval>;

  constructor(
    /** The wall-clock limit of a function: its boot timeout and a retired worker's grace period. */
    private readonly limitOf: (entry: FunctionEntry) => number,
    private readonly idleMs: number,
    private readonly log: (line: string) => void,
    private readonly egress: BootMessage["egress"],
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(30_000, Math.max(1_000, idleMs / 2)));
  }

  /** The live worker for this function, booting one when there is none or the entry moved. */
  acquire(entry: FunctionEntry): FunctionWorker {
    const current = this.workers.get(entry.slug);
    if (current && !current.retired && current.entry.entrypoint === entry.entrypoint) return current;
    current?.retire("replaced");
    const fresh = new FunctionWorker(entry, this.limitOf(entry), this.log, this.egress);
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
