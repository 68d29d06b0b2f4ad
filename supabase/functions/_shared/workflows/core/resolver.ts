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
  /** Each placeholder's reference as the user wrote it (`<api.items>`), for messages about the code. */
  refs?: string[];
}

/** A compiled value: `resolve` produces the value for one run; `isStatic` when no token is inside. */
export interface CompiledValue {
  isStatic: boolean;
  /** Whether a code field is inside (its resolved form is not what the user wrote). */
  hasCode: boolean;
  resolve(source: TokenSource): unknown;
  /**
   * A resolved value as a trace shows it: each code field as the user wrote it, references and
   * all, rather than the `__refs[i]` source the sandbox runs (whose values are already in the
   * spans of the blocks they come from). Everything else is the resolved value itself, not a copy.
   */
  traced(resolved: unknown): unknown;
}

const asResolved = (resolved: unknown) => resolved;

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
  if (!text.includes("<") && !text.includes("{{")) return { isStatic: true, hasCode: false, resolve: () => text, traced: asResolved };
  const parts = parseTemplate(text);
  if (parts.length === 1) {
    const only = parts[0];
    if (only.kind === "text") return { isStatic: true, hasCode: false, resolve: () => text, traced: asResolved };
    return { isStatic: false, hasCode: false, resolve: (source) => tokenValue(only, source), traced: asResolved };
  }
  return {
    isStatic: false,
    hasCode: false,
    traced: asResolved,
    resolve: (source) => {
      let out = "";
      for (const part of parts) out += part.kind === "text" ? part.text : stringifyForText(tokenValue(part, source));
      return out;
    },
  };
}

function compileCodeField(text: string): CompiledValue {
  const { source, slots } = compileCode(text);
  const refs = slots.map((slot) => slot.token.raw);
  return {
    isStatic: false,
    hasCode: true,
    traced: () => text,
    resolve: (tokenSource): ResolvedCode => ({
      kind: "code",
      source,
      refs,
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
    if (items.every((item) => item.isStatic)) return { isStatic: true, hasCode: false, resolve: () => value, traced: asResolved };
    const hasCode = items.some((item) => item.hasCode);
    return {
      isStatic: false,
      hasCode,
      resolve: (source) => items.map((item) => item.resolve(source)),
      traced: hasCode ? (resolved) => (Array.isArray(resolved) ? resolved.map((item, index) => items[index]?.traced(item) ?? item) : resolved) : asResolved,
    };
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).map(([key, item]) => [key, compileValue(item, codePaths, at === "" ? key : `${at}.${key}`)] as const);
    if (entries.every(([, item]) => item.isStatic)) return { isStatic: true, hasCode: false, resolve: () => value, traced: asResolved };
    const hasCode = entries.some(([, item]) => item.hasCode);
    return {
      isStatic: false,
      hasCode,
      resolve: (source) => {
        const out: Record<string, unknown> = {};
        for (const [key, item] of entries) out[key] = item.resolve(source);
        return out;
      },
      traced: hasCode
        ? (resolved) => {
            if (resolved === null || typeof resolved !== "object" || Array.isArray(resolved)) return resolved;
            const out: Record<string, unknown> = { ...(resolved as Record<string, unknown>) };
            for (const [key, item] of entries) if (item.hasCode && Object.hasOwn(out, key)) out[key] = item.traced(out[key]);
            return out;
          }
        : asResolved,
    };
  }
  return { isStatic: true, hasCode: false, resolve: () => value, traced: asResolved };
}
