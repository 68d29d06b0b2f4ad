import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { catalogueRows, catalogueSql, keywordsOf, stateJsonSchema, SUPPORTED_KEYWORDS, toJsonSchema } from "./json-schemas.ts";

describe("JSON Schema projections of the zod schemas", () => {
  it("use only keywords the SQL validator implements", () => {
    const used = keywordsOf([stateJsonSchema(), ...catalogueRows().map((row) => row.configSchema)]);
    expect([...used].filter((keyword) => !SUPPORTED_KEYWORDS.has(keyword))).toEqual([]);
  });

  it("render field rules the way the database reads them", () => {
    expect(toJsonSchema(z.object({ a: z.string().min(1), b: z.number().int().optional() }).strict())).toEqual({
      type: "object",
      properties: { a: { type: "string", minLength: 1 }, b: { type: "integer", minimum: -9007199254740991, maximum: 9007199254740991 } },
      required: ["a"],
      additionalProperties: false,
    });
    const fn = catalogueRows().find((row) => row.type === "function");
    expect(fn?.configSchema).toMatchObject({ required: ["code"], additionalProperties: false });
  });

  it("write the catalogue as a migration: schemas, rules and choice handles per block type", () => {
    const sql = catalogueSql();
    expect(sql).toMatch(/^-- Workflow service: the block catalogue, generated/);
    expect(sql).toContain("insert into workflows_private.block_types (position, type, category, config_schema, rules, choice) values");
    expect(sql).toContain("(7, 'function', 'core', '{");
    expect(sql).toContain(`'{"prefix":"condition-","list":"conditions","noun":"condition"}'::jsonb`);
    expect(sql).toContain(`"rule":"only_last","list":"routes"`);
    expect(sql).toContain("on conflict (name) do update");
  });

  it("match the catalogue migration checked in, so the database is told about every change", () => {
    const migrations = readdirSync(new URL("../../../../migrations/", import.meta.url)).filter((name) => name.endsWith("_workflows-catalogue.sql")).sort();
    const latest = readFileSync(new URL(`../../../../migrations/${migrations[migrations.length - 1]}`, import.meta.url), "utf8");
    expect(latest, "write catalogueSql() over the catalogue migration").toBe(catalogueSql());
  });
});
