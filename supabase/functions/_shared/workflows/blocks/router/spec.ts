/** The `router` block type: a rule-based switch over one value. */
import { defineBlock } from "../block-spec.ts";
import { ROUTER_HANDLE_PREFIX, routerConfigSchema } from "./config.ts";
import { routerRules } from "./rules.ts";

/** Router. */
export const routerSpec = defineBlock({
  type: "router",
  category: "control",
  summary: "Rule-based switch: the first route whose rule matches the value stays active.",
  configSchema: routerConfigSchema,
  rules: routerRules,
  choice: { prefix: ROUTER_HANDLE_PREFIX, list: "routes", noun: "route", outputField: "selectedRoute" },
});
