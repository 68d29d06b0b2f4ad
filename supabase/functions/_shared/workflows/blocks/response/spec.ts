/** The `response` block type: ends the run with an HTTP answer. */
import { defineBlock } from "../block-spec.ts";
import { responseConfigSchema } from "./config.ts";
import { responseRules } from "./rules.ts";

/** Response. */
export const responseSpec = defineBlock({
  type: "response",
  category: "core",
  summary: "Ends the run with an HTTP status, headers and body.",
  configSchema: responseConfigSchema,
  rules: responseRules,
});
