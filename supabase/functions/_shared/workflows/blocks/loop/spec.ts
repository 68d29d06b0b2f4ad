/** The `loop` block type: a container whose body runs once per iteration (settings in settings.ts). */
import { z } from "zod";
import { defineBlock } from "../block-spec.ts";

/** Loop. */
export const loopSpec = defineBlock({
  type: "loop",
  category: "container",
  summary: "Runs its body `for` a count or `forEach` item of a collection, one iteration at a time.",
  configSchema: z.object({}).strict(),
  rules: [],
});
