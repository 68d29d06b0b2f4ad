/**
 * CPU time used by the stack's own processes, read from /proc: a figure that machine noise hardly
 * moves, unlike throughput, so benches can say where a request's time goes.
 */
import { readFileSync } from "node:fs";
import type { StackConfig } from "../platform/config/stack-config.ts";
import { readState } from "../platform/commands/stack.ts";

/** Kernel clock ticks per second (USER_HZ), 100 on Linux. */
const TICKS_PER_SECOND = 100;

/** CPU milliseconds (user + system) a process has used so far; threads included. 0 once it has exited. */
function cpuMs(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return 0;
  }
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** Pids of the running stack's services by name ("platform", "postgrest", "postgres", "functions"). */
export function servicePids(config: StackConfig): Record<string, number> {
  const pids: Record<string, number> = {};
  for (const service of readState(config)?.services ?? []) if (service.pid !== null) pids[service.name] = service.pid;
  return pids;
}

/**
 * Runs `work` and returns its result with the CPU milliseconds each named process spent meanwhile.
 * A process that exits meanwhile (a pooled Postgres connection closed when idle) counts 0.
 */
export async function measureCpu<T>(pids: Record<string, number>, work: () => Promise<T>): Promise<{ result: T; cpuMs: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuMs(pid)]));
  const result = await work();
  const spent = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, Math.max(0, cpuMs(pid) - before[name])]));
  return { result, cpuMs: spent };
}
