import type { z } from "zod";
import { AuthError } from "./errors.ts";

const PREFIX = "Could not parse request body as JSON: ";

function describe(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (value === null) return "null";
  return typeof value === "object" ? "object" : typeof value;
}

/** Whether a decoded JSON value holds U+0000 in any string or key. */
function holdsNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\u0000");
  if (Array.isArray(value)) return value.some(holdsNul);
  if (value !== null && typeof value === "object") return Object.entries(value).some(([key, item]) => key.includes("\u0000") || holdsNul(item));
  return false;
}

/**
 * Reads a JSON body and decodes it with a schema. Malformed JSON and wrongly typed fields both answer
 * 400 `bad_json`, as GoTrue's `retrieveRequestParams` does (Go's decoder reports both the same way);
 * a NUL character anywhere in it is 400 `validation_failed`.
 * An empty body is malformed unless `emptyAllowed` (DELETE /admin/users/{id} only parses non-empty bodies).
 */
export async function readBody<S extends z.ZodType>(request: Request, schema: S, emptyAllowed = false): Promise<z.infer<S>> {
  const raw = await request.text();
  if (raw.trim() === "") {
    if (emptyAllowed) return schema.parse({});
    throw new AuthError(400, "bad_json", `${PREFIX}unexpected end of JSON input`);
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new AuthError(400, "bad_json", PREFIX + (error instanceof Error ? error.message : "invalid JSON"));
  }
  // Go decodes `null` into an untouched struct.
  if (value === null) value = {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new AuthError(400, "bad_json", `${PREFIX}json: cannot unmarshal ${describe(value)} into Go value of type object`);
  }
  // Postgres text and jsonb cannot hold U+0000, so such a value would fail at the database with a
  // 500 (as it does in GoTrue); refused here as the bad input it is.
  if (holdsNul(value)) throw new AuthError(400, "validation_failed", "Request body cannot contain the NUL character (\\u0000)");
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.join(".");
    const received = describe(issue.path.reduce<unknown>((node, key) => (node as Record<PropertyKey, unknown>)?.[key], value));
    const expected = "expected" in issue && typeof issue.expected === "string" ? issue.expected : "the declared type";
    throw new AuthError(400, "bad_json", `${PREFIX}json: cannot unmarshal ${received} into field ${field} of type ${expected}`);
  }
  return parsed.data;
}
