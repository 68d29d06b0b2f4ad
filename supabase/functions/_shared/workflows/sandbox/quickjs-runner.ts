/**
 * One call of user code in QuickJS compiled to WebAssembly (decisions, "Workflow service" item 3),
 * synchronously, on whatever thread calls it: a sandbox worker of the pool (sandbox-pool.ts), the
 * `workflow-sandbox` function (remote-sandbox.ts) or, under Node, the caller itself
 * (sandbox.ts). Code never runs with `eval` or `new Function` in the host's engine. Each call gets a
 * fresh QuickJS runtime with:
 *  - a stop check: an interrupt handler asks `stopReason()` as the interpreter runs, so
 *    `while(true){}` ends at the deadline (SANDBOX_TIMEOUT) or when the run is cancelled
 *    (CANCELLED);
 *  - a memory limit, so a memory bomb ends with SANDBOX_MEMORY_LIMIT instead of exhausting the
 *    host. QuickJS's own limit is set, but in this WebAssembly build (no malloc_usable_size) it
 *    counts allocations rather than their bytes, and an ArrayBuffer's bytes escaped it. The hard
 *    bound is the module's WebAssembly memory, which cannot grow past the call's limit plus the
 *    engine's base (see loadQuickJS); an allocation past it fails as "out of memory";
 *  - no host access: only the ECMAScript built-ins plus a `console` that collects text. There is no
 *    `process`, `Deno`, `fetch`, `require`, module loader, file or network API.
 *
 * Values cross the boundary as JSON text in both directions, so no host object is ever reachable
 * from inside, and the outcome is plain data that can be posted to another thread or sent over HTTP.
 */
import { newQuickJSWASMModule, newVariant, RELEASE_SYNC, type QuickJSContext, type QuickJSHandle, type QuickJSWASMModule } from "quickjs-emscripten";
import type { WorkflowErrorCode } from "../core/errors.ts";
import { describeChars } from "../core/limits.ts";
import type { SandboxKind } from "../core/sandbox-contract.ts";

/** One call as it travels to wherever the code runs: plain data only. */
export interface SandboxCall {
  kind: SandboxKind;
  /** The code, with references already replaced by `__refs[i]` (see code-references.ts). */
  source: string;
  /** The values of `__refs`, as JSON text (they are data, never code). */
  valuesJson: string;
  /** Epoch milliseconds at which the code is stopped. */
  deadline: number;
  /** Heap limit for this call, in bytes. */
  memoryBytes: number;
  /** Longest JSON text the result may have; a longer one fails with OUTPUT_TOO_LARGE. */
  maxResultChars: number;
}

/** How a call ended, as plain data. `resetEngine` says the WebAssembly instance must not be reused. */
export type SandboxOutcome =
  | { ok: true; resultJson: string; stdout: string; resetEngine?: boolean }
  | { ok: false; code: WorkflowErrorCode; message: string; resetEngine?: boolean };

/** Why the interpreter should stop now, or null to let it run. */
export type StopCheck = () => "timeout" | "cancelled" | null;

/**
 * Interpreter stack, which bounds recursion depth (about 1,000 plain calls). QuickJS's frames also
 * use the host engine's native stack, so a larger value lets deep recursion overflow the host
 * before QuickJS notices; 256 KiB stays well inside V8's default under Node and Deno, in a worker
 * thread too.
 */
const STACK_BYTES = 256 * 1024;
/** Printed output kept per call; the rest is dropped with a marker. */
export const MAX_STDOUT_CHARS = 64 * 1024;

/** A WebAssembly memory page. */
const PAGE_BYTES = 64 * 1024;
/** The memory the QuickJS build starts with (256 pages, its declared minimum). */
export const ENGINE_BASE_BYTES = 16 * 1024 * 1024;

/** A loaded module and the per-call memory limit its WebAssembly memory was sized for. */
export interface SizedModule {
  memoryBytes: number;
  module: Promise<QuickJSWASMModule>;
}

/**
 * Loads the QuickJS WebAssembly module (from the installed npm package, through `node:fs`) with a
 * memory that may grow to `memoryBytes` past the engine's base and no further. Memory a finished
 * call freed is reused by the next, so one module serves every call with the same limit.
 */
export function loadQuickJS(memoryBytes: number): SizedModule {
  const memory = new WebAssembly.Memory({
    initial: ENGINE_BASE_BYTES / PAGE_BYTES,
    maximum: Math.ceil((ENGINE_BASE_BYTES + memoryBytes) / PAGE_BYTES),
  });
  return { memoryBytes, module: newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmMemory: memory })) };
}

/** `current` when its memory was sized for `memoryBytes`, otherwise a module sized for it. */
export function moduleFor(current: SizedModule | null, memoryBytes: number): SizedModule {
  return current?.memoryBytes === memoryBytes ? current : loadQuickJS(memoryBytes);
}

/** A failure of the user's code, as an outcome rather than an exception. */
class CodeFailure {
  constructor(readonly code: WorkflowErrorCode, readonly message: string) {}
}

function wrap(kind: SandboxKind, source: string): string {
  // The wrapper starts on the code's first line, so line numbers in errors match what the user wrote.
  // The expression sits in an array so that a call ending it is no tail call, which QuickJS would
  // place at `return` instead of at the call (calleeAt needs the call's own column).
  if (kind === "expression") return `(function (__refs) { return [(${source}\n)][0]; })(JSON.parse(__refsJson))`;
  return `(async function (__refs) {${source}\n})(JSON.parse(__refsJson))`;
}

interface CodeErrorDetails {
  name: string;
  message: string;
  line?: number;
  /** Where the innermost frame is the user's code (not a built-in): its column there. */
  column?: number;
}

function errorDetails(vm: QuickJSContext, handle: QuickJSHandle): CodeErrorDetails {
  const dumped: unknown = vm.dump(handle);
  if (dumped !== null && typeof dumped === "object") {
    const record = dumped as { name?: unknown; message?: unknown; stack?: unknown };
    const stack = typeof record.stack === "string" ? record.stack : "";
    const line = /:(\d+)(?::\d+)?\)?\s*$/m.exec(stack)?.[1];
    const top = /^\s*at [^\n]*\(code\.js:\d+:(\d+)\)/.exec(stack)?.[1];
    return { name: String(record.name ?? "Error"), message: String(record.message ?? ""), ...(line ? { line: Number(line) } : {}), ...(top ? { column: Number(top) } : {}) };
  }
  return { name: "Error", message: `uncaught ${typeof dumped === "string" ? JSON.stringify(dumped) : String(dumped)}` };
}

const CALLEE_WORD = /[A-Za-z0-9_$]/;
/** Longest callee named in a message; a longer one is not named at all. */
const MAX_CALLEE_CHARS = 120;

/**
 * The expression called at `column` (1-based, where QuickJS puts the call's `(`) of `lineText`:
 * the member chain before it (`items.reduce`, `a[0].f`, `make().run`, `obj?.fn`), as written, or
 * null when there is none to name. QuickJS says only "not a function"; Node and Deno name the
 * callee, and so does this.
 */
export function calleeAt(lineText: string, column: number): string | null {
  let end = column - 1;
  if (lineText[end] !== "(") return null;
  while (end > 0 && /\s/.test(lineText[end - 1])) end--;
  if (lineText.slice(end - 2, end) === "?.") end -= 2;
  let at = end;
  for (;;) {
    const before = at;
    while (at > 0 && CALLEE_WORD.test(lineText[at - 1])) at--;
    if (at === before && (lineText[at - 1] === "]" || lineText[at - 1] === ")")) {
      // A balanced group: an index or the arguments of an earlier call.
      let depth = 0;
      do {
        const char = lineText[--at];
        if (char === "]" || char === ")") depth++;
        else if (char === "[" || char === "(") depth--;
      } while (at > 0 && depth > 0);
      if (depth > 0) return null;
      continue;
    }
    if (at === before) break;
    // A word continues the chain only after a dot (`a.b`, `a?.b`); anything else starts it.
    if (lineText[at - 1] !== ".") break;
    at -= lineText.slice(at - 2, at) === "?." ? 2 : 1;
  }
  const callee = lineText.slice(at, end).trim();
  if (callee === "" || /^[.?]/.test(callee) || callee.length > MAX_CALLEE_CHARS) return null;
  return callee;
}

function memoryLimitFailure(call: SandboxCall): CodeFailure {
  return new CodeFailure("SANDBOX_MEMORY_LIMIT", `the code ran past its memory limit (${Math.round(call.memoryBytes / 1024 / 1024)} MiB) and was stopped`);
}

/** Whether the module's memory has grown to (all but) its maximum. */
function memoryExhausted(module: QuickJSWASMModule, call: SandboxCall): boolean {
  const maximum = Math.ceil((ENGINE_BASE_BYTES + call.memoryBytes) / PAGE_BYTES) * PAGE_BYTES;
  return module.getWasmMemory().buffer.byteLength > maximum - 1024 * 1024;
}

function failure(details: CodeErrorDetails, call: SandboxCall, stopped: "timeout" | "cancelled" | null): CodeFailure {
  // Once the interrupt handler has stopped the code, whatever error follows is that stop's doing
  // (an interrupted job queue can surface as a TypeError or as a promise left pending).
  if (stopped !== null) {
    if (stopped === "cancelled") return new CodeFailure("CANCELLED", "the run was cancelled while the code ran, and the code was stopped");
    return new CodeFailure("SANDBOX_TIMEOUT", "the code ran past its time limit and was stopped");
  }
  if (/out of memory/i.test(details.message)) return memoryLimitFailure(call);
  const where = details.line !== undefined ? ` (line ${details.line})` : "";
  let message = details.message;
  if (details.name === "TypeError" && message === "not a function" && details.line !== undefined && details.column !== undefined) {
    const callee = calleeAt(wrap(call.kind, call.source).split("\n")[details.line - 1] ?? "", details.column);
    if (callee !== null) message = `${callee} is not a function`;
  }
  return new CodeFailure("BLOCK_FAILED", `${details.name}: ${message}${where}`);
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

/** Serialises a value inside the VM with its own JSON.stringify; `undefined` becomes `null`. */
function exportJson(vm: QuickJSContext, value: QuickJSHandle, call: SandboxCall, stopped: () => "timeout" | "cancelled" | null): string {
  const json = vm.getProp(vm.global, "JSON");
  const stringify = vm.getProp(json, "stringify");
  const result = vm.callFunction(stringify, json, value);
  stringify.dispose();
  json.dispose();
  if (result.error) {
    const details = errorDetails(vm, result.error);
    result.error.dispose();
    const error = failure(details, call, stopped());
    if (error.code !== "BLOCK_FAILED") throw error;
    throw new CodeFailure("BLOCK_FAILED", `the result could not be turned into JSON: ${details.message}`);
  }
  const text = vm.typeof(result.value) === "string" ? vm.getString(result.value) : undefined;
  result.value.dispose();
  if (text === undefined) return "null";
  if (text.length > call.maxResultChars) {
    throw new CodeFailure("OUTPUT_TOO_LARGE", `its result is ${text.length.toLocaleString("en")} characters of JSON, larger than the budget of ${describeChars(call.maxResultChars)} for one block's output`);
  }
  return text;
}

/** Runs the code to an outcome: its JSON result, or the CodeFailure describing why there is none. */
function evaluate(vm: QuickJSContext, call: SandboxCall, stdout: string[], stopped: () => "timeout" | "cancelled" | null): string {
  installConsole(vm, stdout);
  const refs = vm.newString(call.valuesJson);
  vm.setProp(vm.global, "__refsJson", refs);
  refs.dispose();
  const evaluated = vm.evalCode(wrap(call.kind, call.source), "code.js");
  if (evaluated.error) {
    const details = errorDetails(vm, evaluated.error);
    evaluated.error.dispose();
    throw failure(details, call, stopped());
  }
  let handle = evaluated.value;
  try {
    if (call.kind === "function") {
      // Settle the async wrapper: run queued jobs until none is left (the stop check still applies).
      const jobs = vm.runtime.executePendingJobs();
      if (jobs.error) {
        const details = errorDetails(vm, jobs.error);
        jobs.error.dispose();
        throw failure(details, call, stopped());
      }
      const state = vm.getPromiseState(handle);
      if (state.type === "pending" && stopped() !== null) throw failure({ name: "InternalError", message: "interrupted" }, call, stopped());
      if (state.type === "pending") throw new CodeFailure("BLOCK_FAILED", "the code awaited something that never settles (there are no timers or network in the sandbox)");
      if (state.type === "rejected") {
        const details = errorDetails(vm, state.error);
        state.error.dispose();
        throw failure(details, call, stopped());
      }
      if (state.value !== handle) {
        handle.dispose();
        handle = state.value;
      }
    }
    return exportJson(vm, handle, call, stopped);
  } finally {
    handle.dispose();
  }
}

/**
 * Runs one call in a fresh runtime of `module`. Never throws: a failure of the code is an outcome,
 * and so is a failure of QuickJS itself (a WebAssembly trap), which also asks for a fresh engine.
 */
export function runQuickJS(module: QuickJSWASMModule, call: SandboxCall, stopReason: StopCheck): SandboxOutcome {
  if (Date.now() > call.deadline) return { ok: false, code: "SANDBOX_TIMEOUT", message: "the code had no time left to run" };
  let stopped: "timeout" | "cancelled" | null = null;
  let outcome: SandboxOutcome;
  const startBytes = module.getWasmMemory().buffer.byteLength;
  let resetEngine = false;
  try {
    const runtime = module.newRuntime();
    runtime.setMemoryLimit(call.memoryBytes);
    runtime.setMaxStackSize(STACK_BYTES);
    runtime.setInterruptHandler(() => {
      stopped ??= stopReason();
      return stopped !== null;
    });
    const vm = runtime.newContext();
    const stdout: string[] = [];
    try {
      outcome = { ok: true, resultJson: evaluate(vm, call, stdout, () => stopped), stdout: stdout.join("\n") };
    } catch (error) {
      if (!(error instanceof CodeFailure)) throw error;
      // A memory this call grew to its maximum leaves QuickJS unable to allocate even the "out of
      // memory" error, so it throws null instead: the failure is the memory limit all the same.
      const grewToLimit = module.getWasmMemory().buffer.byteLength > startBytes && memoryExhausted(module, call);
      const cause = error.code === "BLOCK_FAILED" && grewToLimit ? memoryLimitFailure(call) : error;
      outcome = { ok: false, code: cause.code, message: cause.message };
    }
    try {
      vm.dispose();
      runtime.dispose();
    } catch {
      // Some failures (a stack overflow inside async code) leave QuickJS unable to free the runtime
      // cleanly. The outcome is already known; only the engine instance must not be reused.
      resetEngine = true;
    }
  } catch (error) {
    // Anything else is the engine itself failing (for example a WebAssembly trap): never reuse it.
    return { ok: false, code: "BLOCK_FAILED", message: `the sandbox failed and was reset: ${error instanceof Error ? error.message : String(error)}`, resetEngine: true };
  }
  // WebAssembly memory never shrinks: a module this call filled goes, so that at the start of every
  // call the memory is below its last megabyte, and filling it means this call used it.
  if ((!outcome.ok && outcome.code === "SANDBOX_MEMORY_LIMIT") || memoryExhausted(module, call)) resetEngine = true;
  return resetEngine ? { ...outcome, resetEngine } : outcome;
}
