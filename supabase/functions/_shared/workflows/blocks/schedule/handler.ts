/**
 * Schedule trigger: a run started by the ticker reports the slot it was due for, when it fired, the
 * jitter its start was delayed by, and the cron expression and time zone the slot came from (the
 * ticker sends the effective expression, so a preset shows as the expression it stands for).
 */
import type { BlockOutput } from "../../core/context.ts";
import { asRecord } from "../../core/values.ts";
import { DEFAULT_BLOCK_TIMEOUT_MS, type BlockHandler } from "../../core/block-handler.ts";

interface ScheduleInput {
  cronExpression?: string;
  timezone?: string;
}

/** Schedule trigger: when the tick was due, when it fired and by how much its start was jittered. */
export const scheduleTriggerHandler: BlockHandler<ScheduleInput> = {
  timeoutMs: () => DEFAULT_BLOCK_TIMEOUT_MS,
  execute(run): BlockOutput {
    const firedAt = new Date(run.services.clock.now()).toISOString();
    const tick = asRecord(run.trigger?.input);
    const text = (value: unknown) => (typeof value === "string" && value.trim() !== "" ? value.trim() : null);
    // The ticker sends Postgres's spelling (2030-03-09T07:30:00+00:00); runs read one ISO form.
    const slot = text(tick?.scheduledFor);
    const jitter = tick?.jitterSeconds;
    return {
      scheduledFor: slot !== null && Number.isFinite(Date.parse(slot)) ? new Date(slot).toISOString() : slot ?? firedAt,
      firedAt,
      jitterSeconds: typeof jitter === "number" && Number.isInteger(jitter) && jitter >= 0 ? jitter : 0,
      cronExpression: text(tick?.cronExpression) ?? text(run.input.cronExpression),
      timezone: text(tick?.timezone) ?? text(run.input.timezone) ?? "UTC",
    };
  },
};
