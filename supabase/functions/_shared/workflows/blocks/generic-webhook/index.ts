/** The `generic_webhook` block type: starts a run from an incoming webhook. */
import { defineBlock } from "../block-definition.ts";
import { inputFormatConfigSchema, inputFormatRules } from "../input-format.ts";
import { webhookTriggerHandler } from "./handler.ts";

/** Webhook trigger. */
export const genericWebhookBlock = defineBlock({
  type: "generic_webhook",
  category: "trigger",
  summary: "Starts a run from an incoming webhook; the request body, typed by an optional Input Format.",
  configSchema: inputFormatConfigSchema,
  rules: inputFormatRules,
  handler: webhookTriggerHandler,
});
