import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig, PROJECT_ROOT } from "../platform/config/stack-config.ts";
import { supabaseCli } from "../platform/postgres/migrations.ts";
import { PlatformError } from "../platform/process/errors.ts";

/** Where the generated database types are committed; edge functions and tests import them. */
export const TYPES_FILE = join(PROJECT_ROOT, "supabase", "functions", "_shared", "db", "database.types.ts");

/** `npm run db:types`: `supabase gen types typescript` against the running dev stack. */
export async function main(): Promise<number> {
  const result = supabaseCli(loadConfig("dev").dbUrl, ["gen", "types", "typescript", "--schema", "public"]);
  if (!result.ok || !result.stdout.includes("export type Database")) {
    throw new PlatformError(`supabase gen types failed: ${result.stderr.trim().split("\n").pop()}`, "Start the stack with `npm start` first.");
  }
  writeFileSync(TYPES_FILE, result.stdout);
  console.log(`Wrote ${TYPES_FILE}`);
  return 0;
}
