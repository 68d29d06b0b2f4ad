/**
 * The sandbox for user code (Function blocks) and expressions (Condition blocks): QuickJS compiled
 * to WebAssembly (decisions, "Workflow service" item 3). Code never runs with `eval` or
 * `new Function` in the server's own engine. Each call gets a fresh QuickJS runtime with:
 *  - a time limit: an interrupt handler stops the interpreter at the deadline, so `while(true){}`
 *    ends with SANDBOX_TIMEOUT and the server keeps serving;
 *  - a memory limit enforced by QuickJS's allocator, so a memory bomb ends with
 *    SANDBOX_MEMORY_LIMIT instead of exhausting the host;
 *  - no host access: the runtime has only the ECMAScript built-ins plus a `console` that collects
 *    text. There is no `process`, `Deno`, `fetch`, `require`, module loader, file or network API.
 *
 * Values cross the boundary as JSON text in both directions, so no host object is ever reachable
 * from inside. The QuickJS module loads its .wasm file through `node:fs` both under Node (vitest)
 * and under Deno (which provides `process.versions.node` and `node:fs`), from the installed npm
 * package; it is loaded once per process, on first use.
 */
import { newQuickJSWASMModule, type QuickJSContext, type QuickJSHandle, type QuickJSWASMModule } from "quickjs-emscripten";
import { WorkflowError } from "./errors.ts";

/** What a piece of code is: a function body (may `return` and `await`) or a single expression. */
export type SandboxKind = "function" | "expression";

/** One call into the sandbox. */
export interface SandboxRequest {
  kind: SandboxKind;
  /** The code, with references already replaced by `__refs[i]` (see code-references.ts). */
  source: string;
  /** The values of `__refs`, passed as data. */
  values: readonly unknown[];
  /** Epoch milliseconds at which the code is stopped. */
  deadline: number;
  /** Heap limit for this call, in bytes. */
  memoryBytes: number;
}

/** What the code produced: its JSON-serialisable result and what it printed. */
export interface SandboxResult {
  value: unknown;
  stdout: string;
}

/** The sandbox as the executor sees it (tests may substitute their own). */
export interface Sandbox {
  run(request: SandboxRequest): Promise<SandboxResult>;
}

/** Default heap per call. */
export const DEFAULT_SANDBOX_MEMORY_BYTES = 32 * 1024 * 1024;
/**
 * Interpreter stack, which bounds recursion depth (about 1,000 plain calls). QuickJS's frames also
 * use the host engine's native stack, so a larger value lets deep recursion overflow the host
 * before QuickJS notices; 256 KiB stays well inside V8's default under Node and Deno alike.
 */
const STACK_BYTES = 256 * 1024;
/** Printed output kept per call; the rest is dropped with a marker. */
const MAX_STDOUT_CHARS = 64 * 1024;

let modulePromise: Promise<QuickJSWASMModule> | null = null;

function quickjs(): Promise<QuickJSWASMModule> {
  modulePromise ??= newQuickJSWASMModule().catch((error: unknown) => {
    modulePromise = null;
    throw error;
  });
  return modulePromise;
}

function wrap(kind: SandboxKind, source: string): string {
  // The wrapper starts on the code's first line, so line numbers in errors match what the user wrote.
  if (kind === "expression") return `(function (__refs) { return (${source}\n); })(JSON.parse(__refsJson))`;
  return `(async function (__refs) {${source}\n})(JSON.parse(__refsJson))`;
}

interface CodeErrorDetails {
  name: string;
  message: string;
  line?: number;
}

function errorDetails(vm: QuickJSContext, handle: QuickJSHandle): CodeErrorDetails {
  const dumped: unknown = vm.dump(handle);
  if (dumped !== null && typeof dumped === "object") {
    const record = dumped as { name?: unknown; message?: unknown; stack?: unknown };
    const line = typeof record.stack === "string" ? /:(\d+)(?::\d+)?\)?\s*$/m.exec(record.stack)?.[1] : undefined;
    return { name: String(record.name ?? "Error"), message: String(record.message ?? ""), ...(line ? { line: Number(line) } : {}) };
  }
  return { name: "Error", message: `uncaught ${typeof dumped === "string" ? JSON.stringify(dumped) : String(dumped)}` };
}

function failure(details: CodeErrorDetails, request: SandboxRequest): WorkflowError {
  if (details.name === "InternalError" && details.message === "interrupted") {
    return new WorkflowError("SANDBOX_TIMEOUT", "the code ran past its time limit and was stopped");
  }
  if (/out of memory/i.test(details.message)) {
    return new WorkflowError("SANDBOX_MEMORY_LIMIT", `the code ran past its memory limit (${Math.round(request.memoryBytes / 1024 / 1024)} MiB) and was stopped`);
  }
  const where = details.line !== undefined ? ` (line ${details.line})` : "";
  return new WorkflowError("BLOCK_FAILED", `${details.name}: ${details.message}${where}`);
}

function installConsole(vm: QuickJSContext, stdout: string[]): void {
  let length = 0;
  const consoleHandle = vm.newObject();
  for (const level of ["log", "info", "warn", "error", "debug"]) {
    const fn = vm.newFunction(level, (...args) => {
      if (length > MAX_STDOUT_CHARS) return;
      const line = args.map((arg) => (vm.typeof(arg) === "string" ? vm.getString(arg) : JSON.stringify(vm.dump(arg)) ?? String(vm.dump(arg)))).join(" ");
      length += line.length + 1;
      stdout.push(length > MAX_STDOUT_CHARS ? `${line.slice(0, Math.max(0, MAX_STDOUT_CHARS - (length - line.length)))}… [output truncated]` : line);
    });
    vm.setProp(consoleHandle, level, fn);
    fn.dispose();
  }
  vm.setProp(vm.global, "console", consoleHandle);
  consoleHandle.dispose();
}

/** Serialises a value inside the VM with its own JSON.stringify; `undefined` becomes null. */
function exportValue(vm: QuickJSContext, value: QuickJSHandle, request: SandboxRequest): unknown {
  const json = vm.getProp(vm.global, "JSON");
  const stringify = vm.getProp(json, "stringify");
  const result = vm.callFunction(stringify, json, value);
  stringify.dispose();
  json.dispose();
  if (result.error) {
    const details = errorDetails(vm, result.error);
    result.error.dispose();
    const error = failure(details, request);
    if (error.code !== "BLOCK_FAILED") throw error;
    throw new WorkflowError("BLOCK_FAILED", `the result could not be turned into JSON: ${details.message}`);
  }
  const text = vm.typeof(result.value) === "string" ? vm.getString(result.value) : undefined;
  result.value.dispose();
  return text === undefined ? null : JSON.parse(text);
}

/** Runs the code to an outcome: a result, or the WorkflowError describing why there is none. */
function evaluate(vm: QuickJSContext, request: SandboxRequest, stdout: string[]): SandboxResult {
  installConsole(vm, stdout);
  const refs = vm.newString(JSON.stringify(request.values));
  vm.setProp(vm.global, "__refsJson", refs);
  refs.dispose();
  const evaluated = vm.evalCode(wrap(request.kind, request.source), "code.js");
  if (evaluated.error) {
    const details = errorDetails(vm, evaluated.error);
    evaluated.error.dispose();
    throw failure(details, request);
  }
  let handle = evaluated.value;
  try {
    if (request.kind === "function") {
      // Settle the async wrapper: run queued jobs until none is left (the deadline still applies).
      const jobs = vm.runtime.executePendingJobs();
      if (jobs.error) {
        const details = errorDetails(vm, jobs.error);
        jobs.error.dispose();
        throw failure(details, request);
      }
      const state = vm.getPromiseState(handle);
      if (state.type === "pending") throw new WorkflowError("BLOCK_FAILED", "the code awaited something that never settles (there are no timers or network in the sandbox)");
      if (state.type === "rejected") {
        const details = errorDetails(vm, state.error);
        state.error.dispose();
        throw failure(details, request);
      }
      if (state.value !== handle) {
        handle.dispose();
        handle = state.value;
      }
    }
    return { value: exportValue(vm, handle, request), stdout: stdout.join("\n") };
  } finally {
    handle.dispose();
  }
}

function runIn(module: QuickJSWASMModule, request: SandboxRequest): SandboxResult {
  const runtime = module.newRuntime();
  runtime.setMemoryLimit(request.memoryBytes);
  runtime.setMaxStackSize(STACK_BYTES);
  runtime.setInterruptHandler(() => Date.now() > request.deadline);
  const vm = runtime.newContext();
  let outcome: { ok: true; result: SandboxResult } | { ok: false; error: unknown };
  try {
    outcome = { ok: true, result: evaluate(vm, request, []) };
  } catch (error) {
    outcome = { ok: false, error };
  }
  try {
    vm.dispose();
    runtime.dispose();
  } catch {
    // Some failures (a stack overflow inside async code) leave QuickJS unable to free the runtime
    // cleanly. The outcome is already known; only the engine instance must not be reused.
    modulePromise = null;
  }
  if (!outcome.ok) throw outcome.error;
  return outcome.result;
}

/** The QuickJS sandbox. A crash of the WebAssembly instance discards it; the next call loads a fresh one. */
export const quickjsSandbox: Sandbox = {
  async run(request) {
    if (Date.now() > request.deadline) throw new WorkflowError("SANDBOX_TIMEOUT", "the code had no time left to run");
    const module = await quickjs();
    try {
      return runIn(module, request);
    } catch (error) {
      if (error instanceof WorkflowError) throw error;
      // Anything else is the engine itself failing (for example a WebAssembly trap): never reuse it.
      modulePromise = null;
      throw new WorkflowError("BLOCK_FAILED", `the sandbox failed and was reset: ${error instanceof Error ? error.message : String(error)}`);
    }
  },
};
