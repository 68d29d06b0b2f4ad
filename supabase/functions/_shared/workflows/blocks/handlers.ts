/**
 * The handler registry: what every block type but the containers does when it runs. The executor
 * imports no handler; runs/run-workflow.ts passes this registry in, so the catalogue and the graph
 * compiler (specs.ts) stay free of the sandbox, the outbound client and the model providers that
 * handlers load.
 */
import type { BlockHandlers } from "../core/block-handler.ts";
import { agentHandler } from "./agent/handler.ts";
import { apiHandler } from "./api/handler.ts";
import { apiTriggerHandler } from "./api-trigger/handler.ts";
import { approvalHandler } from "./approval/handler.ts";
import { chatTriggerHandler } from "./chat-trigger/handler.ts";
import { conditionHandler } from "./condition/handler.ts";
import { functionHandler } from "./function/handler.ts";
import { webhookTriggerHandler } from "./generic-webhook/handler.ts";
import { llmRouterHandler } from "./llm-router/handler.ts";
import { responseHandler } from "./response/handler.ts";
import { routerHandler } from "./router/handler.ts";
import { scheduleTriggerHandler } from "./schedule/handler.ts";
import type { HandledBlockType } from "./specs.ts";
import { variablesHandler } from "./variables/handler.ts";
import { vectordbHandler } from "./vectordb/handler.ts";
import { waitHandler } from "./wait/handler.ts";

/** The handler of every block type that has one (every type but the containers, which the executor runs). */
export const BLOCK_HANDLERS: BlockHandlers<HandledBlockType> = {
  api_trigger: apiTriggerHandler,
  // The manual trigger reads its input exactly as the API trigger does (manual-trigger/spec.ts).
  manual_trigger: apiTriggerHandler,
  generic_webhook: webhookTriggerHandler,
  schedule: scheduleTriggerHandler,
  condition: conditionHandler,
  router: routerHandler,
  function: functionHandler,
  variables: variablesHandler,
  wait: waitHandler,
  response: responseHandler,
  api: apiHandler,
  vectordb: vectordbHandler,
  agent: agentHandler,
  llm_router: llmRouterHandler,
  chat_trigger: chatTriggerHandler,
  approval: approvalHandler,
};
