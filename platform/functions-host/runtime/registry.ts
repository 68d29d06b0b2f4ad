/**
 * Which functions exist, found again whenever their source changes. A slug is a folder matching
 * the CLI's pattern that holds `index.ts` (or is given an `entrypoint` in config), so `_shared`
 * and `tests` are never served. The same walk yields a fingerprint of every source file's path,
 * size and mtime: when it changes, the host replaces its workers (code reload on the next request).
 */
import type { FunctionRoot, FunctionSettings } from "../host-config.ts";

export const SLUG_PATTERN = /^[A-Za-z][A-Za-z0-9_-]*$/;

export interface FunctionEntry {
  slug: string;
  /** file:// URL of the entrypoint. */
  entrypoint: string;
  settings: FunctionSettings;
}

export interface Snapshot {
  functions: Map<string, FunctionEntry>;
  fingerprint: string;
}

const DEFAULTS: FunctionSettings = { verifyJwt: true, enabled: true };
const SKIPPED_DIRS = new Set(["node_modules", ".git"]);

function join(dir: string, name: string): string {
  return dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`;
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** Adds path, size and mtime of every file below `dir` to `parts`. */
function walk(dir: string, parts: string[]): void {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) {
      if (!SKIPPED_DIRS.has(entry.name) && !entry.name.startsWith(".")) walk(path, parts);
    } else if (entry.isFile) {
      try {
        const info = Deno.statSync(path);
        parts.push(`${path}:${info.size}:${info.mtime?.getTime() ?? 0}`);
      } catch {
        // Deleted between listing and stat: the next scan sees it.
      }
    }
  }
}

export function scan(roots: FunctionRoot[]): Snapshot {
  const functions = new Map<string, FunctionEntry>();
  const parts: string[] = [];
  for (const root of roots) {
    walk(root.dir, parts);
    const candidates = new Set<string>(Object.keys(root.settings));
    try {
      for (const entry of Deno.readDirSync(root.dir)) if (entry.isDirectory) candidates.add(entry.name);
    } catch {
      // A missing root (no fixtures folder) serves nothing.
    }
    for (const slug of candidates) {
      if (!SLUG_PATTERN.test(slug) || functions.has(slug)) continue;
      const settings = { ...DEFAULTS, ...root.settings[slug] };
      const path = settings.entrypoint ?? join(join(root.dir, slug), "index.ts");
      if (!settings.enabled || !isFile(path)) continue;
      functions.set(slug, { slug, entrypoint: new URL(`file://${path}`).href, settings });
    }
  }
  return { functions, fingerprint: parts.sort().join("\n") };
}

/** Rescans at most once per `intervalMs`, so a burst of requests costs one walk. */
export class Registry {
  private snapshot: Snapshot;
  private scannedAt = 0;

  constructor(
    private readonly roots: FunctionRoot[],
    private readonly intervalMs = 200,
  ) {
    this.snapshot = scan(roots);
    this.scannedAt = Date.now();
  }

  /** The current functions; `changed` is true when the sources differ from the previous call's. */
  current(): { snapshot: Snapshot; changed: boolean } {
    if (Date.now() - this.scannedAt < this.intervalMs) return { snapshot: this.snapshot, changed: false };
    const next = scan(this.roots);
    this.scannedAt = Date.now();
    const changed = next.fingerprint !== this.snapshot.fingerprint;
    this.snapshot = next;
    return { snapshot: next, changed };
  }
}
