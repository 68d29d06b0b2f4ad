/**
 * Webhook trigger: the request body's fields become its output (`<webhook1.path.to.field>`), with
 * the fields of an optional Input Format typed over them.
 */
import { asRecord } from "../../core/values.ts";
import { DEFAULT_BLOCK_TIMEOUT_MS, type BlockHandler } from "../../core/block-handler.ts";
import { applyInputFormat, triggerBody, triggerLabel, type InputFormatInput } from "../input-format.ts";

/** Webhook trigger: the body's fields at the top level, with typed fields laid over them. */
export const webhookTriggerHandler: BlockHandler<InputFormatInput> = {
  timeoutMs: () => DEFAULT_BLOCK_TIMEOUT_MS,
  async execute(run) {
    const body = triggerBody(run);
    const fields = run.input.inputFormat ?? [];
    const record = asRecord(body);
    if (fields.length === 0) return record ?? { body: body ?? null };
    const { structured } = await applyInputFormat(fields, body, { label: triggerLabel(run), executionId: run.executionId, files: run.services.files });
    return structured;
  },
};
