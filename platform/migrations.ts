import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { PROJECT_ROOT, type StackConfig } from "./config.ts";
import { PlatformError } from "./process/errors.ts";
import { run } from "./process/system.ts";

/** The Supabase CLI installed from npm (package `supabase`). */
export const SUPABASE_CLI = join(PROJECT_ROOT, "node_modules", ".bin", "supabase");

/** Runs the real Supabase CLI against this stack's database, the way the README shows it. */
export function supabaseCli(config: StackConfig, args: string[]) {
  return run(SUPABASE_CLI, [...args, `--remote=${config.dbUrl}`, "--workdir", PROJECT_ROOT], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, PGSSLMODE: "disable", SUPABASE_YES: "1", DO_NOT_TRACK: "1", SUPABASE_TELEMETRY_DISABLED: "1" },
  });
}

/**
 * Applies pending migrations and seed files with `supabase db push`, which records them in
 * supabase_migrations exactly as on a hosted project. Each migration runs in its own
 * transaction, so a failing one leaves the database as it was before that file.
 */
export function pushMigrations(config: StackConfig): void {
  const result = supabaseCli(config, ["db", "push", "--include-all", "--include-seed", "--yes"]);
  if (!result.ok) {
    const output = `${result.stdout}\n${result.stderr}`;
    const file = /Applying migration (\S+)/g;
    let failing = "";
    for (const match of output.matchAll(file)) failing = match[1];
    const seeding = /Seeding data from (\S+)\.\.\.\s*$/m.exec(output.trimEnd().split("\n").filter((line) => !line.startsWith("ERROR") && !line.startsWith("At statement") && !line.startsWith("Try rerunning")).join("\n"));
    const error = output.split("\n").find((line) => line.startsWith("ERROR:")) ?? output.trim().split("\n").pop();
    const where = seeding ? `seed ${seeding[1]}` : failing ? `migration ${failing}` : "supabase db push";
    throw new PlatformError(`${where} failed: ${error}`, `Fix the SQL and run the command again; the failed file was rolled back.`);
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
