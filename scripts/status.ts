import { loadConfig } from "../platform/config.ts";
import { clusterRunning } from "../platform/postgres/cluster.ts";
import { isListening } from "../platform/process/ports.ts";
import { isAlive, readState } from "../platform/stack.ts";
import { formatSummary, statusVariables } from "../platform/summary.ts";

/** `npm run status [-- --json]`: what runs, where, and the keys, like `supabase status`. */
export async function main(args: string[]): Promise<number> {
  const config = loadConfig("dev");
  const state = readState(config);
  const services = {
    postgres: clusterRunning(config),
    postgrest: await isListening(config.ports.postgrest),
    gateway: await isListening(config.ports.gateway),
    mail: await isListening(config.ports.mail),
    functions: await isListening(config.ports.functions),
  };
  const running = state !== null && isAlive(state.supervisorPid) && Object.values(services).every(Boolean);
  if (args.includes("--json")) {
    console.log(JSON.stringify({ running, services, ...statusVariables(config) }, null, 2));
  } else if (running) {
    console.log(`Orbita local stack is running (since ${state?.startedAt}).\n\n${formatSummary(config)}`);
  } else {
    const up = Object.entries(services).filter(([, on]) => on).map(([name]) => name);
    console.log(`Orbita local stack is not running${up.length ? ` (still up: ${up.join(", ")}; run \`npm stop\`)` : ""}. Start it with \`npm start\`.`);
  }
  return running ? 0 : 1;
}
