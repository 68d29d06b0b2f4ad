/** The `wait` block type: pauses its branch. */
import { defineBlock } from "../block-spec.ts";
import { waitConfigSchema } from "./config.ts";

/** Wait. */
export const waitSpec = defineBlock({
  type: "wait",
  category: "core",
  summary: "Pauses this branch for a while (at most 5 minutes in a synchronous run, 30 days in an async one).",
  configSchema: waitConfigSchema,
  rules: [],
});
