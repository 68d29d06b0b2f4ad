/** The `schedule` block type: starts a run on a cron schedule (or a preset) in a time zone. */
import { defineBlock } from "../block-spec.ts";
import { scheduleConfigSchema, scheduleRules } from "./config.ts";

/** Schedule trigger. */
export const scheduleSpec = defineBlock({
  type: "schedule",
  category: "trigger",
  summary: "Starts a run on a cron schedule or a preset (every N minutes, hourly, daily at, weekly on) in a time zone.",
  configSchema: scheduleConfigSchema,
  rules: scheduleRules,
});
