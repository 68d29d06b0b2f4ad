/** The `api_trigger` block type: starts a run from the execute endpoint, typed by its Input Format. */
import { defineBlock } from "../block-spec.ts";
import { inputFormatConfigSchema, inputFormatRules } from "../input-format.ts";

/** API trigger. */
export const apiTriggerSpec = defineBlock({
  type: "api_trigger",
  category: "trigger",
  summary: "Starts a run from POST /api/workflows/{id}/execute; typed fields from its Input Format.",
  configSchema: inputFormatConfigSchema,
  rules: inputFormatRules,
});
