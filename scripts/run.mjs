#!/usr/bin/env node
// Entry point of every npm script. It has no dependencies of its own, so it can install the
// project's npm packages on a fresh clone before loading the TypeScript commands through tsx.
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
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
  // supabase CLI); npm installs only the ones that match this machine.
  console.log("  • Installing npm packages (npm ci, exactly as locked)…");
  const result = spawnSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    console.error("✗ npm ci failed. Check your network access to the npm registry and run the command again.");
    process.exit(1);
  }
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
