/** The `function` block type: the user's JavaScript, run in the sandbox. */
import { defineBlock } from "../block-spec.ts";
import { functionConfigSchema } from "./config.ts";

/** Function. */
export const functionSpec = defineBlock({
  type: "function",
  category: "core",
  summary: "Runs user JavaScript in a sandbox; its return value is the block's result.",
  configSchema: functionConfigSchema,
  rules: [],
  codePaths: ["code"],
});
