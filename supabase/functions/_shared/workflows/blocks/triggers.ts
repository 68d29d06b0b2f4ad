/**
 * Trigger blocks. Only the trigger a run starts from executes; its output is the run's input as
 * later blocks read it (`<api.fieldName>`, `<api.input>`, `<webhook1.path.to.field>`, ...).
 */
import type { InputField } from "../state/catalogue.ts";
import type { BlockOutput } from "../engine/context.ts";
import { WorkflowError } from "../engine/errors.ts";
import { applyInputFormat, valueColumn } from "./input-format.ts";
import { asRecord, DEFAULT_BLOCK_TIMEOUT_MS, type BlockHandler, type BlockRun } from "./block-handler.ts";

interface InputFormatInput {
  inputFormat?: InputField[];
}

/** The request body, or for a manual run without one, the Input Format's value column. */
function bodyOf(run: BlockRun<InputFormatInput>): unknown {
  const trigger = run.trigger;
  if (trigger === null) throw new WorkflowError("BLOCK_FAILED", "a trigger runs only when the run starts from it");
  if (trigger.kind === "manual" && trigger.input === undefined) return valueColumn(run.input.inputFormat ?? []);
  return trigger.input;
}

function label(run: BlockRun<unknown>): string {
  return `trigger "${run.block.name}"`;
}

/**
 * API trigger (and manual start, which reads the same way): with an Input Format, each field at the
 * top level plus `input`, the structured body; without one, only `input`, the raw body.
 */
export const apiTriggerHandler: BlockHandler<InputFormatInput> = {
  timeoutMs: () => DEFAULT_BLOCK_TIMEOUT_MS,
  async execute(run) {
    const body = bodyOf(run);
    const fields = run.input.inputFormat ?? [];
    if (fields.length === 0) return { input: body ?? {} };
    const { typed, structured } = await applyInputFormat(fields, body, { label: label(run), executionId: run.executionId, files: run.services.files });
    return { ...typed, input: structured };
  },
};

/** Webhook trigger: the body's fields at the top level, with typed fields laid over them. */
export const webhookTriggerHandler: BlockHandler<InputFormatInput> = {
  timeoutMs: () => DEFAULT_BLOCK_TIMEOUT_MS,
  async execute(run) {
    const body = bodyOf(run);
    const fields = run.input.inputFormat ?? [];
    const record = asRecord(body);
    if (fields.length === 0) return record ?? { body: body ?? null };
    const { structured } = await applyInputFormat(fields, body, { label: label(run), executionId: run.executionId, files: run.services.files });
    return structured;
  },
};

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
