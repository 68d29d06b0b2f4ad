/**
 * Variables: sets workflow variables, which any later block reads as `<variable.name>`. Variables
 * are shared by the whole run; when parallel branches set the same name, the last write wins.
 */
import type { BlockOutput } from "../../core/context.ts";
import { DEFAULT_BLOCK_TIMEOUT_MS, type BlockHandler } from "../../core/block-handler.ts";

interface VariablesInput {
  assignments: { name: string; value: unknown }[];
}

/** Handler of `variables` blocks. */
export const variablesHandler: BlockHandler<VariablesInput> = {
  timeoutMs: () => DEFAULT_BLOCK_TIMEOUT_MS,
  execute(run): BlockOutput {
    const output: BlockOutput = {};
    for (const { name, value } of run.input.assignments) {
      const stored = value === undefined ? null : value;
      run.variables.set(name, stored);
      output[name] = stored;
    }
    return output;
  },
};
