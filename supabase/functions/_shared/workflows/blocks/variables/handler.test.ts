import { describe, expect, it } from "vitest";
import { testRun } from "../../../../../../test/helpers/workflows/block-run.ts";
import { variablesHandler } from "./handler.ts";

describe("the Variables block", () => {
  it("sets workflow variables and outputs them", () => {
    const variables = new Map<string, unknown>([["kept", 1]]);
    const output = variablesHandler.execute(testRun({ assignments: [{ name: "a", value: { x: 1 } }, { name: "b", value: undefined }] }, { variables }));
    expect(output).toEqual({ a: { x: 1 }, b: null });
    expect(Object.fromEntries(variables)).toEqual({ kept: 1, a: { x: 1 }, b: null });
  });
});
