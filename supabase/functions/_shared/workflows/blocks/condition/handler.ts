/**
 * Condition: if / else if / else. Each expression is JavaScript evaluated in the sandbox, in order;
 * the first truthy one (or the `else`) is chosen and only its `condition-<id>` edges stay active.
 * With no match and no `else`, every branch is deactivated and the run goes on elsewhere (or ends).
 */
import { WorkflowError } from "../../core/errors.ts";
import type { ResolvedCode } from "../../core/resolver.ts";
import { DEFAULT_SANDBOX_MEMORY_BYTES } from "../../core/sandbox-contract.ts";
import { CONDITION_HANDLE_PREFIX } from "./config.ts";
import type { BlockHandler } from "../../core/block-handler.ts";

/** Time all of a Condition's expressions may take together, unless its config says otherwise. */
export const DEFAULT_CONDITION_TIMEOUT_MS = 2_000;

interface ConditionInput {
  conditions: { id: string; kind: "if" | "else if" | "else"; expression?: ResolvedCode }[];
  timeoutMs?: number;
}

/** Handler of `condition` blocks. */
export const conditionHandler: BlockHandler<ConditionInput> = {
  stopsAtDeadline: true,
  timeoutMs: () => DEFAULT_CONDITION_TIMEOUT_MS,
  async execute(run) {
    for (const [index, condition] of run.input.conditions.entries()) {
      let matched = condition.kind === "else";
      if (!matched && condition.expression) {
        try {
          const { value } = await run.services.sandbox.run({
            kind: "expression",
            source: condition.expression.source,
            values: condition.expression.values,
            refs: condition.expression.refs,
            deadline: run.runDeadline,
            timeoutMs: run.timeoutMs,
            memoryBytes: DEFAULT_SANDBOX_MEMORY_BYTES,
            signal: run.signal,
            owner: run.executionId,
            account: run.account ?? undefined,
          });
          matched = Boolean(value);
        } catch (error) {
          // A cancellation's reason (the run's timeout, a Response) is the run's, not this condition's.
          if (!(error instanceof WorkflowError) || run.signal.aborted) throw error;
          throw new WorkflowError(error.code, `condition ${index + 1} ("${condition.kind}", id "${condition.id}"): ${error.message}`);
        }
      }
      if (matched) {
        const target = run.targetsOf(`${CONDITION_HANDLE_PREFIX}${condition.id}`)[0] ?? null;
        return {
          conditionResult: condition.kind !== "else",
          selectedOption: condition.id,
          selectedPath: target && { blockId: target.id, blockName: target.name, blockType: target.type },
        };
      }
    }
    return { conditionResult: false, selectedOption: null, selectedPath: null };
  },
};
