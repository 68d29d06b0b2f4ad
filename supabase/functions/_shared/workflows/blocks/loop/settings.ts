/**
 * A loop's settings. A loop block's `config` is empty; its settings sit in the state's `loops`
 * under the block's id, with `nodes` listing the blocks of its body. The engine runs the body
 * itself (executor/containers.ts).
 */
import { z } from "zod";
import { MAX_ITERATIONS } from "../../core/limits.ts";

/** A count of iterations or branches (1–1,000), or a template resolving to one. */
export const countOrTemplate = z.union([z.number().int().min(1).max(MAX_ITERATIONS), z.string().min(1)]);

/** A loop's settings, keyed by the id of its `loop` block. `nodes` are the blocks of its body. */
export const loopSettingsSchema = z
  .object({
    nodes: z.array(z.string().min(1)),
    loopType: z.enum(["for", "forEach"]),
    iterations: countOrTemplate.optional(),
    forEachItems: z.unknown().optional(),
  })
  .strict();
