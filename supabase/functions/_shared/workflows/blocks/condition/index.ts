/** The `condition` block type: if / else if / else over sandboxed JavaScript expressions. */
import { defineBlock } from "../block-definition.ts";
import { CONDITION_HANDLE_PREFIX, conditionConfigSchema } from "./config.ts";
import { conditionHandler } from "./handler.ts";
import { conditionRules } from "./rules.ts";

/** Condition. */
export const conditionBlock = defineBlock({
  type: "condition",
  category: "control",
  summary: "if / else if / else over sandboxed JavaScript expressions; one branch stays active.",
  configSchema: conditionConfigSchema,
  rules: conditionRules,
  choice: { prefix: CONDITION_HANDLE_PREFIX, list: "conditions", noun: "condition", outputField: "selectedOption" },
  handler: conditionHandler,
});
