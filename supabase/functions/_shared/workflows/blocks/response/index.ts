/** The `response` block type: ends the run with an HTTP answer. */
import { defineBlock } from "../block-definition.ts";
import { responseConfigSchema } from "./config.ts";
import { responseHandler } from "./handler.ts";
import { responseRules } from "./rules.ts";

/** Response. */
export const responseBlock = defineBlock({
  type: "response",
  category: "core",
  summary: "Ends the run with an HTTP status, headers and body.",
  configSchema: responseConfigSchema,
  rules: responseRules,
  handler: responseHandler,
});
