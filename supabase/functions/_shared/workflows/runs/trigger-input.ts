/**
 * Checks a run's trigger input against its trigger's Input Format before anything runs or is
 * stored: the same code the trigger block runs (blocks/input-format.ts), with a store that keeps
 * nothing, so a request whose fields do not coerce, whose data URL is malformed or whose file is
 * over 20 MB is refused whole (400 INVALID_INPUT, 413 FILE_TOO_LARGE) and leaves no file behind.
 */
import { applyInputFormat, type InputField } from "../blocks/input-format.ts";
import type { FileStore, TriggerRequest } from "../core/context.ts";
import type { CompiledWorkflow } from "../executor/graph.ts";
import { chooseTrigger } from "../executor/trigger-choice.ts";

/** Trigger types whose config is an Input Format. */
const TYPED_TRIGGERS = new Set(["api_trigger", "manual_trigger", "generic_webhook"]);

/** A store that stores nothing: the entries were checked by applyInputFormat before it is called. */
const checkingStore: FileStore = {
  store: (entry) => Promise.resolve({ id: "checked", name: entry.name, url: "", size: 0, type: "", key: "" }),
};

/**
 * Throws the WorkflowError the trigger would fail with (INVALID_INPUT, or FileTooLargeError for a
 * file over the limit); a trigger without an Input Format takes any body.
 */
export async function checkTriggerInput(compiled: CompiledWorkflow, trigger: TriggerRequest): Promise<void> {
  const node = chooseTrigger(compiled, trigger);
  if (!TYPED_TRIGGERS.has(node.type)) return;
  const fields = (node.block.config as { inputFormat?: InputField[] } | undefined)?.inputFormat ?? [];
  await checkInputFormat(fields, trigger.input, node.block.name);
}

/** The same check against an Input Format read elsewhere (a webhook's, before its run is admitted). */
export async function checkInputFormat(fields: readonly InputField[], input: unknown, triggerName: string): Promise<void> {
  if (fields.length === 0 || input === undefined) return;
  await applyInputFormat(fields, input, { label: `trigger "${triggerName}"`, executionId: "check", files: checkingStore });
}
