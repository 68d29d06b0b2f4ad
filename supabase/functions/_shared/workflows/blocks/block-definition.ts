/**
 * What a block type is, in one value its folder exports: its category, its config schema (zod,
 * also rendered as JSON Schema for the database), the rules across its config fields (data both
 * validators interpret), the paths it chooses between, and its handler. state/catalogue.ts lists
 * every definition; the engine, the validators and the database catalogue all read from there.
 */
import type { z } from "zod";
import type { ConfigRule } from "../state/config-rules.ts";
import type { BlockHandler } from "../core/block-handler.ts";

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

/** One block type. */
export interface BlockDefinition<Type extends string = string> {
  type: Type;
  category: BlockCategory;
  /** One line for docs and error messages. */
  summary: string;
  configSchema: z.ZodType;
  /** Rules across config fields that JSON Schema cannot express (see state/config-rules.ts). */
  rules: readonly ConfigRule[];
  /** Set for blocks that choose a path; their other edges must use `error`. */
  choice?: ChoiceHandles;
  /** Absent only for containers (loop, parallel), which the engine runs itself. */
  handler?: BlockHandler<unknown>;
}

/** Declares a block type, keeping its `type` as a literal so the catalogue knows every name. */
export function defineBlock<Type extends string>(definition: BlockDefinition<Type>): BlockDefinition<Type> {
  return definition;
}
