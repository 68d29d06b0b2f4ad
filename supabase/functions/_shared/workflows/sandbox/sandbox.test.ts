import { describe, expect, it } from "vitest";
import { WorkflowError } from "../core/errors.ts";
import { calleeAt } from "./quickjs-runner.ts";
import { DEFAULT_SANDBOX_MEMORY_BYTES, type SandboxKind } from "../core/sandbox-contract.ts";
import { inlineSandbox } from "./sandbox.ts";

function run(source: string, options: { kind?: SandboxKind; values?: unknown[]; refs?: string[]; timeoutMs?: number; memoryBytes?: number } = {}) {
  return inlineSandbox.run({
    kind: options.kind ?? "function",
    source,
    values: options.values ?? [],
    refs: options.refs,
    deadline: Date.now() + (options.timeoutMs ?? 2_000),
    memoryBytes: options.memoryBytes ?? DEFAULT_SANDBOX_MEMORY_BYTES,
  });
}

async function failureOf(promise: Promise<unknown>): Promise<WorkflowError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WorkflowError);
  return error as WorkflowError;
}

describe("calleeAt", () => {
  it("reads the member chain before the call's parenthesis", () => {
    const at = (line: string) => calleeAt(line, line.indexOf("(", line.indexOf("@")) + 1);
    expect(at("return @items.reduce((a, b) => a + b, 0);".replace("@", ""))).toBe("items.reduce");
    expect(calleeAt("x = a[0].run (1)", 14)).toBe("a[0].run");
    expect(calleeAt("x = make().run(1)", 15)).toBe("make().run");
    expect(calleeAt("x = obj?.fn?.(1)", 14)).toBe("obj?.fn");
    expect(calleeAt("x = go(1)", 7)).toBe("go");
    expect(calleeAt("x = 1 + (2)", 9)).toBeNull();
    expect(calleeAt("no call here", 3)).toBeNull();
  });
});

describe("the QuickJS sandbox", () => {
  it("names what was called when it is not a function, as Node and Deno do, in the user's terms", async () => {
    const own = await failureOf(run("const items = { a: 1 };\nreturn items.reduce((sum, n) => sum + n, 0);"));
    expect(own.message).toBe("TypeError: items.reduce is not a function (line 2)");
    const referenced = await failureOf(run("return __refs[0].reduce((sum, n) => sum + n, 0);", { values: [{ a: 1 }], refs: ["<api.items>"] }));
    expect(referenced.message).toBe("TypeError: <api.items>.reduce is not a function (line 1)");
    const expression = await failureOf(run("__refs[0].startsWith('a')", { kind: "expression", values: [7], refs: ["<api.code>"] }));
    expect(expression.message).toBe("TypeError: <api.code>.startsWith is not a function (line 1)");
    // A built-in calling an argument that is not a function: QuickJS's own words stand.
    expect((await failureOf(run("return [1].map(1);"))).message).toBe("TypeError: not a function (line 1)");
  });

  it("runs a function body and returns its JSON result", async () => {
    const result = await run("const total = __refs[0].reduce((sum, n) => sum + n, 0);\nreturn { total, label: __refs[1] };", { values: [[1, 2, 3], "sum"] });
    expect(result.value).toEqual({ total: 6, label: "sum" });
  });

  it("lets a function body await promises", async () => {
    const result = await run("const value = await Promise.resolve(21);\nreturn value * 2;");
    expect(result.value).toBe(42);
  });

  it("evaluates an expression", async () => {
    const result = await run("__refs[0] >= 18 && __refs[1] === 'pro'", { kind: "expression", values: [20, "pro"] });
    expect(result.value).toBe(true);
  });

  it("turns undefined into null and collects console output", async () => {
    const result = await run("console.log('hello', { a: 1 }); console.error(2);");
    expect(result.value).toBeNull();
    expect(result.stdout).toBe('hello {"a":1}\n2');
  });

  it("keeps data as data: a string that looks like code is not executed", async () => {
    const result = await run("return __refs[0];", { values: ['"); while(true){} //'] });
    expect(result.value).toBe('"); while(true){} //');
  });

  it("stops an endless loop at the deadline and reports it", async () => {
    const started = Date.now();
    const error = await failureOf(run("while (true) {}", { timeoutMs: 150 }));
    expect(error.code).toBe("SANDBOX_TIMEOUT");
    expect(error.message).toMatch(/time limit/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("stops a memory bomb at the memory limit", async () => {
    // A generous time limit: on a busy machine filling 8 MiB can take more than the default 2 s.
    const error = await failureOf(run("const hoard = []; while (true) hoard.push({ n: hoard.length, text: 'x' + hoard.length });", { memoryBytes: 8 * 1024 * 1024, timeoutMs: 20_000 }));
    expect(error.code).toBe("SANDBOX_MEMORY_LIMIT");
  });

  it("holds typed arrays to the memory limit, counting their bytes, and runs the next call afresh", async () => {
    // 24 MiB of arrays fit a 64 MiB limit and not an 8 MiB one (plus the engine's 16 MiB base).
    const source = "const items = []; for (let i = 0; i < 384; i++) items.push(new Float64Array(8192)); return items.length;";
    expect((await run(source, { memoryBytes: 64 * 1024 * 1024 })).value).toBe(384);
    expect((await failureOf(run(source, { memoryBytes: 8 * 1024 * 1024 }))).code).toBe("SANDBOX_MEMORY_LIMIT");
    expect((await run("return 2 + 2;", { memoryBytes: 8 * 1024 * 1024 })).value).toBe(4);
  });

  it("tells a memory bomb from the ordinary failure of a call that waited for the same engine", async () => {
    // Both calls wait for a module of a limit no other test uses; the bomb runs first and breaks it.
    const options = { memoryBytes: 12 * 1024 * 1024 };
    const bomb = failureOf(run("const items = []; while (true) items.push(new Float64Array(8192));", options));
    const ordinary = failureOf(run("return { toJSON() { throw new Error('no'); } };", options));
    expect([(await bomb).code, (await ordinary).code]).toEqual(["SANDBOX_MEMORY_LIMIT", "BLOCK_FAILED"]);
  });

  it("stops a huge string allocation at the memory limit", async () => {
    const error = await failureOf(run("return 'x'.repeat(64 * 1024 * 1024).length;", { memoryBytes: 8 * 1024 * 1024 }));
    expect(["SANDBOX_MEMORY_LIMIT", "BLOCK_FAILED"]).toContain(error.code);
  });

  it("reports a microtask loop stopped at the deadline as a timeout, not as a promise that never settles", async () => {
    const error = await failureOf(run("for (;;) await null;", { timeoutMs: 200 }));
    expect(error.code).toBe("SANDBOX_TIMEOUT");
  });

  it("reports runaway recursion as a block failure", async () => {
    const error = await failureOf(run("function f() { return f() + 1; } return f();"));
    expect(error.code).toBe("BLOCK_FAILED");
    expect(error.message).toMatch(/stack/i);
  });

  it.each([
    ["process", "return process.env;"],
    ["require", "return require('fs');"],
    ["Deno", "return Deno.env.toObject();"],
    ["fetch", "return await fetch('http://example.com');"],
    ["the Function constructor", "return (function(){}).constructor('return process')().env;"],
    ["a dynamic import", "return await import('node:fs');"],
    ["timers", "return await new Promise((resolve) => setTimeout(resolve, 1));"],
  ])("refuses a sandbox escape through %s", async (_name, source) => {
    const error = await failureOf(run(source));
    expect(error.code).toBe("BLOCK_FAILED");
  });

  it("sees nothing of the host's globals", async () => {
    const result = await run("return Object.getOwnPropertyNames(globalThis).filter((name) => /process|Deno|require|fetch|WebAssembly|__refsJson$/.test(name));");
    expect(result.value).toEqual(["__refsJson"]);
  });

  it("reports a thrown error with its name, message and line", async () => {
    const error = await failureOf(run("const a = 1;\nthrow new TypeError('bad input');"));
    expect(error.code).toBe("BLOCK_FAILED");
    expect(error.message).toBe("TypeError: bad input (line 2)");
  });

  it("reports a syntax error", async () => {
    const error = await failureOf(run("return {;"));
    expect(error.message).toMatch(/^SyntaxError/);
  });

  it("reports a promise that never settles", async () => {
    const error = await failureOf(run("await new Promise(() => {});"));
    expect(error.message).toMatch(/never settles/);
  });

  it("refuses a result that is not JSON", async () => {
    const error = await failureOf(run("const a = {}; a.self = a; return a;"));
    expect(error.message).toMatch(/could not be turned into JSON/);
  });

  it("keeps working after failures", async () => {
    await failureOf(run("while (true) {}", { timeoutMs: 50 }));
    await failureOf(run("const h = []; while (true) h.push({ n: h.length });", { memoryBytes: 4 * 1024 * 1024 }));
    await failureOf(run("async function f() { return await f(); } return await f();"));
    const result = await run("return 1 + 1;");
    expect(result.value).toBe(2);
  });

  it("isolates calls from each other", async () => {
    await run("globalThis.leak = 'secret';");
    const result = await run("return typeof globalThis.leak;");
    expect(result.value).toBe("undefined");
  });
});
