/**
 * Validates API answers against docs/openapi.yaml, so the document and the code cannot drift:
 * every response a test receives is checked against the schema of its operation and status.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { parse } from "yaml";

interface Reference {
  $ref: string;
}
interface ResponseObject {
  content?: { "application/json"?: { schema?: unknown } };
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject | Reference> }>>;
  components: Record<string, unknown>;
}

/** The parsed document. */
export const openApi = parse(readFileSync(join(process.cwd(), "docs", "openapi.yaml"), "utf8")) as OpenApiDocument;

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: "openapi.json", components: openApi.components });
const compiled = new Map<string, ValidateFunction>();

/** Follows a local `#/components/...` reference inside the document. */
function resolve<T>(value: T | Reference): T {
  if (typeof value !== "object" || value === null || !("$ref" in value)) return value as T;
  const target = value.$ref.replace(/^#\//, "").split("/").reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], openApi);
  return resolve(target as T | Reference);
}

/** The validator of one operation's response body for a status. */
function validatorFor(method: string, path: string, status: number): ValidateFunction {
  const key = `${method} ${path} ${status}`;
  const known = compiled.get(key);
  if (known) return known;
  const operation = openApi.paths[path]?.[method.toLowerCase()];
  if (!operation) throw new Error(`docs/openapi.yaml has no operation ${method} ${path}`);
  const declared = operation.responses[String(status)];
  if (!declared) throw new Error(`docs/openapi.yaml does not declare status ${status} for ${method} ${path}`);
  const schema = resolve(declared).content?.["application/json"]?.schema;
  if (!schema) throw new Error(`docs/openapi.yaml has no JSON schema for ${key}`);
  const validate = ajv.compile(rewriteRefs(schema) as object);
  compiled.set(key, validate);
  return validate;
}

/** Points the document's local references at the registered copy of its components. */
function rewriteRefs<T>(schema: T): T {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/')) as T;
}

/** The schema violations of an answer (any API's) for operation `method path` (empty when it conforms). */
export function specViolations(method: string, path: string, answer: { status: number; body: unknown }): string[] {
  const validate = validatorFor(method, path, answer.status);
  if (validate(answer.body)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath || "(body)"} ${error.message ?? ""} ${JSON.stringify(error.params)}`);
}

/** The violations of `value` against the document's schema `components.schemas[name]` (empty when it conforms). */
export function schemaViolations(name: string, value: unknown): string[] {
  const key = `schema ${name}`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi.json#/components/schemas/${name}` });
    compiled.set(key, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath || "(value)"} ${error.message ?? ""} ${JSON.stringify(error.params)}`);
}
