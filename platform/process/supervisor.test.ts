import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../config/stack-config.ts";
import { processService } from "./children.ts";
import { Supervisor, type RestartPolicy } from "./supervisor.ts";

// Real processes under a real supervisor; only the log folder and the policy's timings are the test's.
const config = { ...loadConfig("test"), logDir: mkdtempSync(join(tmpdir(), "orbita-supervisor-")) };
const policy: RestartPolicy = { firstDelayMs: 10, maxDelayMs: 1_000, stableAfterMs: 60_000, crashLoopExits: 5, crashLoopWithinMs: 60_000 };

function service(name: string, script: string) {
  return processService(config, { name, command: "sh", args: ["-c", script], ready: async () => {} });
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function alive(pid: number | null): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("Supervisor", () => {
  const lines: string[] = [];
  let supervisor: Supervisor;
  const start = (restartPolicy = policy) => (supervisor = new Supervisor((level, line) => lines.push(`${level} ${line}`), () => {}, restartPolicy));

  afterEach(async () => {
    await supervisor.stop();
    lines.length = 0;
  });

  it("starts a service that was killed again, saying which signal killed it, and counts the restart", async () => {
    start();
    await supervisor.launch(service("sleeper", "exec sleep 60"));
    const [first] = supervisor.status();
    process.kill(first.pid as number, "SIGKILL");
    await until(() => supervisor.status()[0].restarts === 1 && supervisor.status()[0].state === "running");
    const [again] = supervisor.status();
    expect(again.pid).not.toBe(first.pid);
    expect(alive(again.pid)).toBe(true);
    expect(again.lastExit?.reason).toBe("signal SIGKILL");
    expect(lines).toEqual([
      "warn sleeper died (signal SIGKILL); restarting it in 0.01 s",
      `info sleeper is running again (pid ${again.pid}, restart 1)`,
    ]);
  });

  it("backs off exponentially, then gives up on a service that keeps dying and says so", async () => {
    start();
    await supervisor.launch(service("crasher", "exit 3"));
    await until(() => supervisor.status()[0].state === "crash-loop");
    expect(lines.filter((line) => line.startsWith("warn"))).toEqual([
      "warn crasher died (exit code 3); restarting it in 0.01 s",
      "warn crasher died (exit code 3); restarting it in 0.02 s",
      "warn crasher died (exit code 3); restarting it in 0.04 s",
      "warn crasher died (exit code 3); restarting it in 0.08 s",
    ]);
    expect(lines.at(-1)).toBe(
      `error crasher keeps dying (5 times within 60.0 s; last: exit code 3). It is not restarted again; see ${join(config.logDir, "crasher.log")}, fix the cause and start the stack again.`,
    );
    const [status] = supervisor.status();
    expect(status).toMatchObject({ state: "crash-loop", pid: null, restarts: 4, lastExit: { reason: "exit code 3" } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(supervisor.status()[0].restarts).toBe(4);
  });

  it("starts the backoff over for a service that ran a while before it died", async () => {
    start({ ...policy, stableAfterMs: 300 });
    await supervisor.launch(service("flaky", "sleep 0.5; exit 1"));
    await until(() => supervisor.status()[0].restarts >= 3, 15_000);
    expect(lines.filter((line) => line.startsWith("warn")).slice(0, 3)).toEqual(Array(3).fill("warn flaky died (exit code 1); restarting it in 0.01 s"));
  });

  it("stops every service, last started first, and restarts none of them", async () => {
    start();
    await supervisor.launch(service("first", "exec sleep 60"));
    await supervisor.launch(service("second", "exec sleep 60"));
    const pids = supervisor.status().map((status) => status.pid);
    await supervisor.stop();
    expect(pids.map(alive)).toEqual([false, false]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(supervisor.status().map((status) => status.state)).toEqual(["stopped", "stopped"]);
    expect(lines).toEqual([]);
  });

  it("fails a launch with the service's last error line when it exits before it is ready", async () => {
    start();
    const never = processService(config, { name: "broken", command: "sh", args: ["-c", "echo 'fatal error: no config' >&2; exit 2"], ready: () => new Promise(() => {}) });
    await expect(supervisor.launch(never)).rejects.toThrow("broken exited (code 2) while starting: fatal error: no config");
  });
});
