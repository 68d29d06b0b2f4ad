/** The `llm_router` block type: a model chooses the route. */
import { defineBlock } from "../block-spec.ts";
import { ROUTER_HANDLE_PREFIX } from "../router/config.ts";
import { llmRouterConfigSchema } from "./config.ts";
import { llmRouterRules } from "./rules.ts";

/** LLM Router. */
export const llmRouterSpec = defineBlock({
  type: "llm_router",
  category: "control",
  summary: "A model reads the prompt and chooses the route whose description fits best.",
  configSchema: llmRouterConfigSchema,
  rules: llmRouterRules,
  // Its decisions are routing decisions like the rule-based Router's: `decisions.router`.
  choice: { prefix: ROUTER_HANDLE_PREFIX, list: "routes", noun: "route", outputField: "selectedRoute", decisionGroup: "router" },
});
