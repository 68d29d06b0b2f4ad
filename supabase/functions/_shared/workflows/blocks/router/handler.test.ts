import { describe, expect, it } from "vitest";
import { jsonEqual, routerHandler } from "./handler.ts";
import { testRun } from "../../../../../../test/helpers/workflows/block-run.ts";

describe("the Router block", () => {
  it("takes the first route whose rule matches", async () => {
    const output = await routerHandler.execute(testRun({ value: 7, routes: [{ id: "small", operator: "lt", operand: 5 }, { id: "mid", title: "Middle", operator: "lte", operand: 10 }, { id: "any", operator: "default" }] }));
    expect(output).toEqual({ value: 7, selectedRoute: "mid", routeTitle: "Middle", selectedPath: null });
  });

  it("fails with NO_ROUTE when nothing matches", async () => {
    await expect(routerHandler.execute(testRun({ value: "x", routes: [{ id: "a", operator: "equals", operand: "y" }] }))).rejects.toMatchObject({ code: "NO_ROUTE" });
  });

  it("runs `matches` in the sandbox, so a catastrophic pattern only times out", async () => {
    const run = testRun({ value: `${"a".repeat(40)}!`, routes: [{ id: "evil", operator: "matches", operand: "^(a+)+$" }] }, { deadline: Date.now() + 100 });
    await expect(routerHandler.execute(run)).rejects.toMatchObject({ code: "SANDBOX_TIMEOUT" });
  });

  it("refuses a non-string pattern", async () => {
    await expect(routerHandler.execute(testRun({ value: "x", routes: [{ id: "a", operator: "matches", operand: 5 }] }))).rejects.toThrow("regular expression string");
  });
});

describe("jsonEqual", () => {
  it("compares JSON values structurally", () => {
    expect(jsonEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toBe(true);
    expect(jsonEqual({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(true);
    expect(jsonEqual([1], { 0: 1 })).toBe(false);
    expect(jsonEqual({ a: undefined }, { b: undefined })).toBe(false);
    expect(jsonEqual(1, "1")).toBe(false);
  });
});
