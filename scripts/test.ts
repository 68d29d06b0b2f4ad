import { spawn } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { loadConfig, PROJECT_ROOT, type StackConfig } from "../platform/config/stack-config.ts";
import { supabaseCli } from "../platform/postgres/migrations.ts";
import { prepareMachine } from "../platform/commands/prepare.ts";
import { resetStack, startStack } from "../platform/commands/stack.ts";
import { functionEnvironment } from "../platform/functions-host/launch.ts";
import { clientEnvironment, formatOutboundNotice } from "../platform/commands/summary.ts";

interface SuiteResult {
  name: string;
  passed: number;
  failed: number;
  ok: boolean;
}

/** Runs a command with inherited output while also capturing it for the summary. */
function runCaptured(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const relay = (stream: NodeJS.WriteStream) => (chunk: Buffer) => {
      output += chunk.toString();
      stream.write(chunk);
    };
    child.stdout.on("data", relay(process.stdout));
    child.stderr.on("data", relay(process.stderr));
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });
}

/** pgTAP through pg_prove, as `supabase test db` runs it (pgtap created in extensions first). */
async function runPgTap(config: StackConfig, files: string[]): Promise<SuiteResult> {
  const admin = postgres(config.adminDbUrl, { max: 1, onnotice: () => {} });
  await admin`create extension if not exists pgtap with schema extensions`;
  await admin.end();
  const targets = files.length > 0 ? files : ["-r", join("supabase", "tests", "database")];
  const { code, output } = await runCaptured(
    "pg_prove",
    ["-h", "127.0.0.1", "-p", String(config.ports.db), "-U", "postgres", "-d", "postgres", "--ext", ".sql", ...targets],
    { PGPASSWORD: "postgres" },
  );
  const tests = Number(/Tests=(\d+)/.exec(output)?.[1] ?? 0);
  const failedLine = output.match(/Failed (\d+)\/(\d+) subtests/g) ?? [];
  const failed = failedLine.reduce((sum, line) => sum + Number(/Failed (\d+)/.exec(line)?.[1] ?? 0), 0);
  const ok = code === 0 && /Result: PASS/.test(output);
  return { name: "pgTAP", passed: Math.max(0, tests - failed), failed: ok ? failed : Math.max(failed, 1), ok };
}

/**
 * Type checks: tsc over the Node side (platform, scripts, tests, and the unit tests beside the edge
 * functions' modules, which run under vitest), and `deno check` over every edge function and the
 * Deno side of the functions host, resolved through the same import map.
 */
async function runTypecheck(): Promise<SuiteResult> {
  const tsc = await runCaptured(join(PROJECT_ROOT, "node_modules", ".bin", "tsc"), ["--noEmit", "-p", "."], {});
  const functionsDir = join(PROJECT_ROOT, "supabase", "functions");
  const entrypoints = readdirSync(functionsDir)
    .filter((name) => existsSync(join(functionsDir, name, "index.ts")))
    .map((name) => join("supabase", "functions", name, "index.ts"));
  const deno = await runCaptured(
    join(PROJECT_ROOT, "node_modules", ".bin", "deno"),
    ["check", "--quiet", "--no-lock", "--node-modules-dir=manual", "--import-map=supabase/functions/import_map.json",
      ...entrypoints, "platform/functions-host/main.ts", "platform/functions-host/runtime/worker.ts"],
    { NO_COLOR: "1" },
  );
  const failed = [tsc, deno].filter((result) => result.code !== 0).length;
  return { name: "typecheck (tsc, deno check)", passed: 2 - failed, failed, ok: failed === 0 };
}

/** vitest against the running stack, with its URLs and keys in the environment. */
async function runVitest(config: StackConfig, files: string[], generatedTypes: string): Promise<SuiteResult> {
  const { code, output } = await runCaptured(join(PROJECT_ROOT, "node_modules", ".bin", "vitest"), ["run", ...files], {
    ...clientEnvironment(config),
    // Workflows run in vitest's own process too (engine and block tests): same allow-list as the functions.
    OUTBOUND_ALLOWED_HOSTS: functionEnvironment(config).OUTBOUND_ALLOWED_HOSTS ?? "",
    OUTBOUND_DENIED_ADDRESSES: functionEnvironment(config).OUTBOUND_DENIED_ADDRESSES ?? "",
    ORBITA_PROFILE: "test",
    GENERATED_TYPES_FILE: generatedTypes,
    FORCE_COLOR: "0",
    NO_COLOR: "1",
  });
  const line = /Tests\s+(.*)\(\d+\)/.exec(output)?.[1] ?? "";
  const passed = Number(/(\d+) passed/.exec(line)?.[1] ?? 0);
  const failed = Number(/(\d+) failed/.exec(line)?.[1] ?? 0);
  return { name: "vitest", passed, failed: code === 0 ? failed : Math.max(failed, 1), ok: code === 0 };
}

/**
 * `npm test [-- files…]`: brings up an isolated stack (own ports and data folder, fresh database),
 * runs pgTAP over supabase/tests/database and vitest, prints one summary and exits non-zero on any
 * failure. File arguments narrow the run: .sql files go to pg_prove, others to vitest.
 */
export async function main(args: string[]): Promise<number> {
  const config = loadConfig("test");
  const started = Date.now();
  console.log(`Preparing the test stack (${config.runtimeDir})`);
  console.log(formatOutboundNotice(config));
  await prepareMachine("test");
  await resetStack(config);
  const generatedTypes = join(config.runtimeDir, "generated-types.ts");
  const stack = await startStack(config, {
    fixtures: true,
    // Generated before fixtures are added, so it describes exactly the project's schema.
    afterMigrations: async () => writeFileSync(generatedTypes, supabaseCli(config.dbUrl, ["gen", "types", "typescript", "--schema", "public"]).stdout),
  });

  // Ctrl-C (or a SIGTERM from CI) still stops the stack; its services are in process groups of their own.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void stack.stop().finally(() => process.exit(signal === "SIGINT" ? 130 : 143)));
  }

  const sqlFiles = args.filter((arg) => arg.endsWith(".sql"));
  const otherArgs = args.filter((arg) => !arg.endsWith(".sql"));
  const results: SuiteResult[] = [];
  try {
    if (args.length === 0) results.push(await runTypecheck());
    if (sqlFiles.length > 0 || otherArgs.length === 0) results.push(await runPgTap(config, sqlFiles));
    if (otherArgs.length > 0 || sqlFiles.length === 0) results.push(await runVitest(config, otherArgs, generatedTypes));
  } finally {
    await stack.stop();
  }

  const passed = results.reduce((sum, result) => sum + result.passed, 0);
  const failed = results.reduce((sum, result) => sum + result.failed, 0);
  console.log("\nSummary");
  for (const result of results) console.log(`  ${result.ok ? "✓" : "✗"} ${result.name}: ${result.passed} passed, ${result.failed} failed`);
  console.log(`  took ${((Date.now() - started) / 1000).toFixed(0)} s`);
  console.log(`${passed} passed, ${failed} failed`);
  return results.every((result) => result.ok) ? 0 : 1;
}
