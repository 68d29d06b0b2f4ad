import { describe, expect, it } from "vitest";
import { DEFAULT_WALL_CLOCK_MS, RUN_TIME_MARGIN_MS, runTimeBudgets } from "./time-budget.ts";

const env = (values: Record<string, string>) => (name: string) => values[name];

describe("run time budgets", () => {
  it("fit a run inside the free plan's 150 s wall clock by default, with a margin", () => {
    expect(runTimeBudgets(env({}))).toEqual({ wallClockMs: DEFAULT_WALL_CLOCK_MS, ceilingMs: 140_000, syncMs: 140_000, asyncMs: 140_000 });
  });

  it("follow the host's wall clock (400 s on paid plans)", () => {
    expect(runTimeBudgets(env({ FUNCTIONS_WALL_CLOCK_MS: "400000" }))).toMatchObject({ syncMs: 400_000 - RUN_TIME_MARGIN_MS });
  });

  it("take a shorter synchronous limit, never a longer one", () => {
    expect(runTimeBudgets(env({ WORKFLOW_SYNC_TIMEOUT_MS: "8000" }))).toMatchObject({ syncMs: 8_000, asyncMs: 140_000 });
    expect(runTimeBudgets(env({ WORKFLOW_SYNC_TIMEOUT_MS: "600000", WORKFLOW_ASYNC_TIMEOUT_MS: "60000" }))).toMatchObject({ syncMs: 140_000, asyncMs: 60_000 });
  });

  it("ignore settings that are not positive whole numbers", () => {
    expect(runTimeBudgets(env({ FUNCTIONS_WALL_CLOCK_MS: "soon", WORKFLOW_SYNC_TIMEOUT_MS: "-5" }))).toMatchObject({ wallClockMs: DEFAULT_WALL_CLOCK_MS, syncMs: 140_000 });
  });
});
