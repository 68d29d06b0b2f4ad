/**
 * The `manual_trigger` block type: starts a run from the editor. It reads its input exactly as the
 * API trigger does (the value column unless the run gives an input), so the handler registry
 * (handlers.ts) gives it the API trigger's handler.
 */
import { defineBlock } from "../block-spec.ts";
import { inputFormatConfigSchema, inputFormatRules } from "../input-format.ts";

/** Manual trigger. */
export const manualTriggerSpec = defineBlock({
  type: "manual_trigger",
  category: "trigger",
  summary: "Starts a run from the editor; inputs are the Input Format's value column.",
  configSchema: inputFormatConfigSchema,
  rules: inputFormatRules,
});
