import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BLOCK_HANDLERS } from "./handlers.ts";
import { BLOCK_SPECS, BLOCK_TYPES, isBlockType } from "./specs.ts";
import { configRuleSchema } from "../state/config-rules.ts";
import { toJsonSchema, type JsonSchema } from "../state/json-schemas.ts";

/** The properties a config schema declares, and those of the entries of each list property. */
function propertiesOf(schema: JsonSchema): Record<string, JsonSchema> {
  return (schema.properties ?? {}) as Record<string, JsonSchema>;
}

describe("the block catalogue", () => {
  it("knows every block type and its category", () => {
    expect(Object.fromEntries(Object.entries(BLOCK_TYPES).map(([type, info]) => [type, info.category]))).toEqual({
      api_trigger: "trigger",
      manual_trigger: "trigger",
      generic_webhook: "trigger",
      schedule: "trigger",
      condition: "control",
      router: "control",
      function: "core",
      variables: "core",
      wait: "core",
      response: "core",
      loop: "container",
      parallel: "container",
      api: "core",
      vectordb: "tools",
      agent: "core",
      llm_router: "control",
      chat_trigger: "trigger",
      approval: "core",
    });
    expect(isBlockType("function")).toBe(true);
    expect(isBlockType("toString")).toBe(false);
  });

  it("is assembled from one folder per block type", () => {
    for (const { type } of BLOCK_SPECS) {
      expect(existsSync(new URL(`./${type.replaceAll("_", "-")}/spec.ts`, import.meta.url)), type).toBe(true);
    }
    expect(new Set(BLOCK_SPECS.map((definition) => definition.type)).size).toBe(BLOCK_SPECS.length);
  });

  it("has a handler for every block type except the containers the engine runs itself", () => {
    const types = BLOCK_SPECS.filter((definition) => definition.category !== "container").map((definition) => definition.type);
    expect(Object.keys(BLOCK_HANDLERS).sort()).toEqual(types.sort());
  });

  it("parses good configs and refuses unknown fields", () => {
    expect(BLOCK_TYPES.function.configSchema.safeParse({ code: "return 1;" }).success).toBe(true);
    expect(BLOCK_TYPES.function.configSchema.safeParse({ code: "x", codee: "y" }).success).toBe(false);
    expect(BLOCK_TYPES.wait.configSchema.safeParse({ amount: "<api.seconds>", unit: "seconds" }).success).toBe(true);
    expect(BLOCK_TYPES.schedule.configSchema.safeParse({ cronExpression: "* * *" }).success).toBe(false);
    expect(BLOCK_TYPES.loop.configSchema.safeParse({}).success).toBe(true);
  });

  it("declares rules in the rule vocabulary, over fields its config has", () => {
    for (const definition of BLOCK_SPECS) {
      const config = propertiesOf(toJsonSchema(definition.configSchema));
      for (const rule of definition.rules) {
        expect(configRuleSchema.safeParse(rule).success, `${definition.type}: ${JSON.stringify(rule)}`).toBe(true);
        const owner = rule.list === undefined ? config : propertiesOf((config[rule.list]?.items ?? {}) as JsonSchema);
        if (rule.list !== undefined) expect(Object.keys(config), `${definition.type}: list ${rule.list}`).toContain(rule.list);
        const fields = [..."field" in rule ? [rule.field] : [], ..."where" in rule ? [rule.where.field] : []];
        for (const field of fields) expect(Object.keys(owner), `${definition.type}: field ${field}`).toContain(field);
      }
      if (definition.choice) expect(Object.keys(config), `${definition.type}: choice list`).toContain(definition.choice.list);
    }
  });
});
