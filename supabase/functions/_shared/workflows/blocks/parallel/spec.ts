/** The `parallel` block type: a container whose body runs once per branch (settings in settings.ts). */
import { z } from "zod";
import { defineBlock } from "../block-spec.ts";

/** Parallel. */
export const parallelSpec = defineBlock({
  type: "parallel",
  category: "container",
  summary: "Runs its body once per count or collection item, up to 20 branches at once.",
  configSchema: z.object({}).strict(),
  rules: [],
});
