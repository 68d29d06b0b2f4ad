/**
 * The block catalogue: every block type, assembled from its folder in blocks/. This is the one list
 * of block types. The TypeScript validator reads config schemas and rules from it, the engine reads
 * handlers and choices, and json-schemas.ts renders it for the database (`workflows_private.block_types`).
 *
 * Adding a block type: a folder blocks/<type>/ exporting its definition, one line below, and a
 * migration with the SQL `catalogueSql()` prints (test/workflows/validation-parity.test.ts shows it
 * when the database's catalogue differs from this one).
 */
import { agentBlock } from "../blocks/agent/index.ts";
import { apiBlock } from "../blocks/api/index.ts";
import { apiTriggerBlock } from "../blocks/api-trigger/index.ts";
import type { BlockHandler } from "../core/block-handler.ts";
import type { BlockDefinition } from "../blocks/block-definition.ts";
import { chatTriggerBlock } from "../blocks/chat-trigger/index.ts";
import { conditionBlock } from "../blocks/condition/index.ts";
import { functionBlock } from "../blocks/function/index.ts";
import { genericWebhookBlock } from "../blocks/generic-webhook/index.ts";
import { llmRouterBlock } from "../blocks/llm-router/index.ts";
import { loopBlock } from "../blocks/loop/index.ts";
import { manualTriggerBlock } from "../blocks/manual-trigger/index.ts";
import { parallelBlock } from "../blocks/parallel/index.ts";
import { responseBlock } from "../blocks/response/index.ts";
import { routerBlock } from "../blocks/router/index.ts";
import { scheduleBlock } from "../blocks/schedule/index.ts";
import { variablesBlock } from "../blocks/variables/index.ts";
import { vectordbBlock } from "../blocks/vectordb/index.ts";
import { waitBlock } from "../blocks/wait/index.ts";

/** Every block type, in catalogue order (the database's `position`; messages list types in it). */
export const BLOCK_DEFINITIONS = [
  apiTriggerBlock,
  manualTriggerBlock,
  genericWebhookBlock,
  scheduleBlock,
  conditionBlock,
  routerBlock,
  functionBlock,
  variablesBlock,
  waitBlock,
  responseBlock,
  loopBlock,
  parallelBlock,
  apiBlock,
  vectordbBlock,
  agentBlock,
  llmRouterBlock,
  chatTriggerBlock,
] as const;

/** A block type name. */
export type BlockType = (typeof BLOCK_DEFINITIONS)[number]["type"];

/** The block types the engine runs itself rather than through a handler. */
export type ContainerType = "loop" | "parallel";

/** Block types the engine runs through a handler. */
export type HandledBlockType = Exclude<BlockType, ContainerType>;

/** Every definition by type. */
export const BLOCK_TYPES = Object.fromEntries(BLOCK_DEFINITIONS.map((definition) => [definition.type, definition])) as Readonly<Record<BlockType, BlockDefinition<BlockType>>>;

/** True when `type` names a known block type. */
export function isBlockType(type: string): type is BlockType {
  return Object.hasOwn(BLOCK_TYPES, type);
}

/** The handler of every block type that has one (every type but the containers). */
export const BLOCK_HANDLERS = Object.fromEntries(
  BLOCK_DEFINITIONS.flatMap((definition) => ("handler" in definition && definition.handler ? [[definition.type, definition.handler]] : [])),
) as Readonly<Record<HandledBlockType, BlockHandler<unknown>>>;
