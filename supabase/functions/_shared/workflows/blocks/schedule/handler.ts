/** Schedule trigger: a run started by a cron tick reports when the tick was due and when it fired. */
import type { BlockOutput } from "../../engine/context.ts";
import { asRecord } from "../../engine/values.ts";
import { DEFAULT_BLOCK_TIMEOUT_MS, type BlockHandler } from "../block-handler.ts";

interface ScheduleInput {
  cronExpression: string;
  timezone?: string;
}

/** Schedule trigger: when the tick was due and when it fired. */
export const scheduleTriggerHandler: BlockHandler<ScheduleInput> = {
  timeoutMs: () => DEFAULT_BLOCK_TIMEOUT_MS,
  execute(run): BlockOutput {
    const firedAt = new Date(run.services.clock.now()).toISOString();
    const tick = asRecord(run.trigger?.input);
    const scheduledFor = typeof tick?.scheduledFor === "string" ? tick.scheduledFor : firedAt;
    return { scheduledFor, firedAt, cronExpression: run.input.cronExpression.trim(), timezone: run.input.timezone ?? "UTC" };
  },
};
