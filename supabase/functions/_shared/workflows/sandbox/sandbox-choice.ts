/**
 * Which sandbox runs user code when a run's caller names none (docs/workflow-limits.md, "Where user
 * code runs"). `WORKFLOW_SANDBOX` chooses; the default, `auto`, follows the runtime:
 *
 *  - `workers`: a pool of Web Workers off the request thread (sandbox-pool.ts), where `Worker`
 *    exists: the local functions host, which is plain Deno;
 *  - `function`: the `workflow-sandbox` function over HTTP (remote-sandbox.ts), under Deno without
 *    Web Workers: hosted Supabase Edge Functions and `supabase start`. A pool that cannot start its
 *    first thread falls back to it too;
 *  - `inline`: the calling thread (sandbox.ts), under Node: vitest and the in-process benchmark.
 *
 * The pool's size is `WORKFLOW_SANDBOX_WORKERS`, by default twice the cores (2 to 16): sandboxed
 * code is CPU-bound, but more threads than cores let a short call take turns with a long one
 * instead of queueing behind it, at the cost of one V8 isolate and one QuickJS heap each.
 */
import { readEnv } from "../../config/env.ts";
import { projectSandboxOptions, remoteSandbox } from "./remote-sandbox.ts";
import type { Sandbox } from "../core/sandbox-contract.ts";
import { inlineSandbox } from "./sandbox.ts";
import { SandboxPool, SandboxThreadsUnavailable } from "./sandbox-pool.ts";
import { webWorkerThreads } from "./sandbox-threads.ts";

/** Where user code runs. */
export type SandboxMode = "workers" | "function" | "inline";

const MODES: readonly SandboxMode[] = ["workers", "function", "inline"];

declare const Deno: unknown;

/** The mode `WORKFLOW_SANDBOX` asks for, or the one the runtime suits (see the module comment). */
export function sandboxMode(setting: string | undefined = readEnv("WORKFLOW_SANDBOX")): SandboxMode {
  const asked = setting?.trim().toLowerCase();
  if (asked && asked !== "auto") {
    if (!(MODES as readonly string[]).includes(asked)) throw new Error(`WORKFLOW_SANDBOX must be auto, ${MODES.join(", ")} (got "${setting}")`);
    return asked as SandboxMode;
  }
  if (typeof Deno === "undefined") return "inline";
  return typeof Worker === "function" ? "workers" : "function";
}

/** The pool's size: `WORKFLOW_SANDBOX_WORKERS`, else twice the `cores`, from 2 to 16. */
export function sandboxPoolSize(
  setting: string | undefined = readEnv("WORKFLOW_SANDBOX_WORKERS"),
  cores: number = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 1,
): number {
  if (setting !== undefined && setting.trim() !== "") {
    const size = Number(setting);
    if (!Number.isInteger(size) || size < 1 || size > 64) throw new Error(`WORKFLOW_SANDBOX_WORKERS must be a whole number from 1 to 64 (got "${setting}")`);
    return size;
  }
  return Math.min(16, Math.max(2, 2 * cores));
}

/** The worker pool, handing calls to the sandbox function for good once a thread cannot start. */
function workersFallingBackToFunction(): Sandbox {
  const pool = new SandboxPool({ size: sandboxPoolSize(), spawn: webWorkerThreads() });
  let fallback: Sandbox | null = null;
  return {
    async run(request) {
      if (fallback) return await fallback.run(request);
      try {
        return await pool.run(request);
      } catch (error) {
        if (!(error instanceof SandboxThreadsUnavailable)) throw error;
        fallback ??= remoteSandbox(projectSandboxOptions());
        return await fallback.run(request);
      }
    },
  };
}

let chosen: Sandbox | null = null;

/** The sandbox runs use by default, made once per function instance. */
export function defaultSandbox(): Sandbox {
  if (chosen) return chosen;
  const mode = sandboxMode();
  chosen = mode === "workers" ? workersFallingBackToFunction() : mode === "function" ? remoteSandbox(projectSandboxOptions()) : inlineSandbox;
  return chosen;
}
