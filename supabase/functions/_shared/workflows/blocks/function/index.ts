/** The `function` block type: the user's JavaScript, run in the sandbox. */
import { defineBlock } from "../block-definition.ts";
import { functionConfigSchema } from "./config.ts";
import { functionHandler } from "./handler.ts";

/** Function. */
export const functionBlock = defineBlock({
  type: "function",
  category: "core",
  summary: "Runs user JavaScript in a sandbox; its return value is the block's result.",
  configSchema: functionConfigSchema,
  rules: [],
  handler: functionHandler,
});
