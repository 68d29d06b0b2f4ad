/** The `condition` block type: if / else if / else over sandboxed JavaScript expressions. */
import { defineBlock } from "../block-spec.ts";
import { CONDITION_HANDLE_PREFIX, conditionConfigSchema } from "./config.ts";
import { conditionRules } from "./rules.ts";

/** Condition. */
export const conditionSpec = defineBlock({
  type: "condition",
  category: "control",
  summary: "if / else if / else over sandboxed JavaScript expressions; one branch stays active.",
  configSchema: conditionConfigSchema,
  rules: conditionRules,
  choice: { prefix: CONDITION_HANDLE_PREFIX, list: "conditions", noun: "condition", outputField: "selectedOption" },
  codePaths: ["conditions[].expression"],
});
