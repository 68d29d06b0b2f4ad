/**
 * The workflow house's layers, checked on the import graph itself (docs/workflows.md, "Layers"):
 * no import circle anywhere under supabase/functions, and each layer importing only what it may.
 * A circle lets module initialisation order decide whether a binding is ready; a layer that
 * reaches up (the kernel into the executor, a spec into a handler) makes the catalogue load the
 * sandbox, the outbound client and the model providers. Test files are left out of the layer
 * rules (they may import anything to set up a case) but not out of the cycle check.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importCycles, importGraph, reachableFrom, type ImportGraph } from "./import-graph.ts";

const FUNCTIONS = join(import.meta.dirname, "..", "..", "supabase", "functions");
const WORKFLOWS = "_shared/workflows/";

const graph = importGraph(FUNCTIONS);

/** Production files under a folder of the workflow house. */
function filesIn(graph: ImportGraph, folder: string): string[] {
  return [...graph.keys()].filter((file) => file.startsWith(`${WORKFLOWS}${folder}/`) && !file.endsWith(".test.ts"));
}

/** `file → target` for every import of `files` whose target `forbidden` matches. */
function importsMatching(graph: ImportGraph, files: string[], forbidden: (target: string) => boolean): string[] {
  return files.flatMap((file) => (graph.get(file) ?? []).filter(forbidden).map((target) => `${file} → ${target}`));
}

const HANDLER = /^_shared\/workflows\/blocks\/[^/]+\/handler\.ts$/;
const inFolder = (...folders: string[]) => (target: string) => folders.some((folder) => target.startsWith(`${WORKFLOWS}${folder}/`));

describe("the import graph of supabase/functions", () => {
  it("reads the workflow house (a sanity check that the walk finds files and edges)", () => {
    expect(filesIn(graph, "core").length).toBeGreaterThan(5);
    expect(graph.get(`${WORKFLOWS}blocks/specs.ts`)).toContain(`${WORKFLOWS}blocks/wait/spec.ts`);
  });

  it("has no import circle", () => {
    const cycles = importCycles(graph);
    const described = cycles.map(({ files, loop }) => `${loop.join(" → ")} (${files.length} files in the circle: ${files.join(", ")})`);
    expect(described, "import circles, each as one loop and every file caught in it").toEqual([]);
  });

  it("keeps core/ free of the executor, the sandbox's runners, the blocks and runs/", () => {
    expect(importsMatching(graph, filesIn(graph, "core"), inFolder("executor", "sandbox", "blocks", "runs"))).toEqual([]);
  });

  it("keeps the sandbox's runners free of the executor, the blocks and runs/", () => {
    expect(importsMatching(graph, filesIn(graph, "sandbox"), inFolder("executor", "blocks", "runs", "api"))).toEqual([]);
  });

  it("keeps blocks/ free of the executor, the sandbox's runners, runs/ and api/", () => {
    expect(importsMatching(graph, filesIn(graph, "blocks"), inFolder("executor", "sandbox", "runs", "api"))).toEqual([]);
  });

  it("keeps the executor free of handlers and of runs/, which passes the handlers in", () => {
    const executor = filesIn(graph, "executor");
    expect(importsMatching(graph, executor, (target) => HANDLER.test(target) || target === `${WORKFLOWS}blocks/handlers.ts` || inFolder("runs", "api")(target))).toEqual([]);
  });

  it("lets no block spec import a handler, directly or through what it imports", () => {
    const specs = [...graph.keys()].filter((file) => /^_shared\/workflows\/blocks\/[^/]+\/spec\.ts$/.test(file));
    expect(specs.length).toBeGreaterThan(10);
    const leaks = specs.flatMap((spec) => [...reachableFrom(graph, spec)].filter((target) => HANDLER.test(target)).map((target) => `${spec} → … → ${target}`));
    expect(leaks).toEqual([]);
  });

  it("keeps the spec registry and the catalogue it renders for the database free of handlers, the sandbox's runners and the executor", () => {
    for (const entry of [`${WORKFLOWS}blocks/specs.ts`, `${WORKFLOWS}state/json-schemas.ts`]) {
      const reached = [...reachableFrom(graph, entry)];
      const leaks = reached.filter((target) => HANDLER.test(target) || target === `${WORKFLOWS}blocks/handlers.ts` || inFolder("sandbox", "executor", "runs")(target));
      expect(leaks, entry).toEqual([]);
    }
  });
});
