/**
 * Text Postgres cannot store. A `text`/`jsonb` value may not hold U+0000 (Postgres answers 22P05
 * or 22021), and a lone UTF-16 surrogate has no UTF-8 form (jsonb answers 22P02 for `\ud800`).
 * Such input can only be an attack or a broken client, so the toolkit's readers refuse it at the
 * door, with the endpoint's 400, before any SQL sees it.
 */

/** A NUL, or a surrogate that is not half of a pair. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether `value` is text Postgres can store: no NUL, no lone surrogate. */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

/**
 * The path (`acoes.3.metadata.nota`, or `(key)` suffixes for object keys) of the first string in a
 * JSON-like value that Postgres cannot store, or null when every string is storable.
 */
export function findUnstorableText(value: unknown, path: string[] = []): string | null {
  if (typeof value === "string") return isStorableText(value) ? null : path.join(".") || "(value)";
  if (typeof value !== "object" || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    if (!isStorableText(key)) return [...path, "(key)"].join(".");
    const found = findUnstorableText(item, [...path, key]);
    if (found !== null) return found;
  }
  return null;
}
