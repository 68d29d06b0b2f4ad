/**
 * The inside of one sandbox worker thread: it takes calls one at a time from the pool
 * (sandbox-pool.ts), runs each in QuickJS (quickjs-runner.ts) and posts the outcome back. The
 * pool cancels a running call by writing to a shared memory cell that the interpreter's interrupt
 * handler reads, so a cancellation reaches code that never yields. The thread itself has no other
 * job: whatever the code does, only this thread is busy.
 */
import { DEFAULT_SANDBOX_MEMORY_BYTES } from "../core/sandbox-contract.ts";
import { loadQuickJS, moduleFor, runQuickJS, type SandboxCall, type SandboxOutcome, type SizedModule } from "./quickjs-runner.ts";

/** Messages from the pool to a thread. */
export type ToSandboxThread =
  /** First message: the shared cell (an Int32Array's buffer) the pool sets to 1 to stop the running call. */
  | { type: "init"; control: SharedArrayBuffer | null }
  | { type: "run"; id: number; call: SandboxCall };

/**
 * Messages from a thread to the pool: `ready` once its engine has loaded (a call sent before would
 * spend its own time limit on the thread's start), then `done` for each call.
 */
export type FromSandboxThread =
  | { type: "ready" }
  | { type: "done"; id: number; outcome: SandboxOutcome };

/** What a thread needs of its host: the Web Worker global scope, or an adapter of node:worker_threads. */
export interface SandboxThreadPort {
  onmessage: ((event: { data: ToSandboxThread }) => void) | null;
  postMessage(message: FromSandboxThread): void;
}

/** Serves calls from the pool on `port` until the thread is terminated. */
export function serveSandboxThread(port: SandboxThreadPort): void {
  let control: Int32Array | null = null;
  let sized: SizedModule | null = null;

  async function run(id: number, call: SandboxCall): Promise<void> {
    let outcome: SandboxOutcome;
    try {
      sized = moduleFor(sized, call.memoryBytes);
      const loaded = await sized.module;
      outcome = runQuickJS(loaded, call, () => {
        if (control !== null && Atomics.load(control, 0) !== 0) return "cancelled";
        return Date.now() > call.deadline ? "timeout" : null;
      });
    } catch (error) {
      outcome = { ok: false, code: "BLOCK_FAILED", message: `the sandbox could not start: ${error instanceof Error ? error.message : String(error)}`, resetEngine: true };
    }
    port.postMessage({ type: "done", id, outcome });
  }

  port.onmessage = ({ data }) => {
    if (data.type === "init") {
      control = data.control ? new Int32Array(data.control) : null;
      // Most calls use the default limit: have its module ready before the first arrives.
      sized ??= loadQuickJS(DEFAULT_SANDBOX_MEMORY_BYTES);
      // A failed load is reported by the first call that needs the module, so the thread is ready either way.
      const ready = () => port.postMessage({ type: "ready" });
      sized.module.then(ready, ready);
    } else {
      void run(data.id, data.call);
    }
  };
}
