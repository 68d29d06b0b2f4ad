#!/usr/bin/env node
// Entry point of every npm script. It has no dependencies of its own, so it can install the
// project's npm packages on a fresh clone before loading the TypeScript commands through tsx, and
// it runs on whatever Node the machine has: when that is older than package.json's engines allow,
// it runs the command again under the Node the lock installs (see runOnLockedNode).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { constants } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const commands = { start: "start.ts", stop: "stop.ts", status: "status.ts", test: "test.ts", bench: "bench.ts", types: "types.ts", lint: "lint.ts" };
const [command, ...args] = process.argv.slice(2);
if (!(command in commands)) {
  console.error(`Unknown command "${command}". Use one of: ${Object.keys(commands).join(", ")}.`);
  process.exit(2);
}

const installed = join(root, "node_modules", ".package-lock.json");
const lock = join(root, "package-lock.json");
if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
  // `npm ci`, not `npm install`: it installs exactly what the lock holds and never rewrites it, so a
  // fresh checkout stays unmodified. The lock lists every platform's optional packages (deno, the
  // supabase CLI, Node itself); npm installs only the ones that match this machine.
  console.log("  • Installing npm packages (npm ci, exactly as locked)…");
  const result = spawnSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    console.error("✗ npm ci failed. Check your network access to the npm registry and run the command again.");
    process.exit(1);
  }
}

const minimumMajor = Number(/^>=(\d+)$/.exec(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).engines.node)[1]);
if (Number(process.versions.node.split(".")[0]) < minimumMajor) await runOnLockedNode();

/**
 * Runs this command again under the Node binary the lock installs (the node-linux-<arch> package,
 * the one the `node` package itself downloads) and exits as it does. Its bin folder goes first on
 * PATH, so every Node the command starts by name (vitest, tsc, tsx and the other bin scripts'
 * `#!/usr/bin/env node`) is that one too; the platform's own children use process.execPath.
 */
async function runOnLockedNode() {
  const found = join(root, "node_modules", ".bin", "node");
  const node = existsSync(found) ? realpathSync(found) : null;
  if (node === null || process.env.ORBITA_LOCKED_NODE === node) {
    console.error(
      `✗ Node ${process.versions.node} is older than Node ${minimumMajor}, and ${node === null ? `the lock has no Node ${minimumMajor} package for ${process.platform}-${process.arch}` : `${node} did not replace it`}.\n` +
        `  Fix: install Node ${minimumMajor} LTS (https://nodejs.org) and run the command again.`,
    );
    process.exit(1);
  }
  const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ""}`, ORBITA_LOCKED_NODE: node };
  const child = spawn(node, [fileURLToPath(import.meta.url), command, ...args], { cwd: process.cwd(), env, stdio: "inherit" });
  // Ctrl-C reaches the child from the terminal itself (same process group); passing SIGINT on too
  // would be a second one, and scripts/test.ts stops cleanly only on the first. A SIGTERM (from CI,
  // or npm passing on its own) is sent to this process alone, so it is passed on. Either way this
  // process stays until the child has exited, and ends the way it did.
  process.on("SIGINT", () => {});
  process.on("SIGTERM", () => child.kill("SIGTERM"));
  const [code, signal] = await new Promise((resolve) => child.once("exit", (...outcome) => resolve(outcome)));
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
  process.exit(code ?? 128 + (constants.signals[signal] ?? 0));
}

const { register } = await import(pathToFileURL(join(root, "node_modules", "tsx", "dist", "esm", "api", "index.mjs")).href);
register();
const { main } = await import(pathToFileURL(join(root, "scripts", commands[command])).href);
try {
  process.exitCode = (await main(args)) ?? 0;
} catch (error) {
  if (error && error.name === "PlatformError") {
    console.error(`✗ ${error.message}\n  Fix: ${error.fix}`);
    process.exitCode = 1;
  } else {
    throw error;
  }
}
