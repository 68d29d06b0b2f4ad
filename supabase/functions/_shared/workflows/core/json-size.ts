/**
 * How big a value is, as the length of its JSON text (what `JSON.stringify(value).length` gives),
 * without building the text: the size budgets (limits.ts) measure every block's output, and a
 * measurement stops as soon as it passes the budget it is checked against, so an oversized value
 * costs no more than the budget to reject. Objects measured in full can be remembered in a cache:
 * a loop's results hold outputs measured already, so measuring them costs one lookup each.
 */

/** Characters JSON.stringify escapes (quote, backslash, controls) or writes as \u escapes (lone surrogates). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

function stringLength(text: string): number {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text).length : text.length + 2;
}

/** Whether an object property with this value is left out of JSON (as JSON.stringify does). */
function omitted(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}

function measure(value: unknown, budget: number, cache: WeakMap<object, number> | undefined): number {
  switch (typeof value) {
    case "string":
      return stringLength(value);
    case "number":
      return Number.isFinite(value) ? String(value).length : 4;
    case "boolean":
      return value ? 4 : 5;
    case "bigint":
      return String(value).length;
    case "object":
      break;
    default:
      // undefined, functions and symbols: `null` inside arrays (objects leave them out before this).
      return 4;
  }
  if (value === null) return 4;
  const known = cache?.get(value);
  if (known !== undefined) return known;
  const withJson = value as { toJSON?: () => unknown };
  if (typeof withJson.toJSON === "function") return measure(withJson.toJSON(), budget, cache);
  let total: number;
  if (Array.isArray(value)) {
    total = 2 + Math.max(0, value.length - 1);
    if (total > budget) return total;
    for (const item of value) {
      total += measure(item, budget - total, cache);
      if (total > budget) return total;
    }
  } else {
    total = 2;
    let first = true;
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const item = record[key];
      if (omitted(item)) continue;
      total += (first ? 0 : 1) + stringLength(key) + 1;
      first = false;
      total += measure(item, budget - total, cache);
      if (total > budget) return total;
    }
  }
  cache?.set(value, total);
  return total;
}

/**
 * The length of `value`'s JSON text when it is at most `limit`; otherwise some number above
 * `limit` (the measurement stopped there). `cache` remembers objects measured in full: pass the
 * same one only for values that are not changed afterwards.
 */
export function jsonLength(value: unknown, limit = Number.POSITIVE_INFINITY, cache?: WeakMap<object, number>): number {
  return measure(value, limit, cache);
}

/** The first `max` characters of `value`'s JSON text, built no further than that. */
export function jsonPrefix(value: unknown, max: number): string {
  const parts: string[] = [];
  let length = 0;
  const push = (text: string): boolean => {
    parts.push(text);
    length += text.length;
    return length < max;
  };
  const write = (item: unknown): boolean => {
    if (typeof item === "string") return push(JSON.stringify(item.length > max ? item.slice(0, max) : item));
    if (item === null || typeof item !== "object") return push(JSON.stringify(item) ?? "null");
    const withJson = item as { toJSON?: () => unknown };
    if (typeof withJson.toJSON === "function") return write(withJson.toJSON());
    if (Array.isArray(item)) {
      if (!push("[")) return false;
      for (let index = 0; index < item.length; index++) {
        if (index > 0 && !push(",")) return false;
        if (!write(item[index])) return false;
      }
      return push("]");
    }
    if (!push("{")) return false;
    let first = true;
    for (const [key, entry] of Object.entries(item)) {
      if (omitted(entry)) continue;
      if (!first && !push(",")) return false;
      first = false;
      if (!push(`${JSON.stringify(key)}:`)) return false;
      if (!write(entry)) return false;
    }
    return push("}");
  };
  write(value);
  return parts.join("").slice(0, max);
}
