import { loadConfig } from "../platform/config.ts";
import { prepareMachine } from "../platform/prepare.ts";
import { startStack } from "../platform/stack.ts";
import { formatSummary } from "../platform/summary.ts";

/** `npm start`: brings up the whole local backend with seed data and stays in the foreground. */
export async function main(): Promise<number> {
  const config = loadConfig("dev");
  console.log(`Starting Orbita's local Supabase stack (${config.runtimeDir})`);
  await prepareMachine("run");
  const stack = await startStack(config);
  console.log(`\nStarted Orbita local development setup.\n\n${formatSummary(config)}\n\nLogs: ${config.logDir}\nPress Ctrl-C (or run \`npm stop\`) to stop everything.`);

  return new Promise((resolve) => {
    let stopping = false;
    const shutdown = async (reason: string, code: number) => {
      if (stopping) return;
      stopping = true;
      console.log(`\n${reason} Stopping…`);
      await stack.stop();
      console.log("Stopped.");
      resolve(code);
    };
    process.on("SIGINT", () => void shutdown("Interrupted.", 0));
    process.on("SIGTERM", () => void shutdown("Asked to stop.", 0));
    for (const child of stack.children) {
      void child.exited.then((code) => shutdown(`${child.name} exited unexpectedly (code ${code}); see ${child.logFile}.`, 1));
    }
  });
}
