import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { expectedImportMap, IMPORT_MAP_FILE } from "./import-map.ts";
import { FIXTURE_FUNCTIONS_DIR, FUNCTIONS_DIR } from "./launch.ts";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : sourceFiles(path);
    return /\.(ts|tsx|js|mjs)$/.test(name) && !/\.test\.ts$/.test(name) ? [path] : [];
  });
}

/** Specifiers of static and dynamic imports and re-exports, as TypeScript's scanner finds them. */
function specifiers(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((file) => file.fileName);
}

const isBare = (specifier: string) => !/^(\.|\/|[a-z]+:)/.test(specifier);

describe("supabase/functions/import_map.json", () => {
  it("maps exactly package.json's runtime dependencies, at their pinned versions", () => {
    const actual = JSON.parse(readFileSync(IMPORT_MAP_FILE, "utf8"));
    expect(actual).toEqual(expectedImportMap());
  });

  it("resolves every bare import in the functions (else `supabase functions serve` and deploy would fail)", () => {
    const { imports } = expectedImportMap();
    const unmapped: string[] = [];
    for (const file of [...sourceFiles(FUNCTIONS_DIR), ...sourceFiles(FIXTURE_FUNCTIONS_DIR)]) {
      for (const specifier of specifiers(readFileSync(file, "utf8")).filter(isBare)) {
        const mapped = specifier in imports || Object.keys(imports).some((prefix) => prefix.endsWith("/") && specifier.startsWith(prefix));
        if (!mapped) unmapped.push(`${file.replace(`${FUNCTIONS_DIR}/`, "supabase/functions/")}: ${specifier}`);
      }
    }
    expect(unmapped).toEqual([]);
  });
});
