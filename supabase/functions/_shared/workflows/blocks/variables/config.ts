/** Variables config: the assignments, name and value. */
import { z } from "zod";
import { identifier } from "../config-parts.ts";

/** The config of a `variables` block. */
export const variablesConfigSchema = z
  .object({ assignments: z.array(z.object({ name: identifier, value: z.unknown() }).strict()).max(100) })
  .strict();
