import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/**
 * The static import graph of a folder's TypeScript: file → the files it imports. Paths are relative
 * to the root given, with `/` separators, so a printed cycle reads the same on every machine.
 */
export type ImportGraph = Map<string, string[]>;

/**
 * `import … from "…"`, `import "…"` and `export … from "…"`, relative specifiers only: packages and
 * `node:` modules cannot close a circle inside the folder. Dynamic `import()` and `new URL()` are
 * left out on purpose: they load at run time, after every module has initialised, so they cannot
 * leave a binding in its temporal dead zone the way a static circle can.
 */
const STATIC_IMPORT = /^\s*(?:import|export)\b[^"';]*?(?:\bfrom\s*)?["'](\.{1,2}\/[^"']+)["']/gm;

/** Every `.ts` file under `dir`, recursively, skipping `node_modules`. */
export function typeScriptFiles(dir: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules") continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files.push(...typeScriptFiles(path));
    else if (name.endsWith(".ts")) files.push(path);
  }
  return files;
}

/** The relative specifiers a module imports statically, in source order. */
export function staticImports(source: string): string[] {
  return [...source.matchAll(STATIC_IMPORT)].map((match) => match[1]!);
}

/** The import graph of every `.ts` file under `root`; edges leaving `root` are dropped. */
export function importGraph(root: string): ImportGraph {
  const graph: ImportGraph = new Map();
  const toKey = (path: string) => relative(root, path).split("\\").join("/");
  for (const file of typeScriptFiles(root)) {
    const targets = staticImports(readFileSync(file, "utf8"))
      .map((specifier) => resolve(dirname(file), specifier))
      .filter((target) => !relative(root, target).startsWith(".."))
      .map(toKey);
    graph.set(toKey(file), [...new Set(targets)]);
  }
  return graph;
}

/** One import circle: every file caught in it, and one loop through them a reader can follow. */
export interface ImportCycle {
  /** The strongly connected component: each of these files reaches every other through imports. */
  files: string[];
  /** The shortest loop from the component's first file back to itself. */
  loop: string[];
}

/**
 * Every strongly connected component with more than one file (or a file that imports itself):
 * Tarjan finds the components, a breadth-first search names one loop through each.
 */
export function importCycles(graph: ImportGraph): ImportCycle[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      const selfLoop = (graph.get(node) ?? []).includes(node);
      if (component.length > 1 || selfLoop) components.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components.map((files) => ({ files, loop: shortestLoop(graph, files) }));
}

/** The shortest loop from a component's first file back to itself, staying inside the component. */
function shortestLoop(graph: ImportGraph, component: string[]): string[] {
  const members = new Set(component);
  const start = component[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const next of graph.get(node) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const loop = [node];
        while (loop[0] !== start) loop.unshift(cameFrom.get(loop[0]!)!);
        return [...loop, start];
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, node);
        queue.push(next);
      }
    }
  }
  return component;
}

/** Every file `file` reaches through static imports, itself excluded. */
export function reachableFrom(graph: ImportGraph, file: string): Set<string> {
  const seen = new Set<string>();
  const queue = [...(graph.get(file) ?? [])];
  while (queue.length > 0) {
    const node = queue.shift()!;
    if (seen.has(node)) continue;
    seen.add(node);
    queue.push(...(graph.get(node) ?? []));
  }
  return seen;
}
