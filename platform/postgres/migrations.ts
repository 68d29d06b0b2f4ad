import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { PROJECT_ROOT, type StackConfig } from "../config/stack-config.ts";
import { PlatformError } from "../process/errors.ts";
import { run } from "../process/system.ts";

/** The Supabase CLI installed from npm (package `supabase`). */
export const SUPABASE_CLI = join(PROJECT_ROOT, "node_modules", ".bin", "supabase");

/** Runs the real Supabase CLI against a database (`--remote=<url>`), the way the README shows it. */
export function supabaseCli(dbUrl: string, args: string[], workdir = PROJECT_ROOT) {
  return run(SUPABASE_CLI, [...args, `--remote=${dbUrl}`, "--workdir", workdir], {
    cwd: workdir,
    env: { ...process.env, PGSSLMODE: "disable", SUPABASE_YES: "1", DO_NOT_TRACK: "1", SUPABASE_TELEMETRY_DISABLED: "1" },
  });
}

/**
 * Applies pending migrations and seed files with `supabase db push`, which records them in
 * supabase_migrations exactly as on a hosted project. Each migration runs in its own
 * transaction, so a failing one leaves the database as it was before that file.
 */
export function pushMigrations(config: StackConfig, workdir = PROJECT_ROOT): void {
  const result = supabaseCli(config.dbUrl, ["db", "push", "--include-all", "--include-seed", "--yes"], workdir);
  if (!result.ok) {
    const lines = `${result.stdout}\n${result.stderr}`.split("\n");
    const errorAt = lines.findIndex((line) => line.startsWith("ERROR:"));
    const error = errorAt >= 0 ? lines[errorAt] : lines.filter(Boolean).pop();
    // The CLI announces each file before running it; the last announcement before the error names the culprit.
    const announced = lines
      .slice(0, errorAt >= 0 ? errorAt : lines.length)
      .map((line) => /^(Applying migration|Seeding data from) (\S+?\.sql)/.exec(line))
      .filter((match) => match !== null)
      .pop();
    const where = announced ? `${announced[1] === "Applying migration" ? "migration" : "seed"} ${announced[2]}` : "supabase db push";
    throw new PlatformError(`${where} failed: ${error}`, "Fix the SQL and run the command again; the failed file was rolled back.");
  }
}

/** Applies test-only SQL (test/fixtures/*.sql) as postgres, each file in one transaction. */
export async function applyFixtures(config: StackConfig): Promise<void> {
  const dir = join(PROJECT_ROOT, "test", "fixtures");
  if (!existsSync(dir)) return;
  const sql = postgres(config.dbUrl, { max: 1, onnotice: () => {} });
  try {
    for (const file of readdirSync(dir).filter((name) => name.endsWith(".sql")).sort()) {
      try {
        await sql.begin((tx) => tx.unsafe(readFileSync(join(dir, file), "utf8")));
      } catch (error) {
        throw new PlatformError(`Test fixture ${file} failed: ${(error as Error).message}`, "Fix the fixture SQL.");
      }
    }
  } finally {
    await sql.end();
  }
}
