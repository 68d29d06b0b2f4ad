import { describe, expect, it } from "vitest";
import { Cancellation } from "./cancellation.ts";

describe("the cancellation tree", () => {
  it("aborts everything below a node, with its reason", () => {
    const run = new Cancellation();
    const scope = new Cancellation(run);
    const controller = scope.controller();
    run.abort("timeout");
    expect([scope.aborted, scope.reason, controller.signal.aborted, controller.signal.reason]).toEqual([true, "timeout", true, "timeout"]);
  });

  it("leaves parents and siblings alone", () => {
    const run = new Cancellation();
    const left = new Cancellation(run);
    const right = new Cancellation(run);
    left.abort("failed");
    expect([run.aborted, right.aborted]).toEqual([false, false]);
  });

  it("aborts late children at once and ignores a second abort", () => {
    const run = new Cancellation();
    run.abort("first");
    run.abort("second");
    expect(new Cancellation(run).reason).toBe("first");
    expect(run.controller().signal.aborted).toBe(true);
  });

  it("forgets finished work", () => {
    const run = new Cancellation();
    const scope = new Cancellation(run);
    const controller = scope.controller();
    scope.detach(controller);
    scope.release();
    run.abort("late");
    expect([scope.aborted, controller.signal.aborted]).toEqual([false, false]);
  });
});
