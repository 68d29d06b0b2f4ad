import { describe, expect, it } from "vitest";
import { compileValue } from "../../core/resolver.ts";
import { conditionHandler } from "./handler.ts";
import { conditionSpec } from "./spec.ts";
import { testRun } from "../../../../../../test/helpers/workflows/block-run.ts";

/** Compiles conditions the way the executor does, with the given reference values. */
function input(conditions: { id: string; kind: string; expression?: string }[], values: unknown[] = []) {
  const compiled = compileValue({ conditions }, new Set(conditionSpec.codePaths));
  let next = 0;
  return compiled.resolve({ ref: () => values[next++], env: () => "" }) as Parameters<typeof conditionHandler.execute>[0]["input"];
}

describe("the Condition block", () => {
  it("chooses the first true condition and names where it leads", async () => {
    const run = testRun(input([{ id: "a", kind: "if", expression: "<x.n> > 10" }, { id: "b", kind: "else if", expression: "<x.n> > 1" }, { id: "c", kind: "else" }], [5, 5]), {
      targetsOf: (handle) => (handle === "condition-b" ? [{ id: "t", name: "Target", type: "function" }] : []),
    });
    expect(await conditionHandler.execute(run)).toEqual({ conditionResult: true, selectedOption: "b", selectedPath: { blockId: "t", blockName: "Target", blockType: "function" } });
  });

  it("falls back to else, and to nothing without one", async () => {
    expect(await conditionHandler.execute(testRun(input([{ id: "a", kind: "if", expression: "false" }, { id: "e", kind: "else" }])))).toMatchObject({ conditionResult: false, selectedOption: "e" });
    expect(await conditionHandler.execute(testRun(input([{ id: "a", kind: "if", expression: "0" }])))).toEqual({ conditionResult: false, selectedOption: null, selectedPath: null });
  });

  it("stops an endless expression at the block's deadline", async () => {
    const run = testRun(input([{ id: "a", kind: "if", expression: "(() => { while (true) {} })()" }]), { deadline: Date.now() + 50 });
    await expect(conditionHandler.execute(run)).rejects.toMatchObject({ code: "SANDBOX_TIMEOUT", message: expect.stringContaining('condition 1 ("if", id "a")') });
  });
});
