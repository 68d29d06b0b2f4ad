import { describe, expect, it } from "vitest";
import { testRun } from "../../../../../../test/helpers/workflows/block-run.ts";
import { scheduleTriggerHandler } from "./handler.ts";

const clock = { now: () => Date.parse("2026-01-01T01:00:02Z"), sleep: () => Promise.resolve() };

describe("the schedule trigger", () => {
  it("reports a schedule tick", () => {
    const run = testRun({ cronExpression: " 0 * * * * " }, { trigger: { kind: "schedule", input: { scheduledFor: "2026-01-01T01:00:00.000Z" } } });
    const output = scheduleTriggerHandler.execute({ ...run, services: { ...run.services, clock } });
    expect(output).toEqual({ scheduledFor: "2026-01-01T01:00:00.000Z", firedAt: "2026-01-01T01:00:02.000Z", jitterSeconds: 0, cronExpression: "0 * * * *", timezone: "UTC" });
  });

  it("reports the expression, time zone and jitter the ticker fired it with (a preset's expression)", () => {
    const input = { scheduledFor: "2026-01-01T11:00:00+00:00", cronExpression: "0 8 * * *", timezone: "America/Sao_Paulo", jitterSeconds: 2 };
    const run = testRun({ timezone: "America/Sao_Paulo" }, { trigger: { kind: "schedule", input } });
    const output = scheduleTriggerHandler.execute({ ...run, services: { ...run.services, clock } });
    expect(output).toEqual({ ...input, scheduledFor: "2026-01-01T11:00:00.000Z", firedAt: "2026-01-01T01:00:02.000Z" });
  });
});
