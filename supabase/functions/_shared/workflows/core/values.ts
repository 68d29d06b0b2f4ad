/** Small helpers for the JSON values blocks exchange, shared by the engine and the blocks. */

/** A value as a plain object, or null when it is not one. */
export function asRecord(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** A short JSON preview of a value for error messages. */
export function preview(value: unknown, max = 80): string {
  const text = value === undefined ? "undefined" : JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
