import type { StackConfig } from "../config/stack-config.ts";
import { isListening } from "../process/ports.ts";
import type { ServiceStatus } from "../process/supervisor.ts";
import { isAlive, readState } from "./stack.ts";

/** One supervised service as `npm run status` reports it. */
export interface ServiceReport extends ServiceStatus {
  /** Whether its ports accept connections right now. */
  listening: boolean;
}

/** A stack as `npm run status` reports it. */
export interface StackReport {
  /** The supervisor is alive and every service runs and listens. */
  running: boolean;
  supervisorPid: number | null;
  startedAt: string | null;
  services: ServiceReport[];
}

/** The ports that answer for each supervised service. */
function portsOf(config: StackConfig, service: string): number[] {
  const { ports } = config;
  switch (service) {
    case "postgres":
      return [ports.db];
    case "postgrest":
      return [ports.postgrest];
    case "platform":
      return [ports.gatewayInner, ports.mail];
    case "gateway":
      return [ports.gateway];
    case "functions":
      return [ports.functions];
    case "pg-meta":
      return [ports.pgMeta];
    case "dashboard":
      return [ports.studio];
    default:
      return [];
  }
}

/** Reads the supervisor's record of a stack and checks each service's ports. */
export async function stackReport(config: StackConfig): Promise<StackReport> {
  const state = readState(config);
  const supervised = state !== null && isAlive(state.supervisorPid);
  const services: ServiceReport[] = [];
  for (const service of supervised ? state.services : []) {
    const listening = (await Promise.all(portsOf(config, service.name).map((port) => isListening(port)))).every(Boolean);
    services.push({ ...service, listening });
  }
  return {
    running: supervised && services.length > 0 && services.every((service) => service.state === "running" && service.listening),
    supervisorPid: supervised ? state.supervisorPid : null,
    startedAt: supervised ? state.startedAt : null,
    services,
  };
}

/** The per-service table `npm run status` prints: state, pid, restarts and the last unexpected exit. */
export function formatServices(services: ServiceReport[]): string {
  const rows = [["service", "state", "pid", "restarts", "last exit"]];
  for (const service of services) {
    const state = service.state === "running" && !service.listening ? "running (not listening)" : service.state;
    const lastExit = service.lastExit ? `${service.lastExit.at.slice(11, 19)} ${service.lastExit.reason}` : "-";
    rows.push([service.name, state, String(service.pid ?? "-"), String(service.restarts), lastExit]);
  }
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join("  ").trimEnd()).join("\n");
}
