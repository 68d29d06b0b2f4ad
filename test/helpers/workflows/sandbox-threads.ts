/**
 * Sandbox threads for the pool's tests under Node (vitest), which has no Web Workers: each is a
 * node:worker_threads worker running the real sandbox-thread.ts, loaded through tsx since Node does
 * not run TypeScript by itself.
 */
import { Worker } from "node:worker_threads";
import type { SpawnSandboxThread } from "../../../supabase/functions/_shared/workflows/sandbox/sandbox-threads.ts";
import type { FromSandboxThread } from "../../../supabase/functions/_shared/workflows/sandbox/sandbox-thread.ts";

const THREAD_MODULE = new URL("../../../supabase/functions/_shared/workflows/sandbox/sandbox-thread.ts", import.meta.url).href;

/** The worker's bootstrap: register tsx, then serve the pool on `parentPort`. */
const BOOT = `
const { parentPort } = require("node:worker_threads");
import("tsx/esm/api")
  .then(({ register }) => { register(); return import(${JSON.stringify(THREAD_MODULE)}); })
  .then(({ serveSandboxThread }) => {
    const port = { onmessage: null, postMessage: (message) => parentPort.postMessage(message) };
    serveSandboxThread(port);
    parentPort.on("message", (data) => port.onmessage?.({ data }));
  });
`;

/** Threads as node:worker_threads workers running sandbox-thread.ts. */
export function nodeWorkerThreads(): SpawnSandboxThread {
  return (events) => {
    const worker = new Worker(BOOT, { eval: true });
    worker.on("message", (message: FromSandboxThread) => events.message(message));
    worker.on("error", (error) => events.failure(error.message));
    worker.on("exit", (code) => events.failure(`exited with code ${code}`));
    return { post: (message) => worker.postMessage(message), terminate: () => void worker.terminate() };
  };
}
