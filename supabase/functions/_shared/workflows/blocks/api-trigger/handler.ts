/**
 * API trigger (and the manual trigger, which reads the same way). Only the trigger a run starts
 * from executes; its output is the run's input as later blocks read it (`<api.fieldName>`,
 * `<api.input>`).
 */
import { applyInputFormat, triggerBody, triggerLabel, type InputFormatInput } from "../input-format.ts";
import { DEFAULT_BLOCK_TIMEOUT_MS, type BlockHandler } from "../../core/block-handler.ts";

/**
 * API trigger (and manual start, which reads the same way): with an Input Format, each field at the
 * top level plus `input`, the structured body; without one, only `input`, the raw body.
 */
export const apiTriggerHandler: BlockHandler<InputFormatInput> = {
  timeoutMs: () => DEFAULT_BLOCK_TIMEOUT_MS,
  async execute(run) {
    const body = triggerBody(run);
    const fields = run.input.inputFormat ?? [];
    if (fields.length === 0) return { input: body ?? {} };
    const { typed, structured } = await applyInputFormat(fields, body, { label: triggerLabel(run), executionId: run.executionId, files: run.services.files });
    return { ...typed, input: structured };
  },
};
