/**
 * The body of POST /api/v2/runs/{runId}/rerun (docs/workflow-runs.md, "Re-running runs"; the same
 * shape is in docs/openapi.yaml), at most 1 MiB (MAX_KEPT_INPUT_BYTES: the re-run keeps its input).
 * Empty (or `{}`): re-run with the original input. `input`: re-run
 * with this input instead, checked as execute checks one. `fromBlock`: run that top-level block and
 * what depends on it again, replaying the original's other blocks, its trigger (and so its input)
 * included, which is why the two do not combine. Unknown fields are refused, so a misspelt
 * `fromblock` is an error rather than a whole re-run.
 */
import { z } from "zod";

/** The longest block id `fromBlock` takes; ids are far shorter (uuids, or names a user typed). */
const MAX_BLOCK_ID = 255;

/** The re-run's body. */
export const rerunBody = z
  .strictObject({
    input: z.unknown().refine((value) => value !== null, { message: "must not be null; send {} for an empty input" }).optional(),
    fromBlock: z.string().trim().min(1, { message: "must name a block" }).max(MAX_BLOCK_ID).optional(),
  })
  .superRefine((body, context) => {
    if (body.input !== undefined && body.fromBlock !== undefined) {
      context.addIssue({ code: "custom", path: ["fromBlock"], message: "cannot be combined with input: a re-run from a block replays the original's trigger and its input" });
    }
  });

/** POST /api/v2/runs/{runId}/rerun body, parsed. */
export type RerunBody = z.output<typeof rerunBody>;
