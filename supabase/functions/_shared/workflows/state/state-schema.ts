/**
 * The workflow state format (Sim's shape, as the spec's execution detail shows it): blocks keyed by
 * id, edges, loops and parallels. Drafts and deployment snapshots store exactly this JSON. The
 * envelope leaves `config` open; each block type's config is checked against its own schema
 * (blocks/<type>/config.ts).
 */
import { z } from "zod";
import { loopSettingsSchema } from "../blocks/loop/settings.ts";
import { parallelSettingsSchema } from "../blocks/parallel/settings.ts";
import { workflowSettingsSchema } from "./flow-control.ts";

/** Edge handle for the error port: followed only when its source block fails. */
export const ERROR_HANDLE = "error";
/** Edge handle from a loop block to the first block(s) of its body. */
export const LOOP_START_HANDLE = "loop-start";
/** Edge handle from a parallel block to the first block(s) of its body. */
export const PARALLEL_START_HANDLE = "parallel-start";

/** One block. `position` is the editor's layout only: runs and diffs ignore it. */
export const blockSchema = z
  .object({
    id: z.string().min(1),
    type: z.string().min(1),
    name: z.string().regex(/\S/),
    config: z.record(z.string(), z.unknown()).default({}),
    enabled: z.boolean().default(true),
    position: z.object({ x: z.number(), y: z.number() }).strict().optional(),
  })
  .strict();

/** A connection; `sourceHandle` picks the port (see the *_HANDLE constants), absent for the normal one. */
export const edgeSchema = z
  .object({
    id: z.string().min(1),
    source: z.string().min(1),
    target: z.string().min(1),
    sourceHandle: z.string().min(1).nullable().optional(),
  })
  .strict();

/**
 * The whole state. Every part may be omitted and defaults to empty, so `{}` is a valid draft;
 * `settings` (flow control) stays absent when not given, so states without it read as before.
 */
export const workflowStateSchema = z
  .object({
    blocks: z.record(z.string(), blockSchema).default({}),
    edges: z.array(edgeSchema).default([]),
    loops: z.record(z.string(), loopSettingsSchema).default({}),
    parallels: z.record(z.string(), parallelSettingsSchema).default({}),
    settings: workflowSettingsSchema.optional(),
  })
  .strict();

/** A parsed workflow state. */
export type WorkflowState = z.output<typeof workflowStateSchema>;
/** A workflow state as stored or sent (defaults not yet applied). */
export type WorkflowStateInput = z.input<typeof workflowStateSchema>;
/** One parsed block. */
export type WorkflowBlock = z.output<typeof blockSchema>;
/** One parsed edge. */
export type WorkflowEdge = z.output<typeof edgeSchema>;
/** One parsed loop entry. */
export type LoopSettings = z.output<typeof loopSettingsSchema>;
/** One parsed parallel entry. */
export type ParallelSettings = z.output<typeof parallelSettingsSchema>;

/** The state of a new workflow. */
export function emptyWorkflowState(): WorkflowState {
  return { blocks: {}, edges: [], loops: {}, parallels: {} };
}
