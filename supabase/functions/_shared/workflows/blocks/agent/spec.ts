/** The `agent` block type: a model call with prompts, tools, structured answers and streaming. */
import { defineBlock } from "../block-spec.ts";
import { agentConfigSchema } from "./config.ts";
import { agentRules } from "./rules.ts";

/** Agent. */
export const agentSpec = defineBlock({
  type: "agent",
  category: "core",
  summary: "Asks an OpenAI or Anthropic model, lets it call API and vector-store tools, and reports tokens and cost.",
  configSchema: agentConfigSchema,
  rules: agentRules,
});
