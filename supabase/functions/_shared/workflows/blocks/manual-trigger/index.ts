/**
 * The `manual_trigger` block type: starts a run from the editor. It reads its input exactly as the
 * API trigger does (the value column unless the run gives an input), so it shares its handler.
 */
import { apiTriggerHandler } from "../api-trigger/handler.ts";
import { defineBlock } from "../block-definition.ts";
import { inputFormatConfigSchema, inputFormatRules } from "../input-format.ts";

/** Manual trigger. */
export const manualTriggerBlock = defineBlock({
  type: "manual_trigger",
  category: "trigger",
  summary: "Starts a run from the editor; inputs are the Input Format's value column.",
  configSchema: inputFormatConfigSchema,
  rules: inputFormatRules,
  handler: apiTriggerHandler,
});
