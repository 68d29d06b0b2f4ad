import { readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { reportedFigures } from "../bench/bench-support.ts";
import { describeMachine, formatTable, RESULTS_FILE, writeResults } from "../bench/summary-table.ts";
import { loadConfig, PROJECT_ROOT } from "../platform/config/stack-config.ts";
import { prepareMachine } from "../platform/commands/prepare.ts";
import { resetStack, startStack } from "../platform/commands/stack.ts";
import { clientEnvironment } from "../platform/commands/summary.ts";

/** A benchmark module: prints its detailed figures and reports its summary rows (bench/bench-support.ts). */
interface BenchModule {
  run(options: BenchOptions): Promise<void>;
}

/** Options after the bench names: `--technicians 1000000` sets the gamification bench's scale. */
export interface BenchOptions {
  flags: Record<string, string>;
}

/** Splits `npm run bench -- gateway logs --technicians 1000000` into names and flags. */
function parseArguments(args: string[]): { names: string[]; options: BenchOptions } {
  const names: string[] = [];
  const flags: Record<string, string> = {};
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg.startsWith("--")) {
      const [key, inline] = arg.slice(2).split("=", 2);
      flags[key] = inline ?? args[++index] ?? "";
    } else {
      names.push(arg);
    }
  }
  return { names, options: { flags } };
}

/**
 * `npm run bench [-- name… --flag value]`: brings up an isolated stack (profile `bench`, fresh
 * database), runs every bench/*.bench.ts (or the named ones), then prints one table of every
 * reported figure beside its same-run baseline and writes it to bench/results.json.
 */
export async function main(args: string[]): Promise<number> {
  const { names, options } = parseArguments(args);
  const config = loadConfig("bench");
  const machine = describeMachine();
  console.log(`Machine: ${machine.cores} × ${machine.cpu}, ${machine.memoryGiB} GiB RAM, Node ${machine.node}`);
  await prepareMachine("bench");
  await resetStack(config);
  const stack = await startStack(config);
  Object.assign(process.env, clientEnvironment(config));
  const dir = join(PROJECT_ROOT, "bench");
  const files = readdirSync(dir).filter((name) => name.endsWith(".bench.ts") && (names.length === 0 || names.some((arg) => name.startsWith(arg))));
  try {
    for (const file of files.sort()) {
      console.log(`\n== ${file}`);
      const module = (await import(pathToFileURL(join(dir, file)).href)) as BenchModule;
      await module.run(options);
    }
  } finally {
    await stack.stop();
  }
  const figures = reportedFigures();
  console.log(`\n== Summary (${machine.cores} cores, ${machine.memoryGiB} GiB; every baseline measured in this run)`);
  for (const line of formatTable(figures)) console.log(line);
  writeResults(PROJECT_ROOT, figures);
  console.log(`\nWritten to ${RESULTS_FILE}.`);
  return 0;
}
