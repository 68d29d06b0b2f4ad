/**
 * The reference syntax inside config values: `<head.path>` reads a block output or the run's own
 * state, `{{NAME}}` an environment variable. Parsing happens once when a workflow is compiled;
 * resolution (resolver.ts) only walks the parsed parts.
 *
 * The syntax is deliberately narrow so ordinary text and code rarely look like a reference: the
 * head is a normalised block name (letters, digits, `_`, `-`; no spaces) and at least one `.field`
 * or `[index]` must follow, so HTML such as `<b>` or a comparison `a < b` is left alone.
 */

/** One step of a path: a property name or an array index. */
export type PathSegment = string | number;

/** `<head.path>` as written, with its head lower-cased (names are compared normalised). */
export interface ReferenceToken {
  kind: "ref";
  raw: string;
  head: string;
  path: PathSegment[];
}

/** `{{NAME}}` as written. */
export interface EnvToken {
  kind: "env";
  raw: string;
  name: string;
}

/** Either kind of token. */
export type Token = ReferenceToken | EnvToken;

/** A string split into literal text and tokens. */
export type TemplatePart = { kind: "text"; text: string } | Token;

const TOKEN_PATTERN = /<([A-Za-z0-9_-]+)((?:\.[A-Za-z0-9_$-]+|\[\d+\])+)>|\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
const SEGMENT_PATTERN = /\.([A-Za-z0-9_$-]+)|\[(\d+)\]/g;

function parsePath(text: string): PathSegment[] {
  const segments: PathSegment[] = [];
  for (const match of text.matchAll(SEGMENT_PATTERN)) segments.push(match[1] ?? Number(match[2]));
  return segments;
}

/** Splits a string into text and tokens; a string without tokens yields a single text part. */
export function parseTemplate(text: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let last = 0;
  for (const match of text.matchAll(TOKEN_PATTERN)) {
    if (match.index > last) parts.push({ kind: "text", text: text.slice(last, match.index) });
    if (match[3] !== undefined) parts.push({ kind: "env", raw: match[0], name: match[3] });
    else parts.push({ kind: "ref", raw: match[0], head: match[1].toLowerCase(), path: parsePath(match[2]) });
    last = match.index + match[0].length;
  }
  if (last < text.length || parts.length === 0) parts.push({ kind: "text", text: text.slice(last) });
  return parts;
}

/** Writes a path back in reference syntax: `["items", 0, "id"]` → `items[0].id`. */
export function formatPath(path: readonly PathSegment[]): string {
  return path.map((segment, index) => (typeof segment === "number" ? `[${segment}]` : index === 0 ? segment : `.${segment}`)).join("");
}

/** Outcome of walking a path: the value, or where the walk stopped and what was there. */
export type PathLookup = { found: true; value: unknown } | { found: false; depth: number; available: string[] };

function availableKeys(value: unknown): string[] {
  if (Array.isArray(value)) return value.length === 0 ? [] : [`[0]..[${value.length - 1}]`, "length"];
  if (value !== null && typeof value === "object") return Object.keys(value).slice(0, 20);
  return [];
}

/**
 * Walks `path` through `value` using own properties only (so `__proto__` or `constructor` never
 * reach a prototype). Arrays take indexes (`[0]` or `.0`) and `length`; strings take `length`.
 */
export function getPath(value: unknown, path: readonly PathSegment[], from = 0): PathLookup {
  let current = value;
  for (let depth = from; depth < path.length; depth++) {
    const segment = path[depth];
    if (Array.isArray(current)) {
      if (segment === "length") current = current.length;
      else {
        const index = typeof segment === "number" ? segment : /^\d+$/.test(segment) ? Number(segment) : -1;
        if (index < 0 || index >= current.length) return { found: false, depth, available: availableKeys(current) };
        current = current[index];
      }
    } else if (typeof current === "string" && segment === "length") {
      current = current.length;
    } else if (current !== null && typeof current === "object" && Object.hasOwn(current, segment)) {
      current = (current as Record<string, unknown>)[String(segment)];
    } else {
      return { found: false, depth, available: availableKeys(current) };
    }
  }
  return { found: true, value: current };
}
