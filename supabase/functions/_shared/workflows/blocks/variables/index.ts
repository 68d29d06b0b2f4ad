/** The `variables` block type: sets workflow variables, read later as `<variable.name>`. */
import { defineBlock } from "../block-definition.ts";
import { variablesConfigSchema } from "./config.ts";
import { variablesHandler } from "./handler.ts";
import { variablesRules } from "./rules.ts";

/** Variables. */
export const variablesBlock = defineBlock({
  type: "variables",
  category: "core",
  summary: "Sets workflow variables, readable later as <variable.name>.",
  configSchema: variablesConfigSchema,
  rules: variablesRules,
  handler: variablesHandler,
});
