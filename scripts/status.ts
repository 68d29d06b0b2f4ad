import { loadConfig } from "../platform/config/stack-config.ts";
import { clusterRunning } from "../platform/postgres/cluster.ts";
import { isListening } from "../platform/process/ports.ts";
import { formatServices, stackReport } from "../platform/commands/status.ts";
import { formatSummary, statusVariables } from "../platform/commands/summary.ts";

/**
 * `npm run status [-- --json]`: what runs, where, and the keys, like `supabase status`, plus each
 * supervised service's state, pid, restart count and last unexpected exit.
 */
export async function main(args: string[]): Promise<number> {
  const config = loadConfig("dev");
  const report = await stackReport(config);
  if (args.includes("--json")) {
    console.log(JSON.stringify({ ...report, ...statusVariables(config) }, null, 2));
  } else if (report.supervisorPid !== null) {
    const headline = report.running
      ? `Orbita local stack is running (since ${report.startedAt}).`
      : `Orbita local stack is up (since ${report.startedAt}) but not every service is running.`;
    console.log(`${headline}\n\n${formatServices(report.services)}\n\n${formatSummary(config)}`);
  } else {
    const leftovers: [string, boolean][] = [
      ["postgres", clusterRunning(config)],
      ["postgrest", await isListening(config.ports.postgrest)],
      ["gateway", await isListening(config.ports.gateway)],
      ["mail", await isListening(config.ports.mail)],
      ["functions", await isListening(config.ports.functions)],
      ["pg-meta", await isListening(config.ports.pgMeta)],
      ["dashboard", await isListening(config.ports.studio)],
    ];
    const up = leftovers.filter(([, on]) => on).map(([name]) => name);
    console.log(`Orbita local stack is not running${up.length ? ` (still up: ${up.join(", ")}; run \`npm stop\`)` : ""}. Start it with \`npm start\`.`);
  }
  return report.running ? 0 : 1;
}
