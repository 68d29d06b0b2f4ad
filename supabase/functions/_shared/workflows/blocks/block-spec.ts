/**
 * What a block type is, as data its folder's spec.ts exports: its category, its config schema (zod,
 * rendered as JSON Schema for the database's validator), the rules across its config fields (data
 * the database interprets), the paths it chooses between and the fields that hold code. What it
 * does is its handler.ts, kept apart so that the catalogue never loads a handler (and through them
 * the sandbox, the outbound client and the model providers): specs.ts lists every spec, for the
 * graph compiler and the database catalogue; handlers.ts lists every handler, for the executor.
 */
import type { z } from "zod";
import type { ConfigRule } from "../state/config-rules.ts";

/** How a block takes part in a run; the structural rules differ per category (`tools` run like `core`). */
export type BlockCategory = "trigger" | "control" | "core" | "container" | "tools";

/**
 * A block that chooses one of several paths (Condition, Router): one outgoing handle per entry of a
 * config list, `<prefix><id>`, followed when the output's `outputField` holds that id.
 */
export interface ChoiceHandles {
  /** `condition-` in `condition-<id>`. */
  prefix: string;
  /** The config list whose entries' `id`s name the handles (`conditions`). */
  list: string;
  /** What one entry is called in messages (`condition`, `route`). */
  noun: string;
  /** The output field holding the chosen entry's id, or null when none was chosen. */
  outputField: string;
  /** Where the run's context reports its decisions (`decisions.<group>`); the block type when absent. */
  decisionGroup?: string;
}

/** One block type's spec. */
export interface BlockSpec<Type extends string = string> {
  type: Type;
  category: BlockCategory;
  /** One line for docs and error messages. */
  summary: string;
  configSchema: z.ZodType;
  /** Rules across config fields that JSON Schema cannot express (see state/config-rules.ts). */
  rules: readonly ConfigRule[];
  /** Set for blocks that choose a path; their other edges must use `error`. */
  choice?: ChoiceHandles;
  /**
   * Config fields holding code, as patterns (`code`, `conditions[].expression`): the graph compiler
   * compiles them as code, with references passed in as data rather than pasted into the source.
   */
  codePaths?: readonly string[];
}

/** Declares a block type, keeping its `type` as a literal so the catalogue knows every name. */
export function defineBlock<Type extends string>(spec: BlockSpec<Type>): BlockSpec<Type> {
  return spec;
}
