import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { supabaseCli } from "../../platform/postgres/migrations.ts";
import { env } from "../helpers/env.ts";

const root = join(import.meta.dirname, "..", "..");
/** The CLI starts slowly and queries the catalogue: on a machine whose cores are busy it may take a minute. */
const CLI_TIMEOUT_MS = 120_000;

describe("the real Supabase CLI against the local database", () => {
  it("records every migration in supabase_migrations, as db push does on hosted projects", () => {
    const result = supabaseCli(env.dbUrl, ["migration", "list"]);
    expect(result.status, result.stderr).toBe(0);
    const local = readdirSync(join(root, "supabase", "migrations"));
    for (const file of local) expect(result.stdout).toContain(file.split("_")[0]);
  }, CLI_TIMEOUT_MS);

  it("lints every schema clean with plpgsql_check", () => {
    const result = supabaseCli(env.dbUrl, ["db", "lint", "--fail-on", "warning"]);
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
  }, CLI_TIMEOUT_MS);

  it("generates the same database types as the committed file (run `npm run db:types` after a schema change)", () => {
    // npm test runs `supabase gen types` right after migrations, before the test fixtures exist.
    const generatedFile = process.env.GENERATED_TYPES_FILE;
    if (!generatedFile) throw new Error("GENERATED_TYPES_FILE is not set: run through `npm test`.");
    const generated = readFileSync(generatedFile, "utf8");
    expect(generated).toContain("export type Database");
    const committed = readFileSync(join(root, "supabase", "functions", "_shared", "db", "database.types.ts"), "utf8");
    expect(generated).toBe(committed);
  });
});
