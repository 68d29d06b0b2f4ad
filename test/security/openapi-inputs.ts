/**
 * Requests generated from docs/openapi.yaml: every operation the document describes, with
 * fast-check arbitraries derived from its parameters and request body schema. Each generated
 * request either conforms to the schema or carries one or more mutations (a boundary just past a
 * limit, a wrong JSON type, a hostile string, a bad format, a missing required field, an unknown
 * field, a body that is not JSON at all), and says which, so a test knows what it sent.
 */
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { encode, HOSTILE_TEXT, WRONG_TYPES } from "./hostile.ts";

/** A JSON Schema as the document writes it (resolved: no `$ref` left). */
export type Schema = Record<string, unknown>;

/** One parameter of an operation. */
export interface Parameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required: boolean;
  schema: Schema;
}

/** One documented answer of an operation. */
export interface DocumentedResponse {
  contentTypes: string[];
  /** The JSON schema of an application/json answer, when it has one. */
  jsonSchema?: Schema;
}

/** One operation of the document, ready to generate requests for. */
export interface Operation {
  /** `METHOD /path/{template}` as the document writes it. */
  name: string;
  method: string;
  /** The document's path template. */
  path: string;
  /** Where the path lives under the local gateway: "" for the root, "/functions/v1" for a path with its own servers. */
  prefix: string;
  tags: string[];
  /** The security scheme names any of which the operation accepts ("" for none). */
  security: string[];
  parameters: Parameter[];
  body?: { contentType: string; required: boolean; schema: Schema };
  responses: Record<string, DocumentedResponse>;
}

/** A generated request: where it goes, what it carries, and the mutations it was given. */
export interface GeneratedRequest {
  method: string;
  /** Prefix, path with its parameters and the query string, percent-encoded. */
  url: string;
  headers: Record<string, string>;
  body?: string;
  mutations: string[];
}

/** Values a test supplies for a parameter or field by name (real ids, so requests get past the first lookup). */
export type KnownValues = Record<string, readonly unknown[]>;

interface Document {
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, unknown>;
  security?: Record<string, unknown>[];
}

/** The parsed docs/openapi.yaml. */
export const document = parse(readFileSync(join(process.cwd(), "docs", "openapi.yaml"), "utf8")) as Document;

const METHODS = ["get", "put", "post", "delete", "patch"];

/** Follows `$ref`s (local ones) all the way down, so generators see plain schemas. */
function resolved(value: unknown, hops = 0): unknown {
  if (hops > 20) throw new Error("docs/openapi.yaml: references chain more than 20 deep");
  if (Array.isArray(value)) return value.map((item) => resolved(item, hops));
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  if (typeof record.$ref === "string") {
    const target = record.$ref.replace(/^#\//, "").split("/").reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], document);
    if (target === undefined) throw new Error(`docs/openapi.yaml: dangling reference ${record.$ref}`);
    const { $ref: _ignored, ...rest } = record;
    return resolved({ ...(target as Record<string, unknown>), ...rest }, hops + 1);
  }
  return Object.fromEntries(Object.entries(record).map(([key, child]) => [key, resolved(child, hops)]));
}

/** A value with its own `$ref` followed, not those inside it. */
function shallow(value: unknown): unknown {
  const record = value as Record<string, unknown>;
  if (typeof record?.$ref !== "string") return value;
  return shallow(record.$ref.replace(/^#\//, "").split("/").reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], document));
}

/** Every operation of the document, in document order. */
export function operations(): Operation[] {
  const found: Operation[] = [];
  for (const [path, rawItem] of Object.entries(document.paths)) {
    const item = rawItem;
    const servers = item.servers as { url: string }[] | undefined;
    const prefix = servers ? new URL(servers[0].url).pathname.replace(/\/$/, "") : "";
    for (const method of METHODS.filter((candidate) => candidate in item)) {
      const operation = item[method] as Record<string, unknown>;
      const parameters = (resolved([...((item.parameters as unknown[] | undefined) ?? []), ...((operation.parameters as unknown[] | undefined) ?? [])]) as Parameter[]).map((parameter) => ({ ...parameter, required: parameter.required === true || parameter.in === "path" }));
      const requestBody = resolved(operation.requestBody) as { required?: boolean; content: Record<string, { schema?: Schema }> } | undefined;
      const contentType = requestBody ? Object.keys(requestBody.content)[0] : undefined;
      const security = ((operation.security ?? document.security ?? []) as Record<string, unknown>[]).map((requirement) => Object.keys(requirement)[0] ?? "");
      const responses = Object.fromEntries(Object.entries(operation.responses as Record<string, unknown>).map(([status, declared]) => [status, shallow(declared) as { content?: Record<string, { schema?: Schema }> }] as const).map(([status, response]) => [
        status,
        { contentTypes: Object.keys(response.content ?? {}), jsonSchema: response.content?.["application/json"]?.schema },
      ]));
      found.push({
        name: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        prefix,
        tags: (operation.tags as string[] | undefined) ?? [],
        security,
        parameters,
        body: requestBody && contentType ? { contentType, required: requestBody.required === true, schema: requestBody.content[contentType].schema ?? {} } : undefined,
        responses,
      });
    }
  }
  return found;
}

const typesOf = (schema: Schema): string[] => (Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === "string" ? [schema.type] : []);
const numberOr = (value: unknown, fallback: number) => (typeof value === "number" ? value : fallback);

/** Values that conform to `schema` (as far as a generator can tell: patterns and formats included). */
export function conforming(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (Array.isArray(schema.examples) && schema.examples.length > 0 && !schema.pattern) return fc.oneof(fc.constantFrom(...(schema.examples as unknown[])), conforming({ ...schema, examples: undefined }, depth));
  const variants = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (variants) return fc.oneof(...variants.map((variant) => conforming(variant, depth + 1)));
  const types = typesOf(schema);
  if (types.length > 1) return fc.oneof(...types.map((type) => conforming({ ...schema, type }, depth)));
  switch (types[0] ?? (schema.properties ? "object" : undefined)) {
    case "string": {
      if (schema.format === "uuid") return fc.uuid();
      if (schema.format === "date-time") return fc.date({ min: new Date("2000-01-01"), max: new Date("2100-01-01"), noInvalidDate: true }).map((date) => date.toISOString());
      if (schema.format === "email") return fc.emailAddress();
      const minLength = numberOr(schema.minLength, 0);
      const maxLength = Math.min(numberOr(schema.maxLength, 40), minLength + 40);
      if (typeof schema.pattern === "string") return fc.stringMatching(new RegExp(schema.pattern)).filter((text) => text.length >= minLength && text.length <= numberOr(schema.maxLength, Infinity));
      return fc.string({ minLength, maxLength });
    }
    case "integer":
      return fc.integer({ min: numberOr(schema.minimum, -1_000), max: numberOr(schema.maximum, 1_000_000) });
    case "number":
      return fc.double({ min: numberOr(schema.minimum, -1e6), max: numberOr(schema.maximum, 1e6), noNaN: true, noDefaultInfinity: true });
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return fc.array(conforming((schema.items as Schema | undefined) ?? {}, depth + 1), { minLength: numberOr(schema.minItems, 0), maxLength: Math.min(numberOr(schema.maxItems, 3), 3) });
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      if (depth > 3 || Object.keys(properties).length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
      return fc.record(Object.fromEntries(Object.entries(properties).map(([key, child]) => [key, conforming(child, depth + 1)])), { requiredKeys: (schema.required as string[] | undefined) ?? [] });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** One value that breaks `schema`, with a word for how. */
export interface Mutant {
  value: unknown;
  how: string;
}

/** Values just past the limits of `schema`, of the wrong type, of the wrong format, or hostile. */
export function malformed(schema: Schema): fc.Arbitrary<Mutant> {
  const types = typesOf(schema);
  const cases: Mutant[] = [];
  const add = (how: string, ...values: unknown[]) => values.forEach((value) => cases.push({ value, how }));
  if (typeof schema.minLength === "number" && schema.minLength > 0) add("below minLength", "x".repeat(schema.minLength - 1));
  if (typeof schema.maxLength === "number") add("above maxLength", "x".repeat(schema.maxLength + 1));
  if (typeof schema.minimum === "number") add("below minimum", schema.minimum - 1, schema.minimum - 0.5);
  if (typeof schema.maximum === "number") add("above maximum", schema.maximum + 1, Number.MAX_SAFE_INTEGER + 2);
  if (types.includes("integer")) add("not an integer", 1.5, 1e21, 2 ** 63);
  if (schema.format === "uuid") add("not a uuid", "not-a-uuid", "00000000-0000-0000-0000-00000000000g", "{00000000-0000-4000-8000-000000000000}");
  if (schema.format === "date-time") add("not a date-time", "2026-13-45T25:61:00Z", "yesterday", "2026-11-24");
  if (schema.format === "email") add("not an e-mail", "a@", "@b", "a b@c.d");
  if (Array.isArray(schema.enum) || "const" in schema) add("outside the enum", "not-in-the-enum", "");
  if (typeof schema.pattern === "string") add("breaks the pattern", "-", "a b", "Ä");
  if (typeof schema.maxItems === "number") add("above maxItems", Array.from({ length: schema.maxItems + 1 }, () => "x"));
  for (const value of WRONG_TYPES) if (!fitsType(types, value)) add("wrong type", value);
  add("hostile text", ...HOSTILE_TEXT);
  return fc.constantFrom(...cases);
}

/** Whether `value` has one of `types` (no types: anything fits). */
function fitsType(types: string[], value: unknown): boolean {
  if (types.length === 0) return true;
  const actual = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  return types.some((type) => type === actual || (type === "integer" && Number.isInteger(value)) || (type === "number" && actual === "number"));
}

/** A parameter's or field's value: a known one, a conforming one, or (one time in four) a mutant. */
function valueFor(name: string, schema: Schema, known: KnownValues): fc.Arbitrary<{ value: unknown; mutation?: string }> {
  const fitting = known[name] ? fc.oneof({ arbitrary: fc.constantFrom(...known[name]), weight: 3 }, { arbitrary: conforming(schema), weight: 1 }) : conforming(schema);
  return fc.oneof(
    { arbitrary: fitting.map((value) => ({ value })), weight: 3 },
    { arbitrary: malformed(schema).map(({ value, how }) => ({ value, mutation: `${name}: ${how} ${JSON.stringify(value)?.slice(0, 40)}` })), weight: 1 },
  );
}

/** Text of a value for a URL or header: strings as they are, anything else as JSON. */
const asText = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value) ?? "");

/** A header value fetch can send: printable ASCII kept, anything else percent-encoded (still malformed for the server). */
const headerText = (value: unknown) => {
  const text = asText(value);
  return /^[\x20-\x7e]*$/.test(text) ? text.trim() : encode(text);
};

/** Bodies the JSON parser or the form reader must refuse. */
const BROKEN_BODIES = ["", "{", '{"a":', "[1,2", "nul", "null", "[]", '"text"', "1e999999", '{"__proto__":{"admin":true}}'];

/** A request body for `schema`: conforming, with one field mutated, a required field missing, an unknown field, or not a body at all. */
function bodyFor(schema: Schema, known: KnownValues): fc.Arbitrary<{ value: unknown; raw?: string; mutations: string[] }> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const names = Object.keys(properties);
  const required = (schema.required as string[] | undefined) ?? [];
  if (names.length === 0) return conforming(schema).map((value) => ({ value, mutations: [] }));
  const fields = fc.record(Object.fromEntries(names.map((name) => [name, fc.option(valueFor(name, properties[name], known), { nil: undefined, freq: required.includes(name) ? 20 : 3 })])));
  const assembled = fields.map((chosen) => {
    const value: Record<string, unknown> = {};
    const mutations: string[] = [];
    for (const [name, entry] of Object.entries(chosen)) {
      if (entry === undefined) {
        if (required.includes(name)) mutations.push(`${name}: required, missing`);
        continue;
      }
      value[name] = entry.value;
      if (entry.mutation) mutations.push(entry.mutation);
    }
    return { value, mutations };
  });
  const withUnknownField = fc.tuple(assembled, fc.constantFrom("unexpected", "__proto__", "constructor", "x".repeat(300))).map(([body, key]) => ({
    value: { ...body.value, [key]: "extra" },
    mutations: [...body.mutations, ...(schema.additionalProperties === false ? [`unknown field ${key.slice(0, 20)}`] : [])],
  }));
  const broken = fc.constantFrom(...BROKEN_BODIES).map((raw) => ({ value: undefined, raw, mutations: [`body ${JSON.stringify(raw)}`] }));
  return fc.oneof({ arbitrary: assembled, weight: 6 }, { arbitrary: withUnknownField, weight: 1 }, { arbitrary: broken, weight: 1 });
}

/** The body's text in the operation's content type. */
function bodyText(contentType: string, body: { value: unknown; raw?: string }): string {
  if (body.raw !== undefined) return body.raw;
  if (contentType === "application/x-www-form-urlencoded") {
    const form = new URLSearchParams();
    for (const [key, value] of Object.entries((body.value ?? {}) as Record<string, unknown>)) form.append(key, asText(value));
    return form.toString();
  }
  return JSON.stringify(body.value);
}

/** Requests for `operation`: parameters and body from its schemas, values from `known` where the test has real ones. */
export function requests(operation: Operation, known: KnownValues = {}): fc.Arbitrary<GeneratedRequest> {
  const parameters = fc.tuple(...operation.parameters.map((parameter) => (parameter.required ? valueFor(parameter.name, parameter.schema, known) : fc.option(valueFor(parameter.name, parameter.schema, known), { nil: undefined, freq: 2 }))));
  const body = operation.body ? bodyFor(operation.body.schema, known) : fc.constant(undefined);
  return fc.tuple(parameters, body).map(([values, generatedBody]) => {
    const mutations: string[] = [];
    let path = operation.path;
    const query = new URLSearchParams();
    const headers: Record<string, string> = {};
    operation.parameters.forEach((parameter, index) => {
      const chosen = values[index];
      if (chosen === undefined) return;
      if (chosen.mutation) mutations.push(chosen.mutation);
      if (parameter.in === "path") path = path.replace(`{${parameter.name}}`, encode(asText(chosen.value)));
      else if (parameter.in === "query") query.append(parameter.name, asText(chosen.value));
      else if (parameter.in === "header") headers[parameter.name.toLowerCase()] = headerText(chosen.value);
    });
    // URLSearchParams encodes a lone surrogate as U+FFFD; the hostile encoder sends the bytes a careless client would.
    const search = [...query.entries()].map(([key, value]) => `${encode(key)}=${encode(value)}`).join("&");
    let text: string | undefined;
    if (operation.body && generatedBody) {
      text = bodyText(operation.body.contentType, generatedBody);
      headers["content-type"] = operation.body.contentType;
      mutations.push(...generatedBody.mutations);
    }
    return { method: operation.method, url: `${operation.prefix}${path}${search ? `?${search}` : ""}`, headers, body: text, mutations };
  });
}
