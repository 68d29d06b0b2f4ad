/**
 * How the sandbox pool starts and talks to its threads, and the threads it uses under Deno: Web
 * Workers running sandbox-worker.ts (the pool's tests use node:worker_threads ones instead,
 * test/helpers/workflows/sandbox-threads.ts).
 */
import type { FromSandboxThread, ToSandboxThread } from "./sandbox-thread.ts";

/** A started thread, as the pool drives it. */
export interface SandboxThread {
  post(message: ToSandboxThread): void;
  terminate(): void;
}

/** What a thread reports to the pool. */
export interface SandboxThreadEvents {
  message(message: FromSandboxThread): void;
  /** The thread died or can no longer be used; `reason` says why. */
  failure(reason: string): void;
}

/** Starts a thread running sandbox-thread.ts (a Deno Web Worker, or a node:worker_threads one in tests). */
export type SpawnSandboxThread = (events: SandboxThreadEvents) => SandboxThread;

/** Threads as Deno Web Workers running sandbox-worker.ts. */
export function webWorkerThreads(): SpawnSandboxThread {
  const url = new URL("./sandbox-worker.ts", import.meta.url);
  return (events) => {
    const worker = new Worker(url, { type: "module", name: "workflow-sandbox" });
    worker.onmessage = (event: MessageEvent<FromSandboxThread>) => events.message(event.data);
    worker.onerror = (event: ErrorEvent) => {
      // Without preventDefault the error would travel up and end the function's own worker.
      event.preventDefault();
      events.failure(event.message || "an uncaught error");
    };
    worker.onmessageerror = () => events.failure("it sent a message that could not be read");
    return { post: (message) => worker.postMessage(message), terminate: () => worker.terminate() };
  };
}
