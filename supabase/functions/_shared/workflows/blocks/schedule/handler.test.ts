import { describe, expect, it } from "vitest";
import { testRun } from "../test-run.ts";
import { scheduleTriggerHandler } from "./handler.ts";

describe("the schedule trigger", () => {
  it("reports a schedule tick", () => {
    const run = testRun({ cronExpression: " 0 * * * * " }, { trigger: { kind: "schedule", input: { scheduledFor: "2026-01-01T01:00:00.000Z" } } });
    const output = scheduleTriggerHandler.execute({ ...run, services: { ...run.services, clock: { now: () => Date.parse("2026-01-01T01:00:02Z"), sleep: () => Promise.resolve() } } });
    expect(output).toEqual({ scheduledFor: "2026-01-01T01:00:00.000Z", firedAt: "2026-01-01T01:00:02.000Z", cronExpression: "0 * * * *", timezone: "UTC" });
  });
});
