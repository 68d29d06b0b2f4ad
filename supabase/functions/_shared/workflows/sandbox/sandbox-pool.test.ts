import { afterAll, describe, expect, it, vi } from "vitest";
import { WorkflowError } from "../core/errors.ts";
import { DEFAULT_SANDBOX_MEMORY_BYTES, type SandboxRequest } from "../core/sandbox-contract.ts";
import { accountShare } from "./fair-queue.ts";
import { SandboxPool } from "./sandbox-pool.ts";
import type { SpawnSandboxThread } from "./sandbox-threads.ts";
import { nodeWorkerThreads } from "../../../../../test/helpers/workflows/sandbox-threads.ts";

function call(source: string, options: Partial<SandboxRequest> & { timeoutMs?: number } = {}): SandboxRequest {
  const { timeoutMs = 5_000, ...rest } = options;
  return { kind: "function", source, values: [], deadline: Date.now() + timeoutMs, memoryBytes: DEFAULT_SANDBOX_MEMORY_BYTES, ...rest };
}

const busyFor = (ms: number) => `const started = Date.now(); while (Date.now() - started < ${ms}) {} return Date.now();`;

async function failureOf(promise: Promise<unknown>): Promise<WorkflowError> {
  const error = await promise.then(() => null, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(WorkflowError);
  return error as WorkflowError;
}

/** Threads that take calls and never answer, or die on the first one: stand-ins for a thread gone wrong. */
function brokenThreads(kind: "silent" | "dies"): SpawnSandboxThread & { terminated: number } {
  const spawn = ((events) => ({
    post: (message) => {
      if (message.type === "init") setTimeout(() => events.message({ type: "ready" }), 0);
      if (kind === "dies" && message.type === "run") setTimeout(() => events.failure("a WebAssembly trap"), 10);
    },
    terminate: () => {
      spawn.terminated++;
    },
  })) as SpawnSandboxThread & { terminated: number };
  spawn.terminated = 0;
  return spawn;
}

describe("the sandbox pool (worker threads)", () => {
  // Threads take a while to start under tsx, so the pools are shared and warmed once.
  const pool = new SandboxPool({ size: 4, spawn: nodeWorkerThreads(), stopGraceMs: 2_000 });
  afterAll(() => pool.close());

  it("runs code on a thread and returns its result and output", async () => {
    await Promise.all(Array.from({ length: 4 }, () => pool.run(call("return 1;", { timeoutMs: 20_000 }))));
    expect(await pool.run(call("console.log('hi'); return __refs[0] * 2;", { values: [21] }))).toEqual({ value: 42, stdout: "hi" });
  });

  it("runs independent calls at the same time, one per thread", async () => {
    const started = Date.now();
    const ends = await Promise.all(Array.from({ length: 4 }, () => pool.run(call(busyFor(400)))));
    for (const { value } of ends) expect(value as number).toBeGreaterThanOrEqual(started + 400);
    // One after another they would take 1.6 s.
    expect(Date.now() - started).toBeLessThan(1_400);
  });

  it("stops running code as soon as the call is cancelled, and the thread serves the next call", async () => {
    const before = pool.stats().started;
    const controller = new AbortController();
    const spinning = pool.run(call("while (true) {}", { timeoutMs: 30_000, signal: controller.signal }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const reason = new WorkflowError("CANCELLED", "the run was cancelled");
    const cancelledAt = Date.now();
    controller.abort(reason);
    await expect(spinning).rejects.toBe(reason);
    expect(Date.now() - cancelledAt).toBeLessThan(500);
    // The thread stopped the code (it did not have to be replaced) and is free again.
    await Promise.all(Array.from({ length: 4 }, () => pool.run(call("return 2;"))));
    // The stopped thread reports back on its own schedule; on a busy machine the other threads may
    // serve all four calls first. What matters is that it comes back without being replaced.
    await vi.waitFor(() => expect(pool.stats()).toMatchObject({ busy: 0, started: before }), { timeout: 5_000 });
  });

  it("stops code at its deadline with SANDBOX_TIMEOUT", async () => {
    const error = await failureOf(pool.run(call("while (true) {}", { timeoutMs: 200 })));
    expect(error.code).toBe("SANDBOX_TIMEOUT");
  });

  it("stops a memory bomb and retires the thread whose heap it grew", async () => {
    const before = pool.stats();
    const error = await failureOf(pool.run(call("const a = []; while (true) a.push({ n: a.length });", { memoryBytes: 4 * 1024 * 1024, timeoutMs: 20_000 })));
    expect(error.code).toBe("SANDBOX_MEMORY_LIMIT");
    expect(pool.stats().threads).toBe(before.threads - 1);
    // A fresh thread takes its place when the pool needs all four again.
    await Promise.all(Array.from({ length: 4 }, () => pool.run(call("return 3;", { timeoutMs: 20_000 }))));
    expect(pool.stats()).toMatchObject({ threads: 4, started: before.started + 1 });
  });

  it("rejects at once a call whose signal has already aborted", async () => {
    const controller = new AbortController();
    controller.abort("gone");
    await expect(pool.run(call("return 1;", { signal: controller.signal }))).rejects.toBe("gone");
  });
});

describe("the sandbox pool's queue", () => {
  it("serves waiting runs in turn, and fails calls still waiting at their deadline", async () => {
    const pool = new SandboxPool({ size: 1, spawn: nodeWorkerThreads() });
    try {
      await pool.run(call("return 0;", { timeoutMs: 20_000 }));
      const order: string[] = [];
      const track = (name: string, owner: string, source: string) =>
        pool.run(call(source, { owner })).then((result) => {
          order.push(name);
          return result;
        });
      const busy = [track("a1", "a", busyFor(300)), track("a2", "a", busyFor(50)), track("a3", "a", busyFor(50))];
      const late = track("b1", "b", "return 'b';");
      const starved = failureOf(pool.run(call("return 'never';", { owner: "c", timeoutMs: 100 })));
      await Promise.all([...busy, late]);
      // b1 came after a2 and a3, but run b had not been served yet, so it went before them.
      expect(order).toEqual(["a1", "b1", "a2", "a3"]);
      expect((await starved).code).toBe("SANDBOX_TIMEOUT");
      expect((await starved).message).toContain("waited for a free sandbox thread");
    } finally {
      pool.close();
    }
  });
});

describe("the sandbox pool's fairness between billing accounts", () => {
  it("holds an account to half the threads, so another account's call starts while the first spins", async () => {
    const pool = new SandboxPool({ size: 4, spawn: nodeWorkerThreads(), stopGraceMs: 2_000 });
    try {
      await Promise.all(Array.from({ length: 4 }, () => pool.run(call("return 0;", { timeoutMs: 20_000 }))));
      expect(accountShare(4)).toBe(2);
      // One tenant's parallel of eight spinning Functions, as eight runs' worth of calls.
      const controller = new AbortController();
      const spinning = Array.from({ length: 8 }, (_, index) =>
        pool.run(call("while (true) {}", { timeoutMs: 30_000, owner: `spinner-${index}`, account: "greedy", signal: controller.signal })).catch(() => "stopped"));
      await vi.waitFor(() => expect(pool.stats()).toMatchObject({ busy: 2, queued: 6 }), { timeout: 5_000 });
      // Another tenant's one-block run: served by a free thread, not queued behind the spinners.
      const started = Date.now();
      expect(await pool.run(call("return 'fair';", { owner: "quick", account: "polite" }))).toEqual({ value: "fair", stdout: "" });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(pool.stats()).toMatchObject({ busy: 2, queued: 6 });
      controller.abort("done");
      await Promise.all(spinning);
    } finally {
      pool.close();
    }
  });

  it("does not count time spent waiting for a thread against a call's own time limit", async () => {
    const pool = new SandboxPool({ size: 1, spawn: nodeWorkerThreads() });
    try {
      await pool.run(call("return 0;", { timeoutMs: 20_000 }));
      const first = pool.run(call(busyFor(600)));
      // 300 ms of its own, after waiting about 600 ms for the only thread: it still gets all 300.
      const waiting = pool.run({ ...call(busyFor(100), { timeoutMs: 20_000 }), timeoutMs: 300 });
      await first;
      expect((await waiting).value).toBeGreaterThan(0);
      // Its own limit still stops it once it runs, long before the run's.
      const started = Date.now();
      const error = await failureOf(pool.run({ ...call("while (true) {}", { timeoutMs: 20_000 }), timeoutMs: 200 }));
      expect(error.code).toBe("SANDBOX_TIMEOUT");
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      pool.close();
    }
  });
});

describe("the sandbox pool's replacement of threads gone wrong", () => {
  it("replaces a thread that does not stop by its deadline, and does not wait for it", async () => {
    const spawn = brokenThreads("silent");
    const pool = new SandboxPool({ size: 1, spawn, stopGraceMs: 50 });
    const started = Date.now();
    const error = await failureOf(pool.run(call("return 1;", { timeoutMs: 100 })));
    expect(error).toMatchObject({ code: "SANDBOX_TIMEOUT", message: expect.stringContaining("replaced") });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(spawn.terminated).toBe(1);
    expect(pool.stats()).toMatchObject({ threads: 0, busy: 0 });
  });

  it("replaces a thread that does not stop after a cancellation", async () => {
    const spawn = brokenThreads("silent");
    const pool = new SandboxPool({ size: 1, spawn, stopGraceMs: 50 });
    const controller = new AbortController();
    const pending = pool.run(call("return 1;", { signal: controller.signal }));
    // Running on its thread (which takes calls once ready), not still waiting for it.
    await vi.waitFor(() => expect(pool.stats().busy).toBe(1));
    controller.abort("stop");
    await expect(pending).rejects.toBe("stop");
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(spawn.terminated).toBe(1);
  });

  it("fails the call of a thread that dies, and starts a fresh thread for the next", async () => {
    const spawn = brokenThreads("dies");
    const pool = new SandboxPool({ size: 1, spawn });
    const error = await failureOf(pool.run(call("return 1;")));
    expect(error).toMatchObject({ code: "BLOCK_FAILED", message: "the sandbox thread failed (a WebAssembly trap); it was replaced" });
    await failureOf(pool.run(call("return 1;")));
    expect(pool.stats().started).toBe(2);
  });

  it("says so when no thread can start at all", async () => {
    const pool = new SandboxPool({
      size: 2,
      spawn: () => {
        throw new Error("Worker is not defined");
      },
    });
    const error = await failureOf(pool.run(call("return 1;")));
    expect(error).toMatchObject({ name: "SandboxThreadsUnavailable", message: "the sandbox's worker threads could not start: Worker is not defined" });
  });
});
