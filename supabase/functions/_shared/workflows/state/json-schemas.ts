/**
 * The zod schemas rendered as JSON Schema, for the database: migration
 * `..._workflows-validation.sql` stores these documents in `workflows_private.block_types` and
 * `workflows_private.schemas`, and a small JSON Schema validator in SQL checks saved drafts against
 * them. zod stays the one source of truth: test/workflows/validation-parity.test.ts fails when the
 * stored documents differ from what this module produces, and `catalogueSql()` writes the
 * statements for the migration that brings them up to date.
 */
import { z } from "zod";
import { BLOCK_TYPES, type BlockCategory } from "./catalogue.ts";
import { workflowStateSchema } from "./state-schema.ts";

/** A JSON Schema document (the draft-07 subset listed in SUPPORTED_KEYWORDS). */
export type JsonSchema = { [keyword: string]: unknown };

/** The keywords the SQL validator implements; a schema using any other one is refused by the test. */
export const SUPPORTED_KEYWORDS: ReadonlySet<string> = new Set([
  "type",
  "enum",
  "const",
  "properties",
  "required",
  "additionalProperties",
  "propertyNames",
  "items",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "pattern",
  "anyOf",
]);

/** Drops annotations the validator ignores (`$schema`, `default`, `description`), recursively. */
function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== "object") return value;
  const out: JsonSchema = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === "$schema" || key === "default" || key === "description") continue;
    // Inside `properties` the keys are field names, not keywords, so they are kept as they are.
    out[key] = key === "properties" ? Object.fromEntries(Object.entries(item as JsonSchema).map(([name, schema]) => [name, strip(schema)])) : strip(item);
  }
  return out;
}

/** JSON Schema of a zod schema, as the database stores it. */
export function toJsonSchema(schema: z.ZodType): JsonSchema {
  return strip(z.toJSONSchema(schema, { io: "input", target: "draft-7" })) as JsonSchema;
}

/** The state envelope: blocks (with `config` left open), edges, loops and parallels. */
export function stateJsonSchema(): JsonSchema {
  return toJsonSchema(workflowStateSchema);
}

/** One catalogue row per block type. */
export interface CatalogueRow {
  type: string;
  category: BlockCategory;
  configSchema: JsonSchema;
}

/** Every block type with its category and config schema. */
export function catalogueRows(): CatalogueRow[] {
  return Object.entries(BLOCK_TYPES).map(([type, info]) => ({ type, category: info.category, configSchema: toJsonSchema(info.configSchema) }));
}

/** Every keyword used anywhere in a schema (keys of `properties` excluded). */
export function keywordsOf(schema: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const item of schema) keywordsOf(item, out);
  else if (schema !== null && typeof schema === "object") {
    for (const [key, value] of Object.entries(schema)) {
      out.add(key);
      if (key === "properties") for (const property of Object.values(value as JsonSchema)) keywordsOf(property, out);
      else keywordsOf(value, out);
    }
  }
  return out;
}

function literal(value: unknown): string {
  return `'${JSON.stringify(value).replaceAll("'", "''")}'::jsonb`;
}

/** SQL that makes the database's catalogue match the zod schemas (for a new migration). */
export function catalogueSql(): string {
  const rows = catalogueRows().map((row, index) => `  (${index + 1}, '${row.type}', '${row.category}', ${literal(row.configSchema)})`);
  return [
    "delete from workflows_private.block_types;",
    `insert into workflows_private.block_types (position, type, category, config_schema) values\n${rows.join(",\n")};`,
    `insert into workflows_private.schemas (name, schema) values ('state', ${literal(stateJsonSchema())})`,
    "  on conflict (name) do update set schema = excluded.schema;",
  ].join("\n");
}
