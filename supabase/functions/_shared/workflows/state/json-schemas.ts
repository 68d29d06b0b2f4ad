/**
 * The catalogue rendered for the database: each block type's zod config schema as JSON Schema, its
 * config rules and its choice handles as JSON, and the state envelope's schema. The catalogue
 * migrations store them in `workflows_private.block_types` and `workflows_private.schemas`, where a
 * small JSON Schema validator and the rule interpreter check saved drafts against them. The block
 * folders stay the one source of truth: test/workflows/validation-corpus.test.ts fails when the
 * stored catalogue differs from what this module produces, and `catalogueSql()` writes the
 * migration that brings it up to date.
 */
import { z } from "zod";
import type { BlockCategory } from "../blocks/block-spec.ts";
import { BLOCK_SPECS } from "../blocks/specs.ts";
import type { ConfigRule } from "./config-rules.ts";
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

/** What the database's validator needs of a choosing block's handles (the engine also reads `outputField`). */
export interface StoredChoice {
  prefix: string;
  list: string;
  noun: string;
}

/** One catalogue row per block type, as `workflows_private.block_types` holds it. */
export interface CatalogueRow {
  type: string;
  category: BlockCategory;
  configSchema: JsonSchema;
  rules: readonly ConfigRule[];
  choice: StoredChoice | null;
}

/** Every block type with its category, config schema, rules and choice handles, in catalogue order. */
export function catalogueRows(): CatalogueRow[] {
  return BLOCK_SPECS.map((spec) => ({
    type: spec.type,
    category: spec.category,
    configSchema: toJsonSchema(spec.configSchema),
    rules: spec.rules,
    choice: "choice" in spec && spec.choice ? { prefix: spec.choice.prefix, list: spec.choice.list, noun: spec.choice.noun } : null,
  }));
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

/**
 * A migration that makes the database's catalogue match the block folders: every row replaced, and
 * the state envelope's schema. Generated, never edited by hand: while the project is unreleased it
 * replaces the content of `supabase/migrations/<timestamp>_workflows-catalogue.sql` (docs/database.md).
 */
export function catalogueSql(): string {
  const rows = catalogueRows().map(
    (row, index) => `  (${index + 1}, '${row.type}', '${row.category}', ${literal(row.configSchema)},\n    ${literal(row.rules)},\n    ${row.choice ? literal(row.choice) : "null"})`,
  );
  return [
    "-- Workflow service: the block catalogue, generated from the block folders by catalogueSql() in",
    "-- supabase/functions/_shared/workflows/state/json-schemas.ts. Each row is a block type's category, the JSON",
    "-- Schema of its config, its config rules and its choice handles; the state row is the envelope's",
    "-- JSON Schema. Do not edit: change blocks/<type>/ and write catalogueSql() over this file.",
    "",
    "delete from workflows_private.block_types;",
    `insert into workflows_private.block_types (position, type, category, config_schema, rules, choice) values\n${rows.join(",\n")};`,
    `insert into workflows_private.schemas (name, schema) values ('state', ${literal(stateJsonSchema())})`,
    "  on conflict (name) do update set schema = excluded.schema;",
    "",
  ].join("\n");
}
