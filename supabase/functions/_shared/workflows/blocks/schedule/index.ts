/** The `schedule` block type: starts a run on a cron schedule. */
import { defineBlock } from "../block-definition.ts";
import { scheduleConfigSchema } from "./config.ts";
import { scheduleTriggerHandler } from "./handler.ts";

/** Schedule trigger. */
export const scheduleBlock = defineBlock({
  type: "schedule",
  category: "trigger",
  summary: "Starts a run on a cron schedule.",
  configSchema: scheduleConfigSchema,
  rules: [],
  handler: scheduleTriggerHandler,
});
