/**
 * The nesting cap on JSON that clients send. JSON.parse accepts arrays nested a hundred thousand
 * deep, but everything after it that walks a value by recursion (schema validation, the workflow
 * engine's references and masking, Postgres' jsonb parser) runs out of stack long before that,
 * which answered 500 after the request had been admitted. Every JSON body is checked against
 * this cap right after parsing, before anything is admitted or charged.
 */

/** The deepest nesting of arrays and objects a JSON body may have (a bare scalar is depth 0). */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether `value` nests arrays and objects more than `limit` levels deep. Walks with its own
 * stack, so a value of any depth is measured without recursion, and stops at the first branch
 * past the limit.
 */
export function nestedDeeperThan(value: unknown, limit: number = MAX_JSON_DEPTH): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== "object" || item === null) continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof child === "object" && child !== null) pending.push([child, depth + 1]);
    }
  }
  return false;
}
