/**
 * Which trigger block a run starts from: the one the request names, else the only enabled trigger
 * of the request's kind. A manual run prefers a manual trigger, then the API trigger, then the
 * workflow's only trigger. Anything ambiguous or missing is refused as INVALID_INPUT.
 */
import type { TriggerKind, TriggerRequest } from "../core/context.ts";
import { WorkflowError } from "../core/errors.ts";
import { isTrigger, type CompiledNode, type CompiledWorkflow } from "./graph.ts";

/** The trigger block `request` starts from, or a WorkflowError saying why there is none. */
export function chooseTrigger(workflow: CompiledWorkflow, request: TriggerRequest): CompiledNode {
  const triggers = [...workflow.nodes.values()].filter((node) => isTrigger(node) && node.block.enabled);
  if (request.blockId !== undefined) {
    const node = workflow.nodes.get(request.blockId);
    if (!node || !isTrigger(node)) throw new WorkflowError("INVALID_INPUT", `block "${request.blockId}" is not a trigger of this workflow`);
    if (!node.block.enabled) throw new WorkflowError("INVALID_INPUT", `trigger "${node.identity.name}" is disabled`);
    return node;
  }
  const ofType = (type: string) => triggers.filter((node) => node.type === type);
  const only = (type: string, what: string): CompiledNode => {
    const found = ofType(type);
    if (found.length === 1) return found[0];
    throw new WorkflowError("INVALID_INPUT", found.length === 0 ? `the workflow has no enabled ${what} trigger` : `the workflow has several ${what} triggers; say which one to start from`);
  };
  const kinds: Record<TriggerKind, () => CompiledNode> = {
    api: () => only("api_trigger", "API"),
    webhook: () => only("generic_webhook", "webhook"),
    schedule: () => only("schedule", "schedule"),
    chat: () => only("chat_trigger", "chat"),
    manual: () => ofType("manual_trigger")[0] ?? ofType("api_trigger")[0] ?? (triggers.length === 1 ? triggers[0] : only("manual_trigger", "manual")),
  };
  return kinds[request.kind]();
}
