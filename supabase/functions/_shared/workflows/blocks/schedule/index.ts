/** The `schedule` block type: starts a run on a cron schedule (or a preset) in a time zone. */
import { defineBlock } from "../block-definition.ts";
import { scheduleConfigSchema, scheduleRules } from "./config.ts";
import { scheduleTriggerHandler } from "./handler.ts";

/** Schedule trigger. */
export const scheduleBlock = defineBlock({
  type: "schedule",
  category: "trigger",
  summary: "Starts a run on a cron schedule or a preset (every N minutes, hourly, daily at, weekly on) in a time zone.",
  configSchema: scheduleConfigSchema,
  rules: scheduleRules,
  handler: scheduleTriggerHandler,
});
