/**
 * A parallel's settings. A parallel block's `config` is empty; its settings sit in the state's
 * `parallels` under the block's id, with `nodes` listing the blocks of its body. The engine runs
 * the branches itself (executor/containers.ts).
 */
import { z } from "zod";
import { countOrTemplate } from "../loop/settings.ts";

/** A parallel's settings, keyed by the id of its `parallel` block. */
export const parallelSettingsSchema = z
  .object({
    nodes: z.array(z.string().min(1)),
    parallelType: z.enum(["count", "collection"]),
    count: countOrTemplate.optional(),
    distribution: z.unknown().optional(),
  })
  .strict();
