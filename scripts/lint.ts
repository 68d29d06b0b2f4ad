import { loadConfig } from "../platform/config/stack-config.ts";
import { supabaseCli } from "../platform/postgres/migrations.ts";

/** `npm run db:lint`: `supabase db lint` (plpgsql_check) over the running dev stack; fails on warnings. */
export async function main(): Promise<number> {
  const result = supabaseCli(loadConfig("dev").dbUrl, ["db", "lint", "--fail-on", "warning"]);
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  return result.ok ? 0 : 1;
}
