import { execFileSync } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, PROJECT_ROOT } from "../../platform/config/stack-config.ts";
import { readState } from "../../platform/commands/stack.ts";

// scripts/run.mjs reads the same field, in this form, to decide whether to run on the locked Node.
const engines = (JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { engines: { node: string } }).engines.node;
const minimumMajor = Number(/^>=(\d+)$/.exec(engines)?.[1]);
const major = (version: string) => Number(/^v?(\d+)\./.exec(version.trim())?.[1]);

describe("the Node every project process runs on", () => {
  it("is at least the major version package.json's engines field asks for", () => {
    expect(engines).toMatch(/^>=\d+$/);
    expect(major(process.versions.node)).toBeGreaterThanOrEqual(minimumMajor);
  });

  it("is the node a child started by name finds (bin scripts' #!/usr/bin/env node)", () => {
    expect(major(execFileSync("node", ["--version"], { encoding: "utf8" }))).toBeGreaterThanOrEqual(minimumMajor);
  });

  it("runs npm test's supervisor and every Node service of the stack under test", () => {
    const state = readState(loadConfig("test"));
    expect(state).not.toBeNull();
    const pids = { supervisor: state!.supervisorPid, ...Object.fromEntries(state!.services.map((service) => [service.name, service.pid])) };
    // The executable each process runs, as the kernel reports it: not something the process says of itself.
    const versions = Object.entries(pids).flatMap(([name, pid]) => {
      const executable = pid ? readlinkSync(`/proc/${pid}/exe`) : "";
      return basename(executable) === "node" ? [[name, major(execFileSync(executable, ["--version"], { encoding: "utf8" }))] as const] : [];
    });
    expect(versions.map(([name]) => name).sort()).toEqual(["dashboard", "pg-meta", "platform", "supervisor"]);
    expect(versions.filter(([, version]) => version < minimumMajor)).toEqual([]);
  });
});
