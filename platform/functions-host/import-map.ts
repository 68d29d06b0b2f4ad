import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PROJECT_ROOT } from "../config/stack-config.ts";

/**
 * supabase/functions/import_map.json maps each runtime dependency of package.json to
 * `npm:<name>@<exact version>` (plus a `<name>/` entry for subpath imports), so a function's bare
 * `import ... from "zod"` means the same package under the local host (which serves those npm:
 * specifiers from node_modules), `supabase functions serve` and a hosted deploy. The CLI picks the
 * file up as its project-wide import map fallback. Run this module to regenerate it:
 *   node_modules/.bin/tsx platform/functions-host/import-map.ts
 */
export const IMPORT_MAP_FILE = join(PROJECT_ROOT, "supabase", "functions", "import_map.json");

export interface ImportMap {
  imports: Record<string, string>;
}

/** The map package.json's `dependencies` imply (devDependencies never reach a function). */
export function expectedImportMap(packageJson = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { dependencies?: Record<string, string> }): ImportMap {
  const imports: Record<string, string> = {};
  for (const [name, version] of Object.entries(packageJson.dependencies ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    if (!/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version)) throw new Error(`package.json pins ${name} to "${version}": functions need an exact version`);
    imports[name] = `npm:${name}@${version}`;
    imports[`${name}/`] = `npm:/${name}@${version}/`;
  }
  return { imports };
}

export function writeImportMap(): void {
  writeFileSync(IMPORT_MAP_FILE, `${JSON.stringify(expectedImportMap(), null, 2)}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) writeImportMap();
