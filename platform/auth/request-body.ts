import type { z } from "zod";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "../../supabase/functions/_shared/http/json-depth.ts";
import { AuthError } from "./errors.ts";

const PREFIX = "Could not parse request body as JSON: ";

function describe(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (value === null) return "null";
  return typeof value === "object" ? "object" : typeof value;
}

/** Whether a decoded JSON value holds U+0000 in any string or key. Iterative: bodies may nest deep. */
function holdsNul(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === "string") {
      if (item.includes("\u0000")) return true;
    } else if (item !== null && typeof item === "object") {
      for (const [key, child] of Object.entries(item)) {
        if (key.includes("\u0000")) return true;
        pending.push(child);
      }
    }
  }
  return false;
}

/**
 * Reads a JSON body and decodes it with a schema. Malformed JSON and wrongly typed fields both answer
 * 400 `bad_json`, as GoTrue's `retrieveRequestParams` does (Go's decoder reports both the same way);
 * a NUL character anywhere in it is 400 `validation_failed`, and nesting deeper than MAX_JSON_DEPTH
 * is 400 `bad_json` ("exceeded max depth", Go's words).
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
  // Go's decoder stops at 10,000 levels with this message; ours stops at the cap every JSON body
  // of the project is held to, before anything below walks the value by recursion.
  if (nestedDeeperThan(value, MAX_JSON_DEPTH)) throw new AuthError(400, "bad_json", `${PREFIX}exceeded max depth`);
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
