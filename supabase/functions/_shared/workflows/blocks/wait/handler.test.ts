import { describe, expect, it } from "vitest";
import { testRun } from "../../../../../../test/helpers/workflows/block-run.ts";
import { waitHandler, waitMs } from "./handler.ts";

describe("the Wait block", () => {
  it("converts units and accepts numeric strings", () => {
    expect(waitMs({ amount: 1.5, unit: "seconds" })).toBe(1500);
    expect(waitMs({ amount: "2", unit: "minutes" })).toBe(120_000);
  });

  it("refuses bad amounts, anything past 5 minutes in a synchronous run and past 30 days in an async one", () => {
    expect(() => waitMs({ amount: "soon", unit: "ms" })).toThrow("must be a number");
    expect(() => waitMs({ amount: -1, unit: "ms" })).toThrow("at least 0");
    expect(() => waitMs({ amount: 6, unit: "minutes" })).toThrow(expect.objectContaining({ code: "LIMIT_EXCEEDED" }));
    expect(waitMs({ amount: 30 * 24 * 60, unit: "minutes" }, true)).toBe(30 * 24 * 60 * 60_000);
    expect(() => waitMs({ amount: 30 * 24 * 60 + 1, unit: "minutes" }, true)).toThrow(expect.objectContaining({ code: "LIMIT_EXCEEDED", message: expect.stringContaining("30 day") }));
  });

  it("pauses through the run and reports the wait", async () => {
    const paused: number[] = [];
    const output = await waitHandler.execute(testRun({ amount: 3, unit: "seconds" as const }, { pause: async (ms) => void paused.push(ms) }));
    expect(output).toEqual({ waitDuration: 3000, status: "completed" });
    expect(paused).toEqual([3000]);
    expect(waitHandler.timeoutMs({ amount: 3, unit: "seconds" })).toBe(8000);
  });

  it("takes a 10 minute wait only in a durable run", async () => {
    const tenMinutes = { amount: 10, unit: "minutes" as const };
    await expect(waitHandler.execute(testRun(tenMinutes, { pause: async () => {} }))).rejects.toMatchObject({ code: "LIMIT_EXCEEDED" });
    await expect(waitHandler.execute(testRun(tenMinutes, { durable: true, pause: async () => {} }))).resolves.toEqual({ waitDuration: 600_000, status: "completed" });
  });
});
