/**
 * Schedule config: a five-field cron expression, or a preset (every N minutes, hourly, daily at,
 * weekly on), read in a time zone. The database turns a preset into its cron expression and checks
 * both the expression and the time zone at deploy (migration `…_workflows-cron.sql`), refusing the
 * deploy with the reason; the shapes here are what a save checks. `overlap` and `jitterSeconds` are
 * applied by the ticker (migration `…_workflows-schedules.sql`).
 */
import { z } from "zod";
import type { ConfigRule } from "../../state/config-rules.ts";

/** `HH:MM`, 24-hour. */
const TIME_OF_DAY = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;

/** How the schedule is written: a cron expression (the default) or one of the presets. */
export const SCHEDULE_TYPES = ["cron", "minutes", "hourly", "daily", "weekly"] as const;

/**
 * What an occurrence does while the schedule's previous run is still queued or running: skip it
 * (the default), keep at most one waiting until that run ends, run every one, or cancel the
 * previous run and start the new one. The ticker and backfills apply it (docs/triggers.md).
 */
export const OVERLAP_POLICIES = ["skip", "buffer_one", "allow_all", "cancel_running"] as const;

/** The largest jitter (an hour); the database also refuses one as long as the gap between slots. */
export const MAX_JITTER_SECONDS = 3600;

/** Weekdays for the weekly preset. */
export const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"] as const;

/** The config of a `schedule` block. */
export const scheduleConfigSchema = z
  .object({
    scheduleType: z.enum(SCHEDULE_TYPES).optional(),
    // Five cron fields (minute resolution, as pg_cron); the database checks each field at deploy.
    cronExpression: z.string().regex(/^\s*\S+(\s+\S+){4}\s*$/).optional(),
    minutesInterval: z.number().int().min(1).max(59).optional(),
    hourlyMinute: z.number().int().min(0).max(59).optional(),
    dailyTime: z.string().regex(TIME_OF_DAY).optional(),
    weeklyDay: z.enum(WEEKDAYS).optional(),
    weeklyTime: z.string().regex(TIME_OF_DAY).optional(),
    timezone: z.string().min(1).max(64).optional(),
    maxConsecutiveFailures: z.number().int().min(1).max(100).optional(),
    overlap: z.enum(OVERLAP_POLICIES).optional(),
    jitterSeconds: z.number().int().min(0).max(MAX_JITTER_SECONDS).optional(),
  })
  .strict();

const PRESETS = ["minutes", "hourly", "daily", "weekly"];

/** Each way of writing the schedule needs its fields, and a preset takes no cron expression. */
export const scheduleRules: readonly ConfigRule[] = [
  { rule: "requires", where: { field: "scheduleType", notIn: PRESETS }, field: "cronExpression", message: "a cron schedule needs cronExpression (five fields), or choose a scheduleType preset" },
  { rule: "forbids", where: { field: "scheduleType", in: PRESETS }, field: "cronExpression", message: 'scheduleType "{scheduleType}" is a preset: leave cronExpression out' },
  { rule: "requires", where: { field: "scheduleType", in: ["minutes"] }, field: "minutesInterval", message: "the minutes preset needs minutesInterval (1 to 59)" },
  { rule: "requires", where: { field: "scheduleType", in: ["daily"] }, field: "dailyTime", message: "the daily preset needs dailyTime (HH:MM)" },
  { rule: "requires", where: { field: "scheduleType", in: ["weekly"] }, field: "weeklyDay", message: "the weekly preset needs weeklyDay" },
  { rule: "requires", where: { field: "scheduleType", in: ["weekly"] }, field: "weeklyTime", message: "the weekly preset needs weeklyTime (HH:MM)" },
];
