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
 * JSON-like value that Postgres cannot store, or null when every string is storable. Walks with
 * its own stack, so JSON nested thousands deep (which JSON.parse accepts) cannot overflow it.
 */
export function findUnstorableText(value: unknown): string | null {
  const pending: Visit[] = [{ value, key: null, parent: null }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (typeof next.value === "string") {
      if (!isStorableText(next.value)) return pathOf(next) || "(value)";
      continue;
    }
    if (typeof next.value !== "object" || next.value === null) continue;
    const entries = Object.entries(next.value);
    for (const [key] of entries) if (!isStorableText(key)) return [pathOf(next), "(key)"].filter(Boolean).join(".");
    // Pushed in reverse, so fields are checked in order and the first bad one is named.
    for (let index = entries.length - 1; index >= 0; index -= 1) pending.push({ value: entries[index][1], key: entries[index][0], parent: next });
  }
  return null;
}

/** A value met on the walk, linked to its parent so a path is only built for a hit. */
interface Visit {
  value: unknown;
  key: string | null;
  parent: Visit | null;
}

function pathOf(visit: Visit): string {
  const keys: string[] = [];
  for (let at: Visit | null = visit; at?.key != null; at = at.parent) keys.push(at.key);
  return keys.reverse().join(".");
}
