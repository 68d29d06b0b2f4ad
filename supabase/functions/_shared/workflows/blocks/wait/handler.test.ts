import { describe, expect, it } from "vitest";
import type { Clock } from "../../engine/context.ts";
import { testRun } from "../test-run.ts";
import { waitHandler, waitMs } from "./handler.ts";

describe("the Wait block", () => {
  it("converts units and accepts numeric strings", () => {
    expect(waitMs({ amount: 1.5, unit: "seconds" })).toBe(1500);
    expect(waitMs({ amount: "2", unit: "minutes" })).toBe(120_000);
  });

  it("refuses bad amounts and anything past 5 minutes", () => {
    expect(() => waitMs({ amount: "soon", unit: "ms" })).toThrow("must be a number");
    expect(() => waitMs({ amount: -1, unit: "ms" })).toThrow("at least 0");
    expect(() => waitMs({ amount: 6, unit: "minutes" })).toThrow(expect.objectContaining({ code: "LIMIT_EXCEEDED" }));
  });

  it("sleeps on the injected clock and reports the wait", async () => {
    const slept: number[] = [];
    const clock: Clock = { now: () => 0, sleep: (ms) => (slept.push(ms), Promise.resolve()) };
    const run = testRun({ amount: 3, unit: "seconds" as const });
    const output = await waitHandler.execute({ ...run, services: { ...run.services, clock } });
    expect(output).toEqual({ waitDuration: 3000, status: "completed" });
    expect(slept).toEqual([3000]);
    expect(waitHandler.timeoutMs({ amount: 3, unit: "seconds" })).toBe(8000);
  });
});
