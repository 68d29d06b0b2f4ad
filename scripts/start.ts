import { loadConfig } from "../platform/config/stack-config.ts";
import { prepareMachine } from "../platform/commands/prepare.ts";
import { runUntilStopped, startStack } from "../platform/commands/stack.ts";
import { formatOutboundNotice, formatSummary } from "../platform/commands/summary.ts";

/**
 * `npm start`: brings up the whole local backend with seed data and stays in the foreground,
 * restarting any piece that dies, until Ctrl-C, `npm stop` or SIGTERM.
 */
export async function main(): Promise<number> {
  const config = loadConfig("dev");
  console.log(`Starting Orbita's local Supabase stack (${config.runtimeDir})`);
  await prepareMachine("run");
  const stack = await startStack(config);
  console.log(`\nStarted Orbita local development setup.\n\n${formatSummary(config)}\n\n${formatOutboundNotice(config)}\nLogs: ${config.logDir}\nPress Ctrl-C (or run \`npm stop\`) to stop everything.`);
  await runUntilStopped(stack);
  return 0;
}
