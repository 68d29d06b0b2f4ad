/**
 * The handler of every executable block type. Loops and parallels are containers the executor
 * runs itself, so they have no handler.
 */
import type { BlockType } from "../state/catalogue.ts";
import { conditionHandler } from "./condition.ts";
import { functionHandler } from "./function.ts";
import { responseHandler } from "./response.ts";
import { routerHandler } from "./router.ts";
import { apiTriggerHandler, scheduleTriggerHandler, webhookTriggerHandler } from "./triggers.ts";
import type { BlockHandler } from "./block-handler.ts";
import { variablesHandler } from "./variables.ts";
import { waitHandler } from "./wait.ts";

/** Block types the executor runs through a handler. */
export type HandledBlockType = Exclude<BlockType, "loop" | "parallel">;

/** Built-in handlers by block type. */
export const BLOCK_HANDLERS: Record<HandledBlockType, BlockHandler<unknown>> = {
  api_trigger: apiTriggerHandler,
  manual_trigger: apiTriggerHandler,
  generic_webhook: webhookTriggerHandler,
  schedule: scheduleTriggerHandler,
  condition: conditionHandler,
  router: routerHandler,
  function: functionHandler,
  variables: variablesHandler,
  wait: waitHandler,
  response: responseHandler,
};
