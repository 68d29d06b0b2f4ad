import { readdirSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { loadConfig, PROJECT_ROOT } from "../platform/config.ts";
import { prepareMachine } from "../platform/prepare.ts";
import { resetStack, startStack } from "../platform/stack.ts";
import { clientEnvironment } from "../platform/summary.ts";

/** A benchmark module: prints its own figures. */
interface BenchModule {
  run(): Promise<void>;
}

/**
 * `npm run bench [-- name…]`: brings up an isolated stack (profile `bench`, fresh database), runs
 * every bench/*.bench.ts (or the named ones) and prints their figures with the machine they ran on.
 */
export async function main(args: string[]): Promise<number> {
  const config = loadConfig("bench");
  console.log(`Machine: ${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}`);
  await prepareMachine("run");
  await resetStack(config);
  const stack = await startStack(config);
  Object.assign(process.env, clientEnvironment(config));
  const dir = join(PROJECT_ROOT, "bench");
  const files = readdirSync(dir).filter((name) => name.endsWith(".bench.ts") && (args.length === 0 || args.some((arg) => name.startsWith(arg))));
  try {
    for (const file of files.sort()) {
      console.log(`\n== ${file}`);
      const module = (await import(pathToFileURL(join(dir, file)).href)) as BenchModule;
      await module.run();
    }
  } finally {
    await stack.stop();
  }
  return 0;
}
