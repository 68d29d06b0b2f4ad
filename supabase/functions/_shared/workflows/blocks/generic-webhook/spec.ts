/** The `generic_webhook` block type: starts a run from an incoming webhook. */
import { defineBlock } from "../block-spec.ts";
import { webhookConfigSchema, webhookRules } from "./config.ts";

/** Webhook trigger. */
export const genericWebhookSpec = defineBlock({
  type: "generic_webhook",
  category: "trigger",
  summary: "Starts a run from POST /api/webhooks/trigger/{path}; the request body, typed by an optional Input Format.",
  configSchema: webhookConfigSchema,
  rules: webhookRules,
});
