/**
 * Turns config values into resolvers once, when a workflow is compiled, so each block run only
 * looks values up. A value without tokens resolves to itself (no copy, no allocation), which keeps
 * the per-block overhead of static configs near zero.
 *
 * Strings follow two rules. A string that is exactly one token resolves to the raw value (a number
 * stays a number, an object stays an object). Otherwise tokens are written into the text: strings
 * as they are, everything else as JSON. Code fields (see `codePaths`) are compiled differently:
 * their tokens become `__refs[i]` and the values travel to the sandbox as data; a token inside a
 * string or template literal travels as text (code-references.ts).
 */
import { compileCode } from "./code-references.ts";
import { parseTemplate, type EnvToken, type ReferenceToken, type Token } from "./references.ts";

/** Answers tokens for one block run; both throw a WorkflowError naming the token when it cannot. */
export interface TokenSource {
  ref(token: ReferenceToken): unknown;
  env(token: EnvToken): string;
}

/** A resolved code field: the source with `__refs[i]` placeholders and the values they stand for. */
export interface ResolvedCode {
  kind: "code";
  source: string;
  values: unknown[];
}

/** A compiled value: `resolve` produces the value for one run; `isStatic` when no token is inside. */
export interface CompiledValue {
  isStatic: boolean;
  resolve(source: TokenSource): unknown;
}

function tokenValue(token: Token, source: TokenSource): unknown {
  return token.kind === "env" ? source.env(token) : source.ref(token);
}

/** How a value is written into surrounding text. */
export function stringifyForText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function compileString(text: string): CompiledValue {
  if (!text.includes("<") && !text.includes("{{")) return { isStatic: true, resolve: () => text };
  const parts = parseTemplate(text);
  if (parts.length === 1) {
    const only = parts[0];
    if (only.kind === "text") return { isStatic: true, resolve: () => text };
    return { isStatic: false, resolve: (source) => tokenValue(only, source) };
  }
  return {
    isStatic: false,
    resolve: (source) => {
      let out = "";
      for (const part of parts) out += part.kind === "text" ? part.text : stringifyForText(tokenValue(part, source));
      return out;
    },
  };
}

function compileCodeField(text: string): CompiledValue {
  const { source, slots } = compileCode(text);
  return {
    isStatic: false,
    resolve: (tokenSource): ResolvedCode => ({
      kind: "code",
      source,
      values: slots.map((slot) => (slot.asText ? stringifyForText(tokenValue(slot.token, tokenSource)) : tokenValue(slot.token, tokenSource))),
    }),
  };
}

/**
 * Compiles a JSON value. `codePaths` lists the fields holding code, as patterns over keys and
 * array items: `"code"`, `"conditions[].expression"`.
 */
export function compileValue(value: unknown, codePaths: ReadonlySet<string> = new Set(), at = ""): CompiledValue {
  if (typeof value === "string") return codePaths.has(at) ? compileCodeField(value) : compileString(value);
  if (Array.isArray(value)) {
    const items = value.map((item) => compileValue(item, codePaths, `${at}[]`));
    if (items.every((item) => item.isStatic)) return { isStatic: true, resolve: () => value };
    return { isStatic: false, resolve: (source) => items.map((item) => item.resolve(source)) };
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).map(([key, item]) => [key, compileValue(item, codePaths, at === "" ? key : `${at}.${key}`)] as const);
    if (entries.every(([, item]) => item.isStatic)) return { isStatic: true, resolve: () => value };
    return {
      isStatic: false,
      resolve: (source) => {
        const out: Record<string, unknown> = {};
        for (const [key, item] of entries) out[key] = item.resolve(source);
        return out;
      },
    };
  }
  return { isStatic: true, resolve: () => value };
}
