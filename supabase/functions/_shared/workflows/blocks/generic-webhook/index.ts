/** The `generic_webhook` block type: starts a run from an incoming webhook. */
import { defineBlock } from "../block-definition.ts";
import { webhookConfigSchema, webhookRules } from "./config.ts";
import { webhookTriggerHandler } from "./handler.ts";

/** Webhook trigger. */
export const genericWebhookBlock = defineBlock({
  type: "generic_webhook",
  category: "trigger",
  summary: "Starts a run from POST /api/webhooks/trigger/{path}; the request body, typed by an optional Input Format.",
  configSchema: webhookConfigSchema,
  rules: webhookRules,
  handler: webhookTriggerHandler,
});
