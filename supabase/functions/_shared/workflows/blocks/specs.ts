/**
 * The spec registry: every block type, from its folder's spec.ts. This is the one list of block
 * types. The graph compiler reads categories, choices and code fields from it, and
 * state/json-schemas.ts renders its config schemas, rules and choices for the database's validator
 * (`workflows_private.block_types`). It imports no handler (handlers.ts has them), so rendering
 * the catalogue loads neither the sandbox nor the outbound client nor the model providers.
 *
 * Adding a block type: a folder blocks/<type>/ with its spec.ts and handler.ts, one line below and
 * one in handlers.ts, and a migration with the SQL `catalogueSql()` prints
 * (test/workflows/validation-corpus.test.ts shows it when the database's catalogue differs from
 * this one).
 */
import { agentSpec } from "./agent/spec.ts";
import { apiSpec } from "./api/spec.ts";
import { apiTriggerSpec } from "./api-trigger/spec.ts";
import { approvalSpec } from "./approval/spec.ts";
import type { BlockSpec } from "./block-spec.ts";
import { chatTriggerSpec } from "./chat-trigger/spec.ts";
import { conditionSpec } from "./condition/spec.ts";
import { functionSpec } from "./function/spec.ts";
import { genericWebhookSpec } from "./generic-webhook/spec.ts";
import { llmRouterSpec } from "./llm-router/spec.ts";
import { loopSpec } from "./loop/spec.ts";
import { manualTriggerSpec } from "./manual-trigger/spec.ts";
import { parallelSpec } from "./parallel/spec.ts";
import { responseSpec } from "./response/spec.ts";
import { routerSpec } from "./router/spec.ts";
import { scheduleSpec } from "./schedule/spec.ts";
import { variablesSpec } from "./variables/spec.ts";
import { vectordbSpec } from "./vectordb/spec.ts";
import { waitSpec } from "./wait/spec.ts";

/** Every block type's spec, in catalogue order (the database's `position`; messages list types in it). */
export const BLOCK_SPECS = [
  apiTriggerSpec,
  manualTriggerSpec,
  genericWebhookSpec,
  scheduleSpec,
  conditionSpec,
  routerSpec,
  functionSpec,
  variablesSpec,
  waitSpec,
  responseSpec,
  loopSpec,
  parallelSpec,
  apiSpec,
  vectordbSpec,
  agentSpec,
  llmRouterSpec,
  chatTriggerSpec,
  approvalSpec,
] as const;

/** A block type name. */
export type BlockType = (typeof BLOCK_SPECS)[number]["type"];

/** The block types the engine runs itself rather than through a handler. */
export type ContainerType = "loop" | "parallel";

/** Block types the engine runs through a handler. */
export type HandledBlockType = Exclude<BlockType, ContainerType>;

/** Every spec by type. */
export const BLOCK_TYPES = Object.fromEntries(BLOCK_SPECS.map((spec) => [spec.type, spec])) as Readonly<Record<BlockType, BlockSpec<BlockType>>>;

/** True when `type` names a known block type. */
export function isBlockType(type: string): type is BlockType {
  return Object.hasOwn(BLOCK_TYPES, type);
}
