/**
 * The one way to read what a client sent: the body (JSON or an HTML form), the query string and
 * path values. Every reader refuses, with the service's own 4xx, what no handler should see:
 * a body over its byte cap (checked against Content-Length first, then while streaming, so an
 * endless body is never buffered), the wrong content type, bytes that are not UTF-8, malformed
 * JSON, JSON nested deeper than MAX_JSON_DEPTH (json-depth.ts), and text Postgres cannot store (a NUL, a lone surrogate: see text.ts) anywhere in it.
 * `validate` runs a zod schema and reports its issues the same way.
 */
import type { z } from "zod";
import type { InputPart, ServiceErrors } from "./errors.ts";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "./json-depth.ts";
import { findUnstorableText, isStorableText } from "./text.ts";

/** The part of a service's errors the readers need. */
export type ProblemWords = Pick<ServiceErrors, "describe">;

/** How a body is read. */
export interface BodyOptions {
  errors: ProblemWords;
  /** Largest body accepted, in bytes. */
  maxBytes: number;
  /**
   * The media type the body must be sent as, or null to take the body whatever its label (the
   * portal's JSON functions have always accepted unlabelled JSON).
   */
  contentType?: string | null;
}

/** Whether the request's Content-Type is `expected` (parameters such as charset allowed). */
function hasContentType(request: Request, expected: string): boolean {
  const type = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  return type === expected;
}

/** The body's bytes, refused once they pass `maxBytes` (before reading, when Content-Length says so). */
export async function readBodyBytes(request: Request, { errors, maxBytes }: BodyOptions): Promise<Uint8Array> {
  const tooLarge = () => errors.describe({ kind: "body_too_large", limit: maxBytes });
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw tooLarge();
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** UTF-8 bytes as text; bytes that are not UTF-8 are refused rather than silently replaced. */
export function decodeUtf8(bytes: Uint8Array, errors: ProblemWords, part: InputPart = "body"): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw errors.describe({ kind: "unstorable_text", part, field: "(body)" });
  }
}

/**
 * Whether the request carries no body: none at all, `Content-Length: 0`, or (HTTP/1.1's rule) neither
 * a Content-Length nor a Transfer-Encoding, as `curl -X POST` without data sends. Endpoints that take
 * an optional body read such a request as `{}`.
 */
export function hasNoBody(request: Request): boolean {
  const length = request.headers.get("content-length");
  return request.body === null || length === "0" || (length === null && !request.headers.has("transfer-encoding"));
}

/** A JSON body, parsed; refuses the problems listed in the module comment. */
export async function readJson(request: Request, options: BodyOptions): Promise<unknown> {
  const { errors, contentType = "application/json" } = options;
  if (contentType !== null && !hasContentType(request, contentType)) throw errors.describe({ kind: "unsupported_media_type", expected: contentType });
  const text = decodeUtf8(await readBodyBytes(request, options), errors);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw errors.describe({ kind: "malformed_json" });
  }
  if (nestedDeeperThan(value)) throw errors.describe({ kind: "nested_too_deep", limit: MAX_JSON_DEPTH });
  const field = findUnstorableText(value);
  if (field !== null) throw errors.describe({ kind: "unstorable_text", part: "body", field });
  return value;
}

/** An `application/x-www-form-urlencoded` body as its fields; a name given twice is refused (see checkedFields). */
export async function readForm(request: Request, options: BodyOptions): Promise<Record<string, string>> {
  const { errors, contentType = "application/x-www-form-urlencoded" } = options;
  if (contentType !== null && !hasContentType(request, contentType)) throw errors.describe({ kind: "unsupported_media_type", expected: contentType });
  const text = decodeUtf8(await readBodyBytes(request, options), errors);
  return checkedFields(new URLSearchParams(text), "body", errors);
}

/** The query string's parameters; a name given twice is refused (see checkedFields). */
export function readQuery(request: Request | URL, errors: ProblemWords): Record<string, string> {
  const url = request instanceof URL ? request : new URL(request.url);
  return checkedFields(url.searchParams, "query", errors);
}

/** Path values captured by the router, checked like any other input. */
export function readParams(params: Record<string, string>, errors: ProblemWords): Record<string, string> {
  return checkedFields(Object.entries(params), "path", errors);
}

/**
 * Every name once, with storable text. A name given twice is refused as invalid input rather than
 * resolved: which value counts is ambiguous (URLSearchParams.get takes the first, a record the
 * last, a proxy or cache in front may pick either), so `?token=A&token=B` could be read as one
 * token where it is logged or checked and as the other where it is used (issue 29, finding 7).
 */
function checkedFields(entries: Iterable<[string, string]>, part: InputPart, errors: ProblemWords): Record<string, string> {
  const fields: Record<string, string> = {};
  // A Set, not the record: assigning `__proto__` to a record makes no own property to find again.
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    if (!isStorableText(name) || !isStorableText(value)) throw errors.describe({ kind: "unstorable_text", part, field: isStorableText(name) ? name : "(name)" });
    if (seen.has(name)) {
      throw errors.describe({ kind: "invalid_input", part, issues: [{ code: "custom", path: [name], message: "Given more than once; send each parameter once", input: value }] });
    }
    seen.add(name);
    fields[name] = value;
  }
  return fields;
}

/** `value` parsed by `schema`, or the service's invalid_input error listing every issue. */
export function validate<Schema extends z.ZodType>(schema: Schema, value: unknown, part: InputPart, errors: ProblemWords): z.output<Schema> {
  const result = schema.safeParse(value);
  if (!result.success) throw errors.describe({ kind: "invalid_input", part, issues: result.error.issues });
  return result.data;
}
