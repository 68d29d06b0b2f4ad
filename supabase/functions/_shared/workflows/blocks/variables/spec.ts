/** The `variables` block type: sets workflow variables, read later as `<variable.name>`. */
import { defineBlock } from "../block-spec.ts";
import { variablesConfigSchema } from "./config.ts";
import { variablesRules } from "./rules.ts";

/** Variables. */
export const variablesSpec = defineBlock({
  type: "variables",
  category: "core",
  summary: "Sets workflow variables, readable later as <variable.name>.",
  configSchema: variablesConfigSchema,
  rules: variablesRules,
});
